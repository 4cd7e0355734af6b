import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// The shell both HTTP servers run in — the status endpoint and the public front end: its listening socket (bound
/// when it is made, so a taken or bad address fails at start-up, or adopted from systemd), the eventfd that wakes its
/// loop for the stop, its thread and heartbeat, and its loop's wake-up count. What runs on the thread is its owner's
/// loop (`StatusLoop`, `HTTPFrontLoop`, each on an `HTTPConnectionLoop`).
package final class HTTPService: Sendable {
    /// Names the thread and log lines: "status", "http".
    package let name: String
    /// Where it listens (the real port when 0 was asked for).
    package let address: SocketAddress
    package let listenSocket: FileDescriptor
    package let wakeEvent: EventFD
    /// The loop's wake-ups (for metrics).
    package let activity = LoopActivity()
    private let thread = LoopThread()
    private let onUnexpectedExit: @Sendable (String, (any Error)?) -> Void

    /// Binds and listens on `address` now (or adopts `adoptedSocket`, already listening).
    package init(
        name: String, address: SocketAddress, adoptedSocket: Int32?, backlog: Int32,
        onUnexpectedExit: @escaping @Sendable (String, (any Error)?) -> Void
    ) throws {
        let socket = try listeningSocket(
            adopting: adoptedSocket, orBinding: address, backlog: backlog, purpose: " (\(name))")
        self.address = try SocketAddress.local(of: socket.rawValue)
        self.name = name
        self.onUnexpectedExit = onUnexpectedExit
        wakeEvent = try EventFD()
        listenSocket = socket
    }

    /// Starts the thread that runs `body` (the owner's loop) until it is asked to stop.
    package func start(_ body: @escaping @Sendable (ServiceThread) throws -> Void) throws {
        try thread.start(ServiceThread(name: name, onUnexpectedExit: onUnexpectedExit, body: body))
    }

    /// Heartbeat of its thread; empty before `start`.
    package var heartbeats: [Int] { thread.heartbeats }

    /// Stops and joins the thread (false: it outlived `timeout`).
    @discardableResult
    package func stop(timeout: Double) -> Bool {
        thread.stop(timeout: timeout, waking: wakeEvent, label: name)
    }
}
