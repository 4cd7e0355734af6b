/// One listener's connection, confined to the network thread. It owns its socket: the descriptor closes when the
/// last reference goes (right after `NetworkLoop.disconnect` drops it from the tables), so its number cannot be
/// reused while anything here still refers to it.
final class Listener {
    let socket: FileDescriptor
    let peer: SocketAddress
    /// Who it counts as for `maxPerIP`.
    let hostKey: HostKey
    let connectedAt: Double
    /// Its place in the stream, as the `ListenerSchedule` decides it.
    var state = ListenerState()
    /// Keeps a partly written page alive even if the ring drops it meanwhile.
    var partial: SharedPage?
    var bytesSent = 0
    var bytesRead = 0
    /// It shut down its side (read returned 0): it is no longer read from, but still written to.
    var readClosed = false

    init(socket: consuming FileDescriptor, peer: SocketAddress, connectedAt: Double) {
        self.socket = socket
        self.peer = peer
        self.hostKey = HostKey(peer)
        self.connectedAt = connectedAt
    }

    var fd: Int32 { socket.rawValue }
}

@available(*, unavailable) extension Listener: Sendable {}
