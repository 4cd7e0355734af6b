import Foundation
import RadioRelayTestSupport
import Testing

/// The real binary with an HTTP address: the demo with `--http`, and a config file's `[server] http` with two
/// stations, each at its mount. (In the serialized `ServerProcessTests` suite, like every real-binary test.)
extension ServerProcessTests {
    @Test func theDemoAndAConfigFileServeHTTPListeners() throws {
        // `serve` with the demo sample and `--http` (the bare demo takes the same flag; CommandLineTests).
        let demoHTTP = try freePort()
        let demo = try ServerProcess(arguments: [
            "serve", "--bind", "127.0.0.1", "--port", "\(try freePort())", "--http", "127.0.0.1:\(demoHTTP)",
        ])
        defer { demo.stop() }
        let (head, body, _) = try httpExchange(
            demoHTTP, "GET /main.opus HTTP/1.0\r\n\r\n", seconds: 1.5)
        #expect(head.hasPrefix("HTTP/1.1 200 OK\r\n") && head.contains("\r\nContent-Type: audio/ogg"), "\(head)")
        #expect(try LiveCapture(body).headerOK)
        #expect(demo.logged("http listeners on http://127.0.0.1:\(demoHTTP)/"), "\(demo.log)")

        // A config file: two stations, one with its own mount and name for people.
        let http = try freePort()
        let (portA, portB) = (try freePort(), try freePort())
        let sample = Fixture.path("stereo-44k-128k.mp3")
        let config = temporaryPath("http.conf")
        defer { try? FileManager.default.removeItem(atPath: config) }
        try """
        [server]
        status = off
        http = 127.0.0.1:\(http)
        [station jazz]
        upstream = \(sample)
        bind = 127.0.0.1
        port = \(portA)
        display_name = "Jazz <Radio>"
        [station news]
        upstream = \(sample)
        bind = 127.0.0.1
        port = \(portB)
        mount = /talk.opus
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let server = try ServerProcess(arguments: ["--config", config])
        defer { server.stop() }
        let jazz = try httpExchange(http, "GET /jazz.opus HTTP/1.1\r\nHost: a\r\n\r\n", seconds: 1.5)
        #expect(jazz.head.contains("\r\nicy-name: Jazz <Radio>"), "\(jazz.head)")
        #expect(try LiveCapture(jazz.body).headerOK)
        let talk = try httpExchange(http, "GET /talk.opus HTTP/1.1\r\nHost: a\r\n\r\n", seconds: 1.5)
        #expect(talk.head.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(try LiveCapture(talk.body).headerOK)
        let page = try httpExchange(http, "GET / HTTP/1.1\r\nHost: a\r\n\r\n", seconds: 1)
        let html = String(decoding: page.body, as: UTF8.self)
        #expect(html.contains("Jazz &lt;Radio&gt;") && html.contains("src=\"/talk.opus\""))
        let missing = try httpExchange(http, "GET /news.opus HTTP/1.1\r\nHost: a\r\n\r\n", seconds: 1)
        #expect(missing.head.hasPrefix("HTTP/1.1 404 Not Found\r\n"))
    }
}
