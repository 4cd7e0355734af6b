import CLinux
import Glibc
import RadioRelayMedia
import RadioRelaySystem

/// A live source's connection (`PUT` or `SOURCE` on the HTTP address, authenticated), handed by the HTTP front end
/// to its station, whose pipeline reads it as it reads an upstream: a non-blocking socket read in bounded chunks,
/// never longer than the caller's poll timeout; its `Downloader` fails it when nothing arrives for `stallTimeout`
/// (`source_timeout`).
/// Moved between threads once (`Handoff`), then confined to the pipeline's.
package final class LiveSource {
    /// What the source said about itself in its request (printable text, bounded).
    package struct Request: Sendable, Equatable {
        /// `PUT` or `SOURCE`.
        package var method: String
        package var path: String
        package var userAgent: String?
        /// Its `ice-name`, `ice-description`, `ice-genre`, `ice-url`: shown where the station sets none.
        package var info = StationInfo()
        /// After `Expect: 100-continue` (answered `100 Continue`), a final answer may still be sent: a refusal.
        package var mayAnswer = false

        package init(method: String, path: String) {
            self.method = method
            self.path = path
        }
    }

    package let request: Request
    package let peer: SocketAddress
    /// Who it authenticated as: the station's `source`, or a DJ account.
    package let user: SourceUser
    /// Wall-clock seconds when it connected.
    package let since = wallClockNow()
    /// How logs and errors name it: `live source 127.0.0.1:40000`, `live source 127.0.0.1:40000 (DJ alice)`.
    package let label: String
    private var socket: FileDescriptor?
    /// What came with the request head, handed on first.
    private var early: [UInt8]
    private let reader: SocketChunkReader
    /// Seconds without a byte after which the source has stalled (`source_timeout`).
    package let stallTimeout: Int

    package init(
        socket: consuming FileDescriptor, peer: SocketAddress, request: Request, early: [UInt8], stallTimeout: Int,
        user: SourceUser = .station, chunkSize: Int = 16 * 1024
    ) {
        self.socket = consume socket
        self.peer = peer
        self.request = request
        self.early = early
        reader = SocketChunkReader(chunkSize: chunkSize)
        self.stallTimeout = stallTimeout
        self.user = user
        label = "live source \(peer)" + (user.dj.map { " (DJ \($0))" } ?? "")
    }

    /// Sets keep-alive and `TCP_USER_TIMEOUT` on the source's connection (the station's `peer_timeout`, when the
    /// station takes it).
    package func apply(_ peerTimeout: PeerTimeout) throws(SystemError) {
        guard let fd = socket?.rawValue else { return }
        try peerTimeout.apply(to: fd)
    }

    /// Reads what is there, waiting up to `timeout` ms; nil when the source closed, an empty slice when nothing came.
    package func read(timeout: Int) throws(DownloadError) -> ArraySlice<UInt8>? {
        if !early.isEmpty {
            defer { early = [] }
            return early[...]
        }
        guard let fd = socket?.rawValue else { return nil }
        return try reader.read(fd, timeout: timeout, url: label)
    }

    /// Ends the connection; with `answer` (a final response) sent first, best effort, when the source may still be
    /// answered (`mayAnswer`: after `100 Continue`).
    package func close(answer: [UInt8]? = nil) {
        guard let socket = socket.take() else { return }
        if let answer, request.mayAnswer { sendBestEffort(answer, on: socket.rawValue) }
        _ = shutdown(socket.rawValue, Int32(SHUT_RDWR))
    }
}

@available(*, unavailable) extension LiveSource: Sendable {}
