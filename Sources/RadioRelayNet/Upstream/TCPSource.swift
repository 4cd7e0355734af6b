import CLinux
import Glibc
import RadioRelayMedia
import RadioRelaySystem

/// A raw TCP upstream (`tcp://HOST:PORT`: another relay's raw port), read with the relay's own socket code: a
/// non-blocking socket, connected within `connectTimeout`, read in bounded chunks (the `Downloader` judges a
/// stall). It never blocks the pipeline longer than the caller's poll timeout. HOST is an IP literal or
/// a name resolved once per connection on a thread of its own (`NameResolution`), within the same `connectTimeout`:
/// a DNS server that never answers fails the connection in time, and never stops the pipeline's heartbeat.
package final class TCPSource {
    package let url: String
    private let port: UInt16
    /// The socket once the address is known.
    private var descriptor: FileDescriptor?
    private var resolution: NameResolution?
    private let reader: SocketChunkReader
    private var connected = false
    private let connectTimeout: Double
    private let connectDeadline: Double
    /// Keep-alive and `TCP_USER_TIMEOUT` on the connection (`PeerTimeout`); nil: the kernel's defaults.
    private let peerTimeout: PeerTimeout?

    /// `tcp://HOST:PORT` (`[v6]:PORT` for an IPv6 literal) → host and port; nil when it is not that.
    package static func endpoint(_ url: String) -> (host: String, port: UInt16)? {
        guard url.lowercased().hasPrefix("tcp://") else { return nil }
        var rest = Substring(url.dropFirst(6))
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard let parsed = HostPort(parsing: rest) else { return nil }
        return (parsed.host, UInt16(clamping: parsed.port))
    }

    package init(url: String, connectTimeout: Int, chunkSize: Int, peerTimeout: PeerTimeout? = nil)
        throws(DownloadError)
    {
        self.url = url
        self.peerTimeout = peerTimeout
        guard let (host, port) = Self.endpoint(url) else {
            throw DownloadError(.badURL, url: url, "not tcp://HOST:PORT")
        }
        self.port = port
        reader = SocketChunkReader(chunkSize: chunkSize)
        let now = monotonicNow()
        self.connectTimeout = Double(max(1, connectTimeout))
        connectDeadline = now + self.connectTimeout
        if let address = SocketAddress(host: host, port: port) {
            try connect(to: address)
        } else {
            guard let started = NameResolution.start(host, port: port) else {
                throw DownloadError(
                    .transfer, url: url,
                    "cannot resolve \(host): \(NameResolution.maxInFlight) name resolutions are running already")
            }
            resolution = started
        }
    }

    private func connect(to address: SocketAddress) throws(DownloadError) {
        let socket = try Self.socket(family: address.family, url: url)
        do throws(SystemError) {
            try peerTimeout?.apply(to: socket.rawValue)
        } catch {
            throw DownloadError(.transfer, url: url, "\(error)")
        }
        let result = address.withSockaddr { Glibc.connect(socket.rawValue, $0, $1) }
        if result == 0 {
            connected = true
        } else if errno != EINPROGRESS {
            throw DownloadError(.transfer, url: url, "connect to \(address): \(String(cString: strerror(errno)))")
        }
        descriptor = consume socket
    }

    private static func socket(family: Int32, url: String) throws(DownloadError) -> FileDescriptor {
        let fd = Glibc.socket(
            family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw DownloadError(.transfer, url: url, "socket: \(String(cString: strerror(errno)))") }
        return FileDescriptor(owning: fd)
    }

    /// The socket, once the name is resolved (connecting to its address then); nil while the resolution runs, after
    /// waiting up to `timeout` ms for it.
    private func socketReady(timeout: Int) throws(DownloadError) -> Int32? {
        if let fd = descriptor?.rawValue { return fd }
        guard let resolution else { throw DownloadError(.transfer, url: url, "no address") }
        switch resolution.result {
        case nil:
            if monotonicNow() >= connectDeadline {
                self.resolution = nil  // its thread ends on its own; its answer is no longer wanted
                throw DownloadError(
                    .transfer, url: url, "resolving \(resolution.host) timed out after \(Int(connectTimeout)) s")
            }
            _ = Glibc.poll(nil, 0, Int32(clamping: min(max(0, timeout), 20)))
            return nil
        case .failed(let reason):
            self.resolution = nil
            throw DownloadError(.transfer, url: url, reason)
        case .address(let address):
            self.resolution = nil
            try connect(to: address)
            return descriptor?.rawValue
        }
    }

    /// Reads what is there, waiting up to `timeout` ms; nil when the peer closed, an empty slice when nothing came.
    package func read(timeout: Int) throws(DownloadError) -> ArraySlice<UInt8>? {
        guard let fd = try socketReady(timeout: timeout) else { return [] }
        let now = monotonicNow()
        if !connected {
            var waiting = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            _ = Glibc.poll(&waiting, 1, Int32(clamping: timeout))
            guard waiting.revents != 0 else {
                if now >= connectDeadline { throw DownloadError(.transfer, url: url, "connect timed out") }
                return []
            }
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
            guard error == 0 else {
                throw DownloadError(.transfer, url: url, "connect failed: \(String(cString: strerror(error)))")
            }
            connected = true
        }
        return try reader.read(fd, timeout: timeout, url: url)
    }
}

@available(*, unavailable) extension TCPSource: Sendable {}
