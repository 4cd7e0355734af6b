import Foundation
import Glibc
import RadioRelay
import RadioRelayTestSupport
import Testing

/// In the `PeerTests` lane: one real peer at a time.
extension PeerTests {
    /// HTTPS in front, as `deploy/haproxy-https.cfg` sets it up (the shipped file itself, its example addresses
    /// replaced): HAProxy ends TLS with a certificate from a test CA and passes HTTP to the relay's HTTP address with a
    /// PROXY v2 header. Chromium trusts that CA through its NSS database only (no flag that relaxes certificate
    /// checks): an https:// page plays the https:// mount, and the same page with the mount's plain http:// URL does
    /// not (mixed content).
    @Suite(
        .timeLimit(.minutes(2)),
        .enabled(
            if: ["haproxy", "openssl"].allSatisfy { tool($0) != nil }, "needs haproxy and openssl (.ci/deps --test)"))
    struct HTTPSFrontTests {
        static let example = Fixture.directory.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("deploy/haproxy-https.cfg").path

        /// The example with `replacements` made, each of which must be found in it.
        static func example(_ replacements: [(String, String)]) throws -> String {
            var text = try String(contentsOfFile: example, encoding: .utf8)
            for (old, new) in replacements {
                try #require(text.contains(old), "deploy/haproxy-https.cfg no longer has \(old)")
                text = text.replacingOccurrences(of: old, with: new)
            }
            return text
        }

        static let certificatePath = "/etc/haproxy/certs/radio.pem"

