import CLinux
import Dispatch
import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// A server's station network loops (a `Service` of its group, started first and stopped last): `network_threads`
/// threads, each one `EventLoop` serving listeners of
/// any output, so that one station's audience spreads over every core and twenty stations do not make twenty times
/// as many threads. Each output's listening socket is accepted on by one loop (its home, chosen in turn); every new
/// listener, raw or HTTP, goes to the loop with the fewest connections assigned at that moment, so the loops stay
/// within a connection of each other. Each loop keeps its own view of every output's page ring (one lock per
/// refresh, never one per listener); limits that span loops (`max_listeners`, `max_per_ip`) are the Broadcaster's.
package final class NetworkPool: Service {
    package let members: [PoolMember]
    package let label: String
    package var name: String { label }
    private let onUnexpectedExit: @Sendable (String, (any Error)?) -> Void
    /// The next output's home loop.
    private let nextHome = Atomic<Int>(0)
    private let started = Atomic<Bool>(false)

    /// - Parameter label: names the threads (`label-0`, `label-1`, …; one loop: `label`).
    package init(
        threads: Int, label: String = "net",
        onUnexpectedExit: @escaping @Sendable (String, (any Error)?) -> Void = ServiceThread.terminateProcess
    ) throws(SystemError) {
        let count = min(max(1, threads), Self.maxThreads)
        var members: [PoolMember] = []
        for index in 0..<count {
            members.append(try PoolMember(index: index, name: count == 1 ? label : "\(label)-\(index)"))
        }
        self.members = members
        self.label = label
        self.onUnexpectedExit = onUnexpectedExit
    }

    /// More loops than this would cost descriptors and threads for nothing (the unit's `TasksMax=` is 256).
    package static let maxThreads = 64

    /// Starts every loop (once).
    package func start() throws {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        for member in members {
            let started = ServiceThread(name: member.name, onUnexpectedExit: onUnexpectedExit) { [member] thread in
                let loop = try PoolLoop(member: member, pool: self)
                try loop.run(in: thread)
            }
            try member.thread.start(started)
        }
    }

    /// Stops every loop (each closes its listeners); false when one outlived `timeout` seconds.
    @discardableResult
    package func stop(timeout: Double = 10) -> Bool {
        var joined = true
        for member in members where !member.thread.stop(timeout: timeout, waking: member.control, label: member.name) {
            joined = false
        }
        return joined
    }

    /// Listeners served now, by every loop (one relaxed load per loop).
    package var listeners: Int { members.reduce(0) { $0 &+ $1.listeners.load(ordering: .relaxed) } }

    /// Every loop's heartbeat, for the watchdog (empty before `start`).
    package var heartbeats: [Int] { members.flatMap(\.thread.heartbeats) }

    // MARK: Outputs

    /// Serves `broadcaster` on every loop from now on; its listening socket is accepted on by one of them, its home.
    /// The home is told last: once it accepts, it hands listeners to the other loops, and each of them must have the
    /// output before the first arrival in its queue (queues are in order). Told first, the home could accept a
    /// backlog (a socket-activated restart) and hand listeners to a loop that did not have the output yet, which
    /// closed them unserved.
    package func attach(_ broadcaster: Broadcaster) {
        let turn = UInt(bitPattern: nextHome.add(1, ordering: .relaxed).oldValue)  // wraps, never traps
        let home = Int(turn % UInt(members.count))
        for index in members.indices where index != home {
            members[index].post(.attach(broadcaster, home: false), label: broadcaster.name)
        }
        members[home].post(.attach(broadcaster, home: true), label: broadcaster.name)
    }

    /// Stops serving `broadcaster`: every loop closes its listeners and forgets it. Returns once every loop did, or
    /// false after `timeout` seconds.
    package func detach(_ broadcaster: Broadcaster, timeout: Double) -> Bool {
        let done = DispatchSemaphore(value: 0)
        for member in members { member.post(.detach(broadcaster, done: done), label: broadcaster.name) }
        let deadline = DispatchTime.now() + timeout
        for _ in members where done.wait(timeout: deadline) == .timedOut { return false }
        return true
    }

    /// Wakes every loop for pages `broadcaster` published.
    package func published(by broadcaster: Broadcaster) {
        for member in members { member.signal(member.published, "pages", label: broadcaster.name) }
    }

    /// Wakes every loop to take new settings.
    package func settingsChanged(for broadcaster: Broadcaster) {
        for member in members { member.signal(member.control, "new settings", label: broadcaster.name) }
    }

    /// The loop a new listener goes to: the one with the fewest connections assigned (the first of those tied),
    /// counted as assigned at once, so that a burst of arrivals spreads before any of them is admitted.
    package func assign() -> PoolMember {
        var chosen = members[0]
        var fewest = chosen.assigned.load(ordering: .relaxed)
        for member in members.dropFirst() {
            let count = member.assigned.load(ordering: .relaxed)
            if count < fewest {
                chosen = member
                fewest = count
            }
        }
        chosen.assigned.add(1, ordering: .relaxed)
        return chosen
    }

    /// Asks every loop to close `broadcaster`'s listener `id` (the one that serves it does; the others find none).
    /// False when a loop's queue is full: that loop is far behind, and the kick is not queued there.
    package func kick(_ id: ListenerID, of broadcaster: Broadcaster) -> Bool {
        var queued = true
        for member in members where !member.post(.kick(broadcaster, id), label: broadcaster.name, bounded: true) {
            queued = false
        }
        return queued
    }

    /// Asks every loop to move `source`'s listeners (all, or `id`) to `destination`, counting them in `tally`, which
    /// is answered once every loop did. False when a loop's queue is full (the loops that took it still move theirs).
    package func move(
        from source: Broadcaster, to destination: Broadcaster, id: ListenerID?, tally: MoveTally
    ) -> Bool {
        var queued = true
        for member in members {
            if !member.post(.move(source, destination, id, tally), label: source.name, bounded: true) {
                queued = false
                tally.loopDone()
            }
        }
        return queued
    }

    /// Hands a listener to the loop `assign` chose (false: its queue is full; the assignment is taken back).
    package func handOver(_ arrival: ArrivingListener, of broadcaster: Broadcaster, to member: PoolMember) -> Bool {
        guard member.post(.arrive(broadcaster, arrival), label: broadcaster.name, bounded: true) else {
            member.assigned.subtract(1, ordering: .relaxed)
            return false
        }
        return true
    }
}

