import CLinux
import Glibc
import RadioRelay
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// The load loop: opens the connections on a ramp, reads and checks everything they receive, throttles the slow
/// ones, and stops after the duration. One thread, one epoll set, level-triggered; connection i's epoll tag is i.
final class LoadRun {
    static let bufferSize = 64 * 1024
    private static let maxEvents = 256

    let options: LoadOptions
    let address: LoopbackAddress
    let connections: UnsafeMutablePointer<Connection>
    let count: Int
    /// One `OggStreamCheck.slabSize` header slab per connection (also holds the start of an HTTP response).
    let slabs: UnsafeMutablePointer<UInt8>
    let buffer: UnsafeMutablePointer<UInt8>
    let epoll: Int32
    let request: [UInt8]
    /// IPv4 source addresses the connections are spread over (`--sources`), each bound without a port
    /// (`IP_BIND_ADDRESS_NO_PORT`: connect() picks the port per 4-tuple). From one address, connect()'s search for a
    /// free ephemeral port to one destination walks every port in use once the even half of `ip_local_port_range`
    /// (14 116 of 32768–60999) is taken: at 19 000 listeners the tool's connects took both cores.
    let sources: [SocketAddress]
    var events = [UInt32](repeating: 0, count: LoadRun.maxEvents)
    var tags = [UInt64](repeating: 0, count: LoadRun.maxEvents)
    var paused: [Int] = []
    var started = 0
    var connecting = 0
    let slowRate: Double
    let slowCapacity: Double
    let slowResume: Double
    var startTime = 0.0
    var endTime = 0.0

    init(options: LoadOptions) throws {
        self.options = options
        address = LoopbackAddress(host: options.host, port: UInt16(options.port))!
        count = options.count
        connections = .allocate(capacity: count)
        for i in 0..<count {
            // Slow listeners are spread evenly over the ramp rather than bunched at one end.
            let slow = (i + 1) * options.slowCount / count != i * options.slowCount / count
            (connections + i).initialize(to: Connection(slow: slow, checkStart: options.checkStart))
        }
        slabs = .allocate(capacity: count * OggStreamCheck.slabSize)
        buffer = .allocate(capacity: Self.bufferSize)
        epoll = rr_epoll_create()
        guard epoll >= 0 else { throw SystemError("epoll_create1") }
        if let path = options.httpPath {
            let icy = options.icyMetadata ? "Icy-MetaData: 1\r\n" : ""
            request = Array(
                "GET \(path) HTTP/1.0\r\nHost: \(address.hostHeader)\r\nUser-Agent: radio-relay-load\r\n\(icy)\r\n".utf8
            )
        } else {
            request = []
        }
        // Loopback only: a target in a network namespace is reached from the namespace's own address.
        sources =
            address.address.family == AF_INET && address.address.isLoopback && options.sources > 1
            ? (1...options.sources).compactMap { SocketAddress(host: "127.0.0.\($0)", port: 0) } : []
        slowRate = options.slowReadRate
        slowCapacity = max(slowRate / 8, 1024)
        slowResume = min(slowCapacity, 512)
    }

    deinit {
        for i in 0..<count where connections[i].fd >= 0 { close(connections[i].fd) }
        connections.deinitialize(count: count)
        connections.deallocate()
        slabs.deallocate()
        buffer.deallocate()
        close(epoll)
    }

    func run() {
        startTime = now()
        let end = startTime + options.duration
        let rate = options.ramp.map { $0 > 0 ? Double(count) / $0 : .infinity } ?? LoadOptions.maxConnectRate
        var lastRefill = startTime
        var lastTimeoutScan = startTime
        var t = startTime
        while t < end {
            if started < count {
                let due = rate.isInfinite ? count : min(count, Int((t - startTime) * rate) + 1)
                var budget = 256  // keep serving events while a big ramp runs
                while started < due && budget > 0 {
                    start(started, now: t)
                    started += 1
                    budget -= 1
                }
            }
            var timeout = started < count ? 1 : (paused.isEmpty ? 100 : 10)
            timeout = max(0, min(timeout, Int(((end - t) * 1000).rounded(.up))))
            let n = events.withUnsafeMutableBufferPointer { e in
                tags.withUnsafeMutableBufferPointer { g in
                    rr_epoll_wait(epoll, e.baseAddress, g.baseAddress, Int32(e.count), Int32(timeout))
                }
            }
            if n < 0 && errno != EINTR {
                printError("radio-relay-load: epoll_wait: \(SystemError("epoll_wait"))")
                break
            }
            t = now()
            for k in 0..<max(0, Int(n)) { handle(Int(tags[k]), mask: events[k], now: t) }
            if !paused.isEmpty && t - lastRefill >= 0.01 {
                resumePaused(now: t)
                lastRefill = t
            }
            if connecting > 0 && t - lastTimeoutScan >= 0.1 {
                expireConnects(now: t)
                lastTimeoutScan = t
            }
        }
        endTime = min(t, end)
        for i in 0..<count where connections[i].fd >= 0 {
            close(connections[i].fd)
            connections[i].fd = -1
            if connections[i].state == .connecting {
                connections[i].outcome = .connectFailed
                fail(i, "connect not done at the end")
            }
            connections[i].state = .closed
        }
    }

