import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

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
        #expect(try downloader.icyMetaInterval() == 8192)
        #expect(downloader.responseHeaders["icy-name"] == "Test")
    }

    /// An upstream that sends its headers and then nothing is a stall: a typed, retryable failure saying so, on time
    /// (`stall_timeout`, not libcurl's averaged low-speed rule, which took three times as long).
    @Test func detectsAStall() throws {
        let server = try HTTPTestServer { _ in .init(body: [0xFF, 0xFB], holdOpen: 30) }
        defer { server.stop() }
        var options = Downloader.Options()
        options.stallTimeout = 1
        let downloader = try Downloader(url: server.baseURL + "/slow", options: options)
        let started = Date()
        var message = ""
        #expect { _ = try Self.drain(downloader, for: 20) } throws: { error in
            message = (error as? DownloadError)?.message ?? ""
            return (error as? DownloadError)?.kind == .transfer
        }
        let elapsed = Date().timeIntervalSince(started)
        #expect(message.contains("stalled: no data for 1 s"), "\(message)")
        #expect(elapsed >= 1 && elapsed < 2.5, "stalled after \(elapsed) s")
    }

    /// A FIFO whose writer keeps it open and stops writing stalls like a network input.
    @Test func detectsAStalledFIFO() throws {
        let path = NSTemporaryDirectory() + "stall-\(UInt32.random(in: 0...UInt32.max)).fifo"
        #expect(mkfifo(path, 0o600) == 0)
        defer { unlink(path) }
        let writer = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        try #require(writer >= 0)
        defer { close(writer) }
        var options = Downloader.Options()
        options.stallTimeout = 1
        let downloader = try Downloader(url: path, options: options)
        #expect(write(writer, "abc", 3) == 3)
        let started = Date()
        var message = ""
        #expect { _ = try Self.drain(downloader, for: 10) } throws: { error in
            message = (error as? DownloadError)?.message ?? ""
            return true
        }
        let elapsed = Date().timeIntervalSince(started)
        #expect(message.contains("stalled: no data for 1 s"), "\(message)")
        #expect(elapsed >= 1 && elapsed < 2.5, "stalled after \(elapsed) s")
    }

    /// The rule on virtual time: a connection's grace, bytes, a rest (a full read-ahead) that does not count.
    @Test func stallWatchRule() {
        var watch = StallWatch(timeout: 5, now: 100, grace: 10)
        #expect(!watch.stalled(now: 109.9) && watch.stalled(now: 110))
        watch.received(now: 104)
        #expect(!watch.stalled(now: 108.9) && watch.stalled(now: 109), "after a byte, the grace is over")
        watch.received(now: 112)
        #expect(!watch.stalled(now: 116.9) && watch.stalled(now: 117))
        watch.resting(now: 120)
        #expect(!watch.stalled(now: 124.9) && watch.stalled(now: 125))
        #expect(StallWatch(timeout: 0, now: 0).timeout == 1)
        #expect(StallWatch(timeout: 3, now: 0).message == "stalled: no data for 3 s")
    }

    @Test func pathsAndFileURLs() {
        #expect(Downloader.path(of: "file:///tmp/a%20b.mp3") == "/tmp/a b.mp3")
        #expect(Downloader.path(of: "file://localhost/tmp/x.mp3") == "/tmp/x.mp3")
        #expect(Downloader.path(of: "file:/tmp/x.mp3") == "/tmp/x.mp3")
        #expect(Downloader.path(of: "/tmp/x.mp3") == "/tmp/x.mp3")
    }
}

