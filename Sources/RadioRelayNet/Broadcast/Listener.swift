import RadioRelayMedia
import RadioRelaySystem

/// One listener's connection, confined to the network thread. It owns its socket: the descriptor closes when the
/// last reference goes (right after `NetworkLoop.disconnect` drops it from the tables), so its number cannot be
/// reused while anything here still refers to it.
package final class Listener {
    package let socket: FileDescriptor
    /// Its port: with the entry's address, what the log lines name it by (a `SocketAddress` is 132 bytes; 19 000
    /// listeners kept it twice).
    package let port: UInt16
    /// Its ID and what the listener list shows of it (the admission point made it; a move makes it another, with the
    /// same ID, for its new mount).
    package var entry: ListenerEntry
    /// A protected station's listener: its session with the authentication backend (ended when it leaves, or when
    /// it is moved to another station).
    package var session: ListenerSession?
    /// Who it counts as for `maxPerIP`.
    package let hostKey: HostKey
    /// When it came to the output it is on now (admitted, or moved there).
    package var connectedAt: Double
    /// Its stream's bytes sent before it came to that output (a moved listener's access log line per mount).
    package var bytesBefore = 0
    /// A listener moved from another output: the pages it gets there (nil for every other).
    package var splice: ListenerSplice?
    /// Its place in the stream, as the `ListenerSchedule` decides it.
    package var state = ListenerState()
    /// Its place in the loop's list of listeners looked at when pages are published (-1: not there, while its
    /// socket is backed up).
    package var scanIndex = -1
    /// Keeps a partly written page alive even if the ring drops it meanwhile.
    package var partial: SharedPage?
    /// The header pages it is sent first (the ring's when it started or was moved across a link boundary), kept
    /// so that a link change in the ring meanwhile cannot mix two links' headers; and the link they belong to.
    package var headers: [SharedPage] = []
    package var headersLink: Int64?
    package var bytesSent = 0
    package var bytesRead = 0
    /// It shut down its side (read returned 0): it is no longer read from, but still written to.
    package var readClosed = false
    package let kind: ListenerProtocol
    /// An HTTP listener's response head, sent before the stream (its bytes stay at one address for `sendmsg`), and
    /// how much of it is sent.
    package let responseHead: UnsafeMutableRawBufferPointer?
    package var responseHeadSent = 0
    /// What an HTTP listener asked for (nil for a raw one); a move puts its new mount in the request line.
    package var request: ListenerRequest?
    /// Where it is in its ICY framing, when it asked for titles in band (`ICYCursor`).
    package var icy: ICYCursor?
    /// When a write last took bytes (its connection time until then): how long a backed-up listener has made no
    /// progress, for how its connection closes (`NetworkLoop.closesAbortively`).
    package var lastProgress: Double

    package init(
        socket: consuming FileDescriptor, peer: SocketAddress, connectedAt: Double, kind: ListenerProtocol = .tcp,
        responseHead: [UInt8] = [], request: ListenerRequest? = nil, entry: ListenerEntry,
        session: ListenerSession? = nil
    ) {
        self.request = request
        self.entry = entry
        self.session = session
        if let interval = request?.metaInterval, interval > 0 { icy = ICYCursor(interval: interval) }
        self.socket = socket
        port = peer.port
        self.hostKey = HostKey(peer)
        self.connectedAt = connectedAt
        lastProgress = connectedAt
        self.kind = kind
        if responseHead.isEmpty {
            self.responseHead = nil
        } else {
            let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: responseHead.count, alignment: 1)
            storage.copyBytes(from: responseHead)
            self.responseHead = storage
        }
    }

    deinit { responseHead?.deallocate() }

    package var fd: Int32 { socket.rawValue }

    /// `ADDRESS:PORT` (`[V6]:PORT`), as log lines name it.
    package var peer: String {
        entry.address.utf8.contains(UInt8(ascii: ":")) ? "[\(entry.address)]:\(port)" : "\(entry.address):\(port)"
    }

    /// The part of the response head not yet sent (empty for raw listeners and once it is out).
    package var unsentResponseHead: UnsafeRawBufferPointer {
        guard let responseHead, responseHeadSent < responseHead.count else {
            return UnsafeRawBufferPointer(start: nil, count: 0)
        }
        return UnsafeRawBufferPointer(rebasing: responseHead[responseHeadSent...])
    }
}

@available(*, unavailable) extension Listener: Sendable {}
