import Foundation
import RadioRelayTestSupport
import Testing

/// The real binary against upstreams that lie, one station each in one process (a config file): a SHOUTcast v1
/// server, a redirect to a 404, an HTML page answered with 200, and a static MP3 served as fast as the socket takes
/// it with a Content-Length. Every station keeps its listener on a valid stream, and the log says what each upstream
/// did.
/// (In the serialized `ServerProcessTests` suite: the real-binary tests block their threads while they wait, and too
/// many at once starve the rest of the suite on two cores.)
extension ServerProcessTests {
    @Test func fourLyingUpstreamsInOneServer() throws {
        let audio = try Fixture.bytes("stereo-44k-128k.mp3")
        let looped = Array([[UInt8]](repeating: audio, count: 4).joined())
        let page = Array(String(repeating: "<html><body>moved</body></html>\n", count: 16_000).utf8)
        let upstream = try HTTPTestServer { path in
            switch path {
            case "/shoutcast":
                return .init(
                    headers: ["icy-metaint": "8192", "icy-name": "Old Server"],
                    body: icyStream(looped, interval: 8192, title: "Shout – Cast"), pace: 16_400,
                    statusLine: "ICY 200 OK")
            case "/moved": return .init(status: 302, headers: ["Location": "/gone"])
            case "/gone": return .init(status: 404, body: Array("not here".utf8))
            case "/html": return .init(headers: ["Content-Type": "text/html"], body: page, pace: 20_000)
            default: return .init(headers: ["Content-Type": "audio/mpeg"], body: looped)  // Content-Length, at once
            }
        }
        defer { upstream.stop() }
        let names = ["shoutcast", "moved", "html", "fast"]
        let ports = try names.map { _ in try freePort() }
        var config = "[server]\nstatus = off\n"
        for (name, port) in zip(names, ports) {
            config += "\n[station \(name)]\nupstream = \(upstream.baseURL)/\(name)\nbind = 127.0.0.1\nport = \(port)\n"
        }
        let path = temporaryPath("lying.conf")
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        defer { unlink(path) }
        let server = try ServerProcessTests.ServerProcess(arguments: ["--config", path])
        defer { server.stop() }
        let readers = try ports.map { try ServerProcessTests.Reader(port: $0) }
        usleep(14_000_000)  // the HTML station gives up after 10 s without audio
        for (index, reader) in readers.enumerated() {
            let (bytes, closed) = reader.finish()
            #expect(!closed, "\(names[index]): listener disconnected")
            let capture = try LiveCapture(bytes)
            #expect(capture.headerOK && capture.sequenceGaps == 0 && capture.granuleRegressions == 0, "\(names[index])")
            #expect(Double(capture.left.count) / 48_000 > 12, "\(names[index]): \(capture.left.count) samples")
        }
        let log = server.log
        #expect(log.contains("shoutcast: now playing: Shout – Cast"), "\(log)")
        #expect(log.contains("\"Old Server\", ICY metadata every 8192 bytes"), "\(log)")
        #expect(log.contains("moved: upstream \(upstream.baseURL)/moved: the server answered HTTP 404"), "\(log)")
        #expect(log.contains("html: upstream") && log.contains("no MPEG audio in 10 s"), "\(log)")
        // A response with a length is finite: held back by the clock, not trimmed.
        #expect(log.contains("fast: the upstream announced its length"), "\(log)")
        #expect(!log.contains("fast: dropped"), "the finite upstream lost audio:\n\(log)")
        #expect(!log.contains("moved to the live edge") && !log.contains("too slow"), "\(log)")
    }
}
