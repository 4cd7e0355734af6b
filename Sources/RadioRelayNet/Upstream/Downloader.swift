import Foundation
import Glibc
import RadioRelayMedia
import RadioRelaySystem

/// Downloader: a URL → byte chunks, or a typed failure.
///
/// `http` and `https` go through libcurl's multi interface (`CurlTransfer`); `file:` URLs and plain paths are read
/// directly, in bounded chunks, because libcurl's file protocol reads a whole file inside one call. `poll` never
/// waits longer than its timeout. Every kind follows one stall rule (`StallWatch`): nothing for `stallTimeout`
/// seconds while asked for more is a `DownloadError` saying so.
public final class Downloader {
    public struct Options: Sendable {
        public var connectTimeout = 10
        public var stallTimeout = 15
        /// Ask for ICY metadata (`Icy-MetaData: 1`); the caller must then demux it.
        public var requestICYMetadata = false
        public var chunkSize = 64 * 1024
        /// The bound on a half-open connection (`PeerTimeout`): `peer_timeout`; nil leaves the kernel's defaults.
        public var peerTimeout: PeerTimeout?
        public init() {}
    }

    public let url: String
    private let transfer: CurlTransfer?
    private let file: FileSource?
    private let tcp: TCPSource?
    /// A live source's connection (`init(source:)`).
    package let source: LiveSource?
    private let chunkSize: Int
    private var finished = false
    /// The stall rule, on the monotonic clock.
    private var stall: StallWatch
    /// What a stall's error adds (` (source_timeout)` for a live source).
    private let stallNote: String

    /// Opens the input. A path without a scheme is a local file.
    public init(url: String, options: Options = Options()) throws {
        self.url = url
        self.chunkSize = options.chunkSize
        source = nil
        stall = StallWatch(
            timeout: Double(options.stallTimeout), now: monotonicNow(), grace: Double(options.connectTimeout))
        stallNote = ""
        switch try UpstreamURL.classify(url) {
        case .http:
            var curl = CurlTransfer.Options()
            curl.connectTimeout = options.connectTimeout
            curl.stallTimeout = options.stallTimeout
            curl.requestICYMetadata = options.requestICYMetadata
            curl.peerTimeout = options.peerTimeout
            transfer = try CurlTransfer(url: url, options: curl)
            file = nil
            tcp = nil
        case .tcp:
            transfer = nil
            file = nil
            tcp = try TCPSource(
                url: url, connectTimeout: options.connectTimeout, chunkSize: options.chunkSize,
                peerTimeout: options.peerTimeout)
        case .file:
            transfer = nil
            tcp = nil
            file = try FileSource(path: Self.path(of: url), url: url, chunkSize: options.chunkSize)
        }
    }

    /// Reads a live source's connection (a source client that connected to the HTTP address).
    package init(source: LiveSource) {
        url = source.label
        chunkSize = 16 * 1024
        transfer = nil
        file = nil
        tcp = nil
        self.source = source
        stall = StallWatch(timeout: Double(source.stallTimeout), now: monotonicNow())
        stallNote = " (source_timeout)"
    }

    /// `file:///a/b`, `file:/a/b` and `/a/b` all name the file /a/b (percent-escapes decoded).
    package static func path(of url: String) -> String {
        guard url.lowercased().hasPrefix("file:") else { return url }
        var rest = String(url.dropFirst(5))
        if rest.hasPrefix("//") {
            rest.removeFirst(2)
            if let slash = rest.firstIndex(of: "/") { rest = String(rest[slash...]) }  // drops "localhost"
        }
        return rest.removingPercentEncoding ?? rest
    }

    /// HTTP response headers (lowercased names); empty for files.
    public var responseHeaders: [String: String] { transfer?.headers ?? [:] }

    /// The ICY metadata interval the server announced (`icy-metaint`), nil when it announced none. A value that
    /// is not a whole number from 1 to 65 535 is an error naming it: demuxing with it would put metadata into the
    /// audio or audio into the metadata.
    public func icyMetaInterval() throws(DownloadError) -> Int? {
        do {
            return try ResponseHeaders.icyMetaInterval(responseHeaders["icy-metaint"])
        } catch {
            throw DownloadError(.transfer, url: url, error.message)
        }
    }

    /// Hands over the bytes that arrive within `timeout` ms. Returns false at the end of the input; throws a
    /// `DownloadError` when the transfer fails or has stalled.
    public func poll(timeout: Int, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        var received = false
        let more = try read(timeout: timeout) { chunk in
            received = true
            try body(chunk)
        }
        let now = monotonicNow()
        if received {
            stall.received(now: now)
        } else if more && stall.stalled(now: now) {
            throw DownloadError(.transfer, url: url, stall.message + stallNote)
        }
        return more
    }

    /// The caller does not ask for more now (its read-ahead is full): the wait does not count as a stall.
    public func resting() { stall.resting(now: monotonicNow()) }

    private func read(timeout: Int, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        if let transfer { return try transfer.poll(timeout: timeout, body) }
        guard !finished else { return false }
        let read: ArraySlice<UInt8>?
        if let source {
            read = try source.read(timeout: timeout)
        } else if let tcp {
            read = try tcp.read(timeout: timeout)
        } else if let file {
            read = try file.read(timeout: timeout, url: url)
        } else {
            return false
        }
        guard let chunk = read else {
            finished = true
            return false
        }
        if !chunk.isEmpty { try chunk.withUnsafeBytes { try body($0) } }
        return true
    }
}

@available(*, unavailable) extension Downloader: Sendable {}
