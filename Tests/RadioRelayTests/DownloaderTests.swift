import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay

/// The Downloader against a real HTTP server on 127.0.0.1 (libcurl's multi interface).
@Suite(.timeLimit(.minutes(1))) struct DownloaderTests {
    static func drain(_ downloader: Downloader, for seconds: Double = 10) throws -> [UInt8] {
        var bytes: [UInt8] = []
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline, try downloader.poll(timeout: 50, { bytes += $0 }) {}
        return bytes
    }

    @Test func followsRedirectsAndSendsItsHeaders() throws {
        final class Seen: @unchecked Sendable { var paths: [String] = [] }
        let seen = Seen()
        let body = Array("audio bytes".utf8)
        let server = try HTTPTestServer { path in
            seen.paths.append(path)
            if path == "/old" { return .init(status: 302, headers: ["Location": "/new"]) }
            return .init(headers: ["icy-metaint": "8192", "icy-name": "Test"], body: body)
        }
        defer { server.stop() }
        var options = Downloader.Options()
        options.requestICYMetadata = true
        let downloader = try Downloader(url: server.baseURL + "/old", options: options)
        #expect(try Self.drain(downloader) == body)
        #expect(seen.paths == ["/old", "/new"])
        #expect(downloader.icyMetaInterval == 8192)
        #expect(downloader.responseHeaders["icy-name"] == "Test")
    }

    /// An upstream that sends its headers and then nothing is a stall: a typed, retryable failure.
    @Test func detectsAStall() throws {
        let server = try HTTPTestServer { _ in .init(body: [0xFF, 0xFB], holdOpen: 30) }
        defer { server.stop() }
        var options = Downloader.Options()
        options.stallTimeout = 1
        let downloader = try Downloader(url: server.baseURL + "/slow", options: options)
        let started = Date()
        #expect { _ = try Self.drain(downloader, for: 20) } throws: { error in
            (error as? DownloadError)?.kind == .transfer
        }
        #expect(Date().timeIntervalSince(started) < 15)
    }

    @Test func pathsAndFileURLs() {
        #expect(Downloader.path(of: "file:///tmp/a%20b.mp3") == "/tmp/a b.mp3")
        #expect(Downloader.path(of: "file://localhost/tmp/x.mp3") == "/tmp/x.mp3")
        #expect(Downloader.path(of: "file:/tmp/x.mp3") == "/tmp/x.mp3")
        #expect(Downloader.path(of: "/tmp/x.mp3") == "/tmp/x.mp3")
    }
}
