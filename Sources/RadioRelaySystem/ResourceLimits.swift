import Glibc
import Synchronization

/// The open-files limit and what it leaves for listeners.
///
/// Each listener is a descriptor. At start-up the server raises the soft `RLIMIT_NOFILE` to the hard limit (the
/// soft default, 1024, would stop a public station at about a thousand listeners), then caps the listeners of all
/// stations together at that limit minus a reserve, so that accepting a listener never takes the descriptor an
/// upstream reconnection, a log write or a new eventfd needs (tests: `AdmissionTests`).
package enum ResourceLimits {
    /// Kept for the process: stdio (3), the journal or log stream, the systemd notify socket, libcurl's shared
    /// resolver, /dev/urandom and similar one-off opens.
    package static let processReserve = 16
    /// Kept per station: its listening socket, the upstream's socket or file, libcurl's resolver thread's pipe and
    /// socket, and spares for a reconnection that overlaps the old connection's close.
    package static let stationReserve = 8
    /// Kept per network loop of the pool: its epoll and its two eventfds.
    package static let loopReserve = 3

    /// Descriptors not available to listeners.
    package static func reserve(stations: Int, loops: Int = 1) -> Int {
        processReserve + stationReserve * max(1, stations) + loopReserve * max(1, min(loops, 4096))
    }

    /// How many listeners all stations together may have under a descriptor limit (pure).
    package static func listenerCeiling(descriptorLimit: Int, stations: Int, loops: Int = 1) -> Int {
        max(0, descriptorLimit - reserve(stations: stations, loops: loops))
    }

    /// The soft and hard `RLIMIT_NOFILE` (an unlimited hard limit reads as `Int.max`).
    package static func descriptorLimits() throws(SystemError) -> (soft: Int, hard: Int) {
        var limit = rlimit()
        _ = try syscall("getrlimit RLIMIT_NOFILE") { getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) }
        return (Int(clamping: limit.rlim_cur), Int(clamping: limit.rlim_max))
    }

    /// Raises the soft `RLIMIT_NOFILE` to the hard one (to `fs.nr_open`, 1 048 576 by default, when the hard limit
    /// is unlimited) and returns the soft limit before and after.
    package static func raiseDescriptorLimit() throws(SystemError) -> (before: Int, after: Int) {
        var limit = rlimit()
        _ = try syscall("getrlimit RLIMIT_NOFILE") { getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) }
        let soft = Int(clamping: limit.rlim_cur)
        let target = limit.rlim_max == rlim_t.max ? max(soft, 1_048_576) : Int(clamping: limit.rlim_max)
        guard target > soft else { return (soft, soft) }
        limit.rlim_cur = rlim_t(target)
        _ = try syscall("setrlimit RLIMIT_NOFILE \(target)") {
            setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        }
        return (soft, target)
    }

    /// The start-up step (`Server.run` calls it once, before the stations start): raises the descriptor limit,
    /// caps the listeners of all stations together in `budget`, and says so in one log line. `configured` is each
    /// station's `maxListeners` (0: no limit). Returns the cap.
    @discardableResult
    package static func apply(configured: [Int], loops: Int = 1, budget: ListenerBudget) -> Int {
        let raised: (before: Int, after: Int)
        do {
            raised = try raiseDescriptorLimit()
        } catch {
            let current = (try? descriptorLimits().soft) ?? 1024
            raised = (current, current)
            Log.warning("cannot raise the open-files limit: \(error)")
        }
        let stations = max(1, configured.count)
        let ceiling = listenerCeiling(descriptorLimit: raised.after, stations: stations, loops: loops)
        let wanted = configured.contains(0) ? Int.max : configured.reduce(0, +)
        let cap = min(wanted, ceiling)
        budget.limit.store(cap, ordering: .relaxed)
        let limit =
            raised.before == raised.after ? "\(raised.after)" : "raised from \(raised.before) to \(raised.after)"
        let listeners =
            wanted <= ceiling
            ? "the \(wanted) listeners configured fit"
            : "listeners capped at \(cap) across \(stations) station\(stations == 1 ? "" : "s")"
        Log.notice(
            "open files: limit \(limit); \(listeners) (\(reserve(stations: stations, loops: loops)) descriptors kept "
                + "for stdio, logs, each station's socket and upstream, and each network loop's epoll and eventfds)")
        return cap
    }
}

/// Listeners open across all stations, against the cap that `ResourceLimits.apply` sets (none until then). Taking
/// a place is one atomic add; a listener that finds no place is refused like one over `maxListeners`. Made once for
/// the process (`Server.serve`) and handed to its server; two servers in one process share one.
package final class ListenerBudget: Sendable {
    package let limit = Atomic<Int>(Int.max)
    package let open = Atomic<Int>(0)

    package init(limit: Int = Int.max) {
        self.limit.store(limit, ordering: .relaxed)
    }

    /// Takes a place; false when all are taken.
    package func acquire() -> Bool {
        let count = open.wrappingAdd(1, ordering: .relaxed).newValue
        if count > limit.load(ordering: .relaxed) {
            open.wrappingSubtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    package func release() {
        open.wrappingSubtract(1, ordering: .relaxed)
    }
}
