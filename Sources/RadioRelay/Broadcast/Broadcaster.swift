import CLinux
import Foundation
import Glibc
import Synchronization

/// Broadcaster: published pages → bytes on every listener's socket, over raw TCP.
///
/// One network thread runs an epoll loop over the listening socket, an eventfd that the pipeline signals after each
/// publish, and the listeners' non-blocking sockets. Pages are never copied per listener: each listener is a cursor
/// into the shared `PageRing`, and one `writev` sends several pages straight from the ring. A listener is written
/// at most every `flushInterval` (listeners' phases differ, so the writes spread over time), and `EPOLLOUT` is armed
/// only while its socket is backed up, so no listener can block or slow another.
public final class Broadcaster: Sendable {
    public let configuration: BroadcasterConfiguration
    public let counters = BroadcasterCounters()
    public let ring: PageRing
    /// Where it listens (the port is the real one when 0 was asked for).
    public let address: SocketAddress
    let name: String
    private let listenFD: Int32
    private let wakeFD: Int32
    private let stopping = Atomic<Bool>(false)
    /// True while no network thread runs.
    private let finished = LockedBox<Bool>(true)

    /// Binds and listens now, so that a taken port fails here; `start()` begins serving.
    /// - Parameter adoptedSocket: an already listening socket (systemd socket activation) instead of binding.
    public init(name: String, configuration: BroadcasterConfiguration, ring: PageRing, adoptedSocket: Int32? = nil) throws {
        try configuration.validate()
        self.name = name
        self.configuration = configuration
        self.ring = ring
        let fd: Int32
        if let adoptedSocket {
            fd = adoptedSocket
            let flags = fcntl(fd, F_GETFL)
            _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        } else {
            fd = try Self.listen(configuration)
        }
        guard let local = SocketAddress(localOf: fd) else {
            let error = SystemError("getsockname")
            close(fd)
            throw error
        }
        address = local
        listenFD = fd
        wakeFD = rr_eventfd()
        guard wakeFD >= 0 else {
            close(fd)
            throw SystemError("eventfd")
        }
    }

    deinit {
        close(listenFD)
        close(wakeFD)
    }

    private static func listen(_ configuration: BroadcasterConfiguration) throws -> Int32 {
        guard let address = SocketAddress(host: configuration.bind, port: UInt16(configuration.port)) else {
            throw ConfigurationError("bind address \(configuration.bind) is not an IPv4 or IPv6 address")
        }
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
                        | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError("socket") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        let bound = address.withSockaddr { bind(fd, $0, $1) }
        guard bound == 0 else {
            let error = SystemError("bind \(address)")
            close(fd)
            throw error
        }
        // A large backlog: a crowd reconnecting at once must not wait on SYN retries (Icecast's backlog is 5).
        guard Glibc.listen(fd, 4096) == 0 else {
            let error = SystemError("listen \(address)")
            close(fd)
            throw error
        }
        return fd
    }

    /// Starts the network thread.
    public func start() {
        finished.withLock { $0 = false }
        let thread = Thread { [self] in
            do {
                let loop = try NetworkLoop(broadcaster: self, listenFD: listenFD, wakeFD: wakeFD)
                loop.run(until: stopping)
            } catch {
                Log.error("\(name): network loop failed: \(error)")
            }
            finished.withLock { $0 = true }
        }
        thread.name = "net-\(name)"
        thread.start()
    }

    /// Tells the loop that pages were published.
    func wake() {
        _ = rr_eventfd_signal(wakeFD)
    }

    /// Publishes pages and wakes the loop once for all of them (from the pipeline thread).
    public func publish(_ pages: [OggPage]) {
        guard !pages.isEmpty else { return }
        for page in pages { ring.publish(page) }
        counters.pagesPublished.add(pages.count, ordering: .relaxed)
        wake()
    }

    /// Stops the loop and closes every listener; returns when the thread has finished.
    public func stop() {
        stopping.store(true, ordering: .releasing)
        wake()
        while !finished.snapshot { usleep(2_000) }
    }
}