    // MARK: Connecting

    func start(_ i: Int, now t: Double) {
        let c = connections + i
        c.pointee.startedAt = t
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let fd = socket(address.address.family, type, 0)
        guard fd >= 0 else {
            c.pointee.outcome = .connectFailed
            c.pointee.state = .closed
            return fail(i, "socket: \(String(cString: strerror(errno)))")
        }
        c.pointee.fd = fd
        if c.pointee.slow && options.slowReceiveBuffer > 0 {
            var size = Int32(options.slowReceiveBuffer)
            guard setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
                radio_relay_load.fail("setsockopt SO_RCVBUF: \(String(cString: strerror(errno)))", code: 1)
            }
        }
        if !sources.isEmpty {
            var one: Int32 = 1
            let noPort = Int32(24)  // IP_BIND_ADDRESS_NO_PORT (linux/in.h), not in Glibc's module
            _ = setsockopt(fd, Int32(IPPROTO_IP), noPort, &one, socklen_t(MemoryLayout<Int32>.size))
            guard sources[i % sources.count].withSockaddr({ bind(fd, $0, $1) }) == 0 else {
                return connectFailed(i, "bind: \(String(cString: strerror(errno)))")
            }
        }
        let result = address.address.withSockaddr { connect(fd, $0, $1) }
        if result == 0 {
            guard register(i, EPOLL_CTL_ADD, EPOLLOUT.rawValue) else { return }
            connected(i, now: t)
        } else if errno == EINPROGRESS {
            guard register(i, EPOLL_CTL_ADD, EPOLLOUT.rawValue) else { return }
            c.pointee.state = .connecting
            connecting += 1
        } else {
            connectFailed(i, "connect: \(String(cString: strerror(errno)))")
        }
    }

    func connected(_ i: Int, now t: Double) {
        let c = connections + i
        if c.pointee.state == .connecting { connecting -= 1 }
        c.pointee.connectedAt = t
        c.pointee.tokens = slowCapacity
        c.pointee.refilledAt = t
        if request.isEmpty {
            c.pointee.state = .open
            c.pointee.httpMatch = 4
            _ = register(i, EPOLL_CTL_MOD, EPOLLIN.rawValue | EPOLLRDHUP.rawValue)
        } else {
            c.pointee.state = .requesting
            sendRequest(i, now: t)
        }
    }

    func sendRequest(_ i: Int, now t: Double) {
        let c = connections + i
        while c.pointee.requestSent < request.count {
            let n = request.withUnsafeBytes {
                write(c.pointee.fd, $0.baseAddress! + c.pointee.requestSent, $0.count - c.pointee.requestSent)
            }
            if n > 0 {
                c.pointee.requestSent += n
                continue
            }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }  // EPOLLOUT stays armed
            return disconnected(i, now: t, "request write failed: \(String(cString: strerror(errno)))")
        }
        c.pointee.state = .open
        _ = register(i, EPOLL_CTL_MOD, EPOLLIN.rawValue | EPOLLRDHUP.rawValue)
    }

    func expireConnects(now t: Double) {
        for i in 0..<started where connections[i].state == .connecting {
            if t - connections[i].startedAt > options.connectTimeout {
                connectFailed(i, "connect timed out after \(options.connectTimeout) s")
            }
        }
    }

    func connectFailed(_ i: Int, _ reason: String) {
        let c = connections + i
        if c.pointee.state == .connecting { connecting -= 1 }
        c.pointee.outcome = .connectFailed
        closeConnection(i)
        fail(i, reason)
    }

    @discardableResult
    func register(_ i: Int, _ op: Int32, _ mask: UInt32) -> Bool {
        guard rr_epoll_ctl(epoll, op, connections[i].fd, mask, UInt64(i)) == 0 else {
            let reason = "epoll_ctl: \(String(cString: strerror(errno)))"
            if connections[i].state == .open { disconnected(i, now: now(), reason) } else { connectFailed(i, reason) }
            return false
        }
        return true
    }
}
