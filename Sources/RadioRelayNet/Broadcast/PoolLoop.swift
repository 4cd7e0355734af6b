import CLinux
import Dispatch
import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// One loop of a `NetworkPool`, on its own thread: the `EventLoopHandler` that carries the skeleton's events to
/// each output's share (`NetworkLoop`): the connections accepted on the listening sockets it is home to (each
/// assigned to the loop with the fewest, this one or another), its two wake-ups — pages published on some output,
/// commands queued (outputs attached or detached, listeners handed over, settings changed, the stop) — and its
/// listeners' socket events, by descriptor.
package final class PoolLoop: WakeUpHandler {
    /// The commands' wake-up source: the second eventfd (the first, pages published, needs no handling of its own).
    static let controlSource = 1

    package let member: PoolMember
    let pool: NetworkPool
    package let loop: EventLoop
    /// The outputs it serves (every output attached to the pool), and those whose listening socket it accepts on.
    package private(set) var outputs: [NetworkLoop] = []
    private var homes: [Int32: NetworkLoop] = [:]
    /// The output each listener descriptor belongs to.
    private var owners: [NetworkLoop?] = []
    /// Listeners it serves now, of every output.
    package private(set) var listenerCount = 0
    /// The process's listeners (every loop's) when the outputs' intervals were last set: what `flush_ms = auto`
    /// follows.
    package private(set) var audience = 0

    init(member: PoolMember, pool: NetworkPool) throws(SystemError) {
        self.member = member
        self.pool = pool
        loop = try EventLoop(
            label: member.name, listenFD: nil, wakeFDs: [member.published.rawValue, member.control.rawValue],
            acceptBatch: NetworkLoop.acceptBatch, tick: 500, activity: member.activity)
        // The PROXY header of an output behind balancers: asked for each connection, by the socket it came through
        // (a reload applies to the next one); a connection closed for it counts against that output.
        loop.arrivals = ProxyStage(
            capacity: 1024, expected: { [unowned self] in homes[$0]?.expectedProxies },
            refused: { [unowned self] _, listening in
                homes[listening]?.counters.proxyRejected.add(1, ordering: .relaxed)
            })
    }

    /// Serves until `thread` is asked to stop; every iteration (at least one per half second) beats its heartbeat.
    /// A failing `epoll_wait` is thrown: the loop cannot go on, and the thread's owner decides what follows.
    func run(in thread: ServiceThread) throws {
        defer {
            takeCommands()  // a detach queued before the stop is answered
            for output in outputs { output.closeAll() }
            loop.logSummaries(now: .infinity)  // what the rate limit left out, counted before the last line
        }
        try loop.run(in: thread, self)
    }

    // MARK: Listeners' descriptors

    /// `fd` is a listener of `output` on this loop from now on.
    func own(_ fd: Int32, _ output: NetworkLoop) {
        let slot = Int(fd)
        if slot >= owners.count { owners += Array(repeating: nil, count: slot + 1 - owners.count + 64) }
        owners[slot] = output
        listenerCount += 1
        member.listeners.store(listenerCount, ordering: .relaxed)
    }

    /// `fd`'s listener left (its assignment to this loop ends).
    func disown(_ fd: Int32) {
        let slot = Int(fd)
        guard slot >= 0, slot < owners.count, owners[slot] != nil else { return }
        owners[slot] = nil
        listenerCount -= 1
        member.listeners.store(listenerCount, ordering: .relaxed)
        member.assigned.subtract(1, ordering: .relaxed)
    }

    /// `fd`'s listener is `output`'s from now on (moved to it on this loop: its assignment stays).
    func reassign(_ fd: Int32, to output: NetworkLoop) {
        let slot = Int(fd)
        guard slot >= 0, slot < owners.count, owners[slot] != nil else { return }
        owners[slot] = output
    }

    private func owner(_ fd: Int32) -> NetworkLoop? {
        guard fd >= 0, Int(fd) < owners.count else { return nil }
        return owners[Int(fd)]
    }

    // MARK: Commands

    private func takeCommands() {
        for command in member.takeCommands() {
            switch command {
            case .attach(let broadcaster, let home):
                attach(broadcaster, home: home)
            case .detach(let broadcaster, let done):
                detach(broadcaster)
                done.signal()
            case .arrive(let broadcaster, let arrival):
                guard let output = outputs.first(where: { $0.broadcaster === broadcaster }) else {
                    // Its output stopped meanwhile (`attach` makes sure it started first): the socket closes with
                    // `arrival`.
                    member.assigned.subtract(1, ordering: .relaxed)
                    Log.debug("\(broadcaster.name): an arriving listener found the output stopped; closed")
                    continue
                }
                output.admit(arrival)
            case .kick(let broadcaster, let id):
                outputs.first { $0.broadcaster === broadcaster }?.kick(id)
            case .move(let from, let to, let id, let tally):
                if let source = outputs.first(where: { $0.broadcaster === from }),
                    let destination = outputs.first(where: { $0.broadcaster === to })
                {
                    source.move(to: destination, id: id, tally: tally)
                }
                tally.loopDone()
            }
        }
    }

    private func attach(_ broadcaster: Broadcaster, home: Bool) {
        guard !outputs.contains(where: { $0.broadcaster === broadcaster }) else { return }
        let output = NetworkLoop(broadcaster: broadcaster, host: self)
        output.refresh()
        outputs.append(output)
        guard home, let fd = broadcaster.listenFD else { return }
        do {
            try loop.addListening(fd)
            homes[fd] = output
            Log.info("\(broadcaster.name): listening on \(broadcaster.address) (network loop \(member.name))")
        } catch {
            // Its HTTP mount still works through the other loops; raw TCP listeners wait in the backlog.
            Log.error("\(broadcaster.name): cannot accept on \(broadcaster.address): \(error)")
        }
    }

    private func detach(_ broadcaster: Broadcaster) {
        guard let index = outputs.firstIndex(where: { $0.broadcaster === broadcaster }) else { return }
        let output = outputs.remove(at: index)
        if let fd = broadcaster.listenFD, homes[fd] === output {
            loop.removeListening(fd)
            homes[fd] = nil
            Log.info("\(broadcaster.name): stopped listening")
        }
        output.closeAll()
    }

    // MARK: Events

    package func accepted(
        _ socket: consuming FileDescriptor, peer: SocketAddress, via: ArrivalPath, on listening: Int32
    ) {
        guard let output = homes[listening] else { return }  // its output stopped: the socket closes here
        if case .local = via {
            // The balancer's own connection (a health check of this port): it has its answer, the close.
            if Log.isEnabled(.debug) { Log.debug("\(output.name): PROXY LOCAL connection from \(peer) closed") }
            return
        }
        let target = pool.assign()
        if target === member {
            output.accepted(socket, peer: peer)
            return
        }
        let arrival = ArrivingListener(socket: socket, peer: peer, responseHead: [], kind: .tcp)
        guard pool.handOver(arrival, of: output.broadcaster, to: target) else {
            output.counters.connections.add(1, ordering: .relaxed)
            output.counters.rejected.add(1, ordering: .relaxed)
            output.logLimited(
                .refused, .notice, now: monotonicNow(),
                "\(output.name): tcp listener \(peer) refused: network loop \(target.name) is far behind")
            return
        }
    }

    /// The "published" wake-up needs nothing more: each output's `settle` sees whether its own publication count
    /// moved.
    package func woken(_ source: Int) {
        if source == Self.controlSource { takeCommands() }
    }

    package func ready(_ fd: Int32, mask: UInt32) {
        owner(fd)?.ready(fd, mask: mask)
    }

    package func expired(_ fd: Int32, now: Double) {
        owner(fd)?.expired(fd, now: now)
    }

    package func prepare(now: Double) -> Double? {
        var earliest: Double?
        let listeners = pool.listeners
        let retune = listeners != audience
        audience = listeners
        for output in outputs {
            if retune { output.retune() }
            if let due = output.prepare(now: now) { earliest = min(earliest ?? due, due) }
        }
        return earliest
    }

    package func awake() {
        for output in outputs { output.awake() }
    }

    package func settle() {
        for output in outputs { output.settle() }
    }
}

@available(*, unavailable) extension PoolLoop: Sendable {}