/// Upstreams that lie or answer oddly: SHOUTcast v1 status lines, redirects to errors, bad metadata intervals.
@Suite(.timeLimit(.minutes(1))) struct UpstreamAnswerTests {
    @Test func shoutcastV1HeadersAreReadAsHeadersNotAsAudio() throws {
        let body = Array(repeating: UInt8(0x55), count: 3000)
        let server = try HTTPTestServer { _ in
            .init(headers: ["icy-metaint": "1000", "icy-name": "Old Server"], body: body, statusLine: "ICY 200 OK")
        }
        defer { server.stop() }
        var options = Downloader.Options()
        options.requestICYMetadata = true
        let downloader = try Downloader(url: server.baseURL + "/", options: options)
        #expect(try DownloaderTests.drain(downloader) == body)
        #expect(try downloader.icyMetaInterval() == 1000)
        #expect(downloader.responseHeaders["icy-name"] == "Old Server")
    }

    @Test func aRedirectToAnErrorIsThatError() throws {
        let server = try HTTPTestServer { path in
            path == "/moved" ? .init(status: 302, headers: ["Location": "/gone"]) : .init(status: 404, body: [1, 2, 3])
        }
        defer { server.stop() }
        let downloader = try Downloader(url: server.baseURL + "/moved")
        #expect { _ = try DownloaderTests.drain(downloader) } throws: { error in
            (error as? DownloadError)?.kind == .httpStatus(404)
        }
    }

    @Test func aRedirectToAnEmptyServerErrorIsThatError() throws {
        let server = try HTTPTestServer { path in
            path == "/moved" ? .init(status: 301, headers: ["Location": "/broken"]) : .init(status: 503)
        }
        defer { server.stop() }
        let downloader = try Downloader(url: server.baseURL + "/moved")
        #expect { _ = try DownloaderTests.drain(downloader) } throws: { error in
            (error as? DownloadError)?.kind == .httpStatus(503)
        }
    }

    @Test(arguments: ["0", "65536", "-1", "abc", "8192x", "99999999999999999999999"])
    func aMetaIntervalOutOfRangeIsAnErrorNamingIt(_ value: String) throws {
        let server = try HTTPTestServer { _ in .init(headers: ["icy-metaint": value], body: [0xFF]) }
        defer { server.stop() }
        let downloader = try Downloader(url: server.baseURL + "/")
        _ = try DownloaderTests.drain(downloader)
        #expect { _ = try downloader.icyMetaInterval() } throws: { error in
            "\(error)".contains("icy-metaint \"\(value.prefix(40))") && "\(error)".contains("1 to 65535")
        }
    }

    @Test func aMetaIntervalAtTheLimitsIsAccepted() throws {
        for value in ["1", "65535", " 8192 "] {
            let server = try HTTPTestServer { _ in .init(headers: ["icy-metaint": value], body: [0xFF]) }
            defer { server.stop() }
            let downloader = try Downloader(url: server.baseURL + "/")
            _ = try DownloaderTests.drain(downloader)
            #expect(try downloader.icyMetaInterval() == Int(value.trimmingCharacters(in: .whitespaces)))
        }
    }
}

/// A local FIFO as the upstream: a writer that is slow never blocks the pipeline.
@Suite(.timeLimit(.minutes(1))) struct FileSourceTests {
    @Test func aFIFOWithNothingYetWaitsAtMostTheTimeout() throws {
        let path = temporaryPath("upstream.fifo")
        try #require(mkfifo(path, 0o600) == 0)
        defer { unlink(path) }
        let downloader = try Downloader(url: path)
        let writer = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
        try #require(writer >= 0)
        var received: [UInt8] = []
        let started = monotonicNow()
        #expect(try downloader.poll(timeout: 100) { received += $0 })
        let waited = monotonicNow() - started
        #expect(received.isEmpty && waited < 2, "waited \(waited) s")
        let bytes: [UInt8] = [1, 2, 3, 4]
        #expect(bytes.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) } == 4)
        #expect(try downloader.poll(timeout: 100) { received += $0 })
        #expect(received == bytes)
        close(writer)
        #expect(try !downloader.poll(timeout: 100) { received += $0 })
    }

    @Test func aDirectoryOrAMissingFileIsAClearError() {
        #expect { _ = try Downloader(url: "/") } throws: { "\($0)".contains("is a directory") }
        #expect { _ = try Downloader(url: "/no/such/file.mp3") } throws: {
            "\($0)".contains("cannot open /no/such/file.mp3: No such file or directory")
        }
    }
}