        /// The shipped example passes HAProxy's own check, with a real certificate where it names one.
        @Test func theDeployedConfigIsValid() throws {
            let certificates = try TestCertificates()
            defer { certificates.remove() }
            let path = certificates.directory + "/haproxy-https.cfg"
            try Self.example([(Self.certificatePath, certificates.serverPEM)]).write(
                toFile: path, atomically: false, encoding: .utf8)
            let check = try run(try #require(tool("haproxy")), ["-c", "-f", path])
            #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        }

        /// The example on 127.0.0.1:`port` (HTTPS) and `plainPort` (the redirect) in front of `relay`, with the test
        /// page's paths (`/page.html`, `/report?…`) routed to `page`.
        static func front(
            _ certificates: TestCertificates, port: UInt16, plainPort: UInt16, relay: ServedStation, page: UInt16,
            sourcePort: UInt16? = nil
        ) throws -> HAProxyTests.HAProxy {
            let sources = try sourcePort ?? freePort()
            let config = try Self.example([
                // No syslog here, and this machine's descriptor limit is below what 50 000 connections need.
                ("    log /dev/log local0\n", ""), ("    log global\n", ""), ("    option httplog\n", ""),
                ("    option tcplog\n", ""),
                (
                    "bind :8443 ssl crt \(Self.certificatePath)",
                    "bind 127.0.0.1:\(sources) ssl crt \(certificates.serverPEM)"
                ),
                ("server relay 127.0.0.1:8001 send-proxy-v2\n", "server relay 127.0.0.1:\(relay.http) send-proxy-v2\n"),
                ("maxconn 50000", "maxconn 1000"),
                (
                    "bind :443 ssl crt \(Self.certificatePath)",
                    "bind 127.0.0.1:\(port) ssl crt \(certificates.serverPEM)"
                ),
                ("bind :80\n", "bind 127.0.0.1:\(plainPort)\n"),
                ("server relay 127.0.0.1:8001", "server relay 127.0.0.1:\(relay.http)"),
                ("check port 8080", "check port \(relay.status)"),
                (
                    "    default_backend relay\n",
                    "    use_backend page if { path /page.html } || { path_beg /report }\n    default_backend relay\n"
                ),
            ])
            let haproxy = try HAProxyTests.HAProxy(
                config: config + "\nbackend page\n    server page 127.0.0.1:\(page)\n")
            let listening = waitUntil(10) {
                (try? ListenerClient(port: port)) != nil && (try? ListenerClient(port: plainPort)) != nil
            }
            try #require(listening, "haproxy did not listen on \(port): \(haproxy.log)")
            return haproxy
        }

        /// A `$HOME` whose NSS database (`.pki/nssdb`, where Chromium on Linux looks) trusts `ca` to identify web
        /// sites, made with `certutil` (Debian's libnss3-tools).
        static func home(trusting ca: String) throws -> String {
            let home = temporaryPath("home")
            let database = "sql:\(home)/.pki/nssdb"
            try FileManager.default.createDirectory(atPath: home + "/.pki/nssdb", withIntermediateDirectories: true)
            let certutil = try #require(tool("certutil"))
            let created = try run(certutil, ["-N", "-d", database, "--empty-password"])
            try #require(created.status == 0, "certutil -N: \(created.stderr)")
            let added = try run(certutil, ["-A", "-d", database, "-n", "radio-relay test CA", "-t", "C,,", "-i", ca])
            try #require(added.status == 0, "certutil -A: \(added.stderr)")
            return home
        }

        @Test(
            .enabled(
                if: tool("chromium") != nil && tool("certutil") != nil,
                "needs chromium and certutil (libnss3-tools; .ci/deps --test)"))
        func chromiumPlaysTheMountOverHTTPSAndAnHTTPSPageCannotPlayItOverHTTP() throws {
            let certificates = try TestCertificates()
            defer { certificates.remove() }
            let home = try Self.home(trusting: certificates.caFile)
            defer { try? FileManager.default.removeItem(atPath: home) }
            let relay = try ServedStation(["--proxy-protocol", "yes"])
            defer { relay.stop() }
            let (port, plainPort) = (try freePort(), try freePort())
            let origin = "https://127.0.0.1:\(port)"
            let page = try ChromiumAudioPage(stream: origin + "/test.opus")
            defer { page.stop() }
            let haproxy = try Self.front(
                certificates, port: port, plainPort: plainPort, relay: relay, page: page.site.port)
            defer { haproxy.stop() }

            // Plain HTTP to the front is sent to the same URL over HTTPS.
            let redirect = try httpFetch(
                plainPort, "GET /test.opus HTTP/1.1\r\nHost: 127.0.0.1:\(plainPort)\r\n\r\n", wait: 1)
            #expect(redirect.status == 301, "\(redirect.head)")
            #expect(
                redirect.head.lowercased().contains("location: https://127.0.0.1:\(plainPort)/test.opus"),
                "\(redirect.head)")

            // (1) The https:// page plays the https:// mount: 10 s of audio, no error.
            var station = StationStatus(name: "")
            let played = try page.play(at: origin + "/page.html", home: home) { station = try relay.station() }
            print("https page, https mount: \(played)")
            #expect((played["errors"] as? [Any])?.isEmpty == true, "\(played)")
            #expect((played["advanced"] as? Double ?? 0) >= 8, "\(played)")
            #expect(played["paused"] as? Bool == false && played["src"] as? String == origin + "/test.opus")
            // The relay counted the browser as an HTTP listener, from the address HAProxy's PROXY header named.
            #expect(station.httpListeners >= 1, "\(station)")
            #expect(station.proxyRejected == 0, "\(station)")
            #expect(!haproxy.log.contains("ALERT"), "\(haproxy.log)")

            // (2) The same https:// page with the mount's plain http:// URL: a relay without a balancer, which plays
            // over plain HTTP (checked here), under a name that is not loopback's (Chromium lets a secure page load
            // http://127.0.0.1 and http://localhost): mixed content, blocked or upgraded to https:// and failing.
            let plain = try ServedStation()
            defer { plain.stop() }
            let answer = try httpExchange(
                plain.http, "GET /test.opus HTTP/1.1\r\nHost: relay.test\r\n\r\n", seconds: 1)
            #expect(answer.head.hasPrefix("HTTP/1.1 200") && answer.body.count > 4_000, "\(answer.head)")
            let mixed = try ChromiumAudioPage(stream: "http://relay.test:\(plain.http)/test.opus")
            defer { mixed.stop() }
            let (mixedPort, mixedPlainPort) = (try freePort(), try freePort())
            let mixedFront = try Self.front(
                certificates, port: mixedPort, plainPort: mixedPlainPort, relay: relay, page: mixed.site.port)
            defer { mixedFront.stop() }
            let resolve = ["--host-resolver-rules=MAP relay.test 127.0.0.1"]
            let blocked = try mixed.play(at: "https://127.0.0.1:\(mixedPort)/page.html", home: home, arguments: resolve)
            print("https page, http mount: \(blocked)")
            #expect(blocked["advanced"] as? Double == 0, "\(blocked)")
            #expect((blocked["errors"] as? [Any])?.isEmpty == false, "\(blocked)")
            // The counter-check: the same page from the page server's plain http:// origin plays that URL.
            let allowed = try mixed.play(home: home, arguments: resolve)
            print("http page, http mount: \(allowed)")
            #expect((allowed["advanced"] as? Double ?? 0) >= 8 && (allowed["errors"] as? [Any])?.isEmpty == true)
        }
    }
}