/// One loop of a `NetworkPool`: its wake-ups, its queue of commands, and how many connections it was given.
package final class PoolMember: Sendable {
    package let index: Int
    package let name: String
    /// "Pages were published on some output" and "a command is queued" (or the stop).
    package let published: EventFD
    package let control: EventFD
    private let inbox = LockedBox<[PoolCommand]>([])
    /// Connections assigned to this loop and not yet gone (admitted, or on their way to it).
    package let assigned = Atomic<Int>(0)
    /// Listeners it serves now (all outputs).
    package let listeners = Atomic<Int>(0)
    package let activity = LoopActivity()
    package let thread = LoopThread()

    /// Commands queued at most (arrivals beyond it are refused: the loop is far behind).
    package static let inboxLimit = 4096

    init(index: Int, name: String) throws(SystemError) {
        self.index = index
        self.name = name
        published = try EventFD()
        control = try EventFD()
    }

    /// Queues a command and wakes the loop. A `bounded` one (an arrival) is refused when the queue is full;
    /// attaching and detaching always go in.
    @discardableResult
    func post(_ command: PoolCommand, label: String, bounded: Bool = false) -> Bool {
        let queued = inbox.withLock { queue in
            guard !bounded || queue.count < Self.inboxLimit else { return false }
            queue.append(command)
            return true
        }
        if queued { signal(control, "a command", label: label) }
        return queued
    }

    /// The commands queued since the last call, oldest first (on the loop's thread).
    func takeCommands() -> [PoolCommand] {
        inbox.withLock { queue in
            guard !queue.isEmpty else { return [] }
            defer { queue.removeAll(keepingCapacity: true) }
            return queue
        }
    }

    func signal(_ event: borrowing EventFD, _ what: String, label: String) {
        do {
            try event.signal()
        } catch {
            Log.warning("\(label): cannot wake network loop \(name) for \(what): \(error)")
        }
    }
}

/// What a loop is asked to do from another thread.
enum PoolCommand: @unchecked Sendable {
    /// Serve this output; `home`: accept on its listening socket too.
    case attach(Broadcaster, home: Bool)
    /// Close its listeners, forget it, and signal `done`.
    case detach(Broadcaster, done: DispatchSemaphore)
    /// Admit this listener to that output.
    case arrive(Broadcaster, ArrivingListener)
    /// Close that output's listener with this ID, if this loop serves it (an admin's `killclient`).
    case kick(Broadcaster, ListenerID)
    /// Move the first output's listeners (all, or the one with this ID) that this loop serves to the second, and
    /// count them in the tally (an admin's `moveclients`).
    case move(Broadcaster, Broadcaster, ListenerID?, MoveTally)
}

/// How many network loops `network_threads` means when it is not set: the CPUs this process may run on (its
/// affinity mask), and fewer when a CPU quota (`CPUQuota=`: cgroup v2 `cpu.max`) allows fewer cores' worth.
package enum NetworkThreads {
    package static func automatic() -> Int {
        let cpus = Int(rr_affinity_cpu_count())
        let quota = cgroupQuota()
        return max(1, min(cpus > 0 ? cpus : 1, quota ?? Int.max))
    }

    /// Whole cores a `cpu.max` line allows ("max 100000": no limit; "150000 100000": 1.5, so 2), or nil.
    package static func cores(cpuMax line: String) -> Int? {
        let fields = line.split(separator: " ")
        guard fields.count == 2, fields[0] != "max", let quota = Double(fields[0]), let period = Double(fields[1]),
            quota > 0, period > 0, quota.isFinite, period.isFinite
        else { return nil }
        let cores = (quota / period).rounded(.up)
        return cores < 4096 ? max(1, Int(cores)) : nil
    }

    /// The quota of this process's cgroup (v2), from `/proc/self/cgroup` ("0::/PATH") and `cpu.max` there.
    static func cgroupQuota() -> Int? {
        guard let membership = readSmallFile("/proc/self/cgroup"),
            let line = membership.split(separator: "\n").first(where: { $0.hasPrefix("0::") })
        else { return nil }
        let path = String(line.dropFirst(3))
        guard !path.contains(".."),
            let cpuMax = readSmallFile("/sys/fs/cgroup\(path == "/" ? "" : path)/cpu.max")
        else { return nil }
        return cores(cpuMax: String(cpuMax.prefix { $0 != "\n" }))
    }

    private static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return String(decoding: buffer.prefix(count), as: UTF8.self)
    }
}
