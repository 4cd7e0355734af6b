import Foundation
import Glibc
import RadioRelay
import RadioRelayTestSupport
import Testing

/// In the `ServerProcessTests` lane (Icecast and HAProxy with one push: light peers), which keeps the two lanes about
/// as long as each other.
extension ServerProcessTests {
    /// `icecasts://`: a station pushing over TLS to a real Icecast (Debian's `icecast2`) behind HAProxy, which
    /// terminates TLS with a certificate from a test CA (`mode tcp`: Icecast's source `PUT` has neither a length nor
    /// chunks, which HAProxy's HTTP mode would not pass). With that CA as `--push-ca` the push is accepted and Icecast's
    /// listeners hear the station; with another CA, with none (the system's store), to a host the certificate does not
    /// name, or to a port that speaks no TLS, it is refused, and status and log say why without the password.
    @Suite(
        .timeLimit(.minutes(2)),
        .enabled(
            if: ["icecast2", "haproxy", "openssl"].allSatisfy { tool($0) != nil },
            "needs icecast2, haproxy and openssl (.ci/deps --test)"))
    struct IcecastTLSPushTests {
        typealias Icecast = IcecastPushTests.IcecastServer

        /// HAProxy terminating TLS with `certificates` on 127.0.0.1:`port` and 127.0.0.2:`port`, passing the bytes
        /// to `icecast`'s plain port; and on `plainPort` an HTTP front without TLS, which answers a TLS handshake at
        /// once with a 400.
        static func tlsFront(_ certificates: TestCertificates, port: UInt16, plainPort: UInt16, to icecast: Icecast)
            throws -> PeerTests.HAProxyTests.HAProxy
        {
            let haproxy = try PeerTests.HAProxyTests.HAProxy(
                config: """
                    global
                        stats socket STATS mode 600 level admin
                    defaults
                        mode tcp
                        timeout connect 2s
                        timeout client 1m
                        timeout server 1m
                    frontend icecasts
                        bind 127.0.0.1:\(port) ssl crt \(certificates.serverPEM)
                        bind 127.0.0.2:\(port) ssl crt \(certificates.serverPEM)
                        default_backend icecast
                    frontend plain
                        mode http
                        bind 127.0.0.1:\(plainPort)
                        http-request deny
                    backend icecast
                        server icecast 127.0.0.1:\(icecast.port)

                    """)
            let listening = waitUntil(10) {
                (try? ListenerClient(port: port)) != nil && (try? ListenerClient(port: plainPort)) != nil
            }
            try #require(listening, "haproxy did not listen on \(port): \(haproxy.log)")
            return haproxy
        }

        /// The push (of `station`'s) to `mount`, as `/status.json` shows it.
        static func push(_ station: ServedStation, _ mount: String) -> PushStatus? {
            ((try? station.pushes()) ?? []).first { $0.target.hasSuffix(mount) }
        }

        @Test func aTLSPushIsVerifiedAgainstPushCA() throws {
            let certificates = try TestCertificates()
            defer { certificates.remove() }
            let stranger = try TestCertificates()  // a CA that did not sign HAProxy's certificate
            defer { stranger.remove() }
            let icecast = try Icecast(port: try freePort())
            defer { icecast.remove() }
            let (port, plainPort) = (try freePort(), try freePort())
            let haproxy = try Self.tlsFront(certificates, port: port, plainPort: plainPort, to: icecast)
            defer { haproxy.stop() }
            func url(_ host: String, _ port: UInt16, _ mount: String) -> String {
                "icecasts://source:\(icecast.password)@\(host):\(port)\(mount)"
            }

            // The test CA: the push to 127.0.0.1 goes through; the one to 127.0.0.2 (not in the certificate), the one
            // to Icecast's plain port (which waits for a request: the handshake times out) and the one to a plain
            // HTTP port that answers at once do not.
            let trusting = try ServedStation(
                [
                    "--display-name", "TLS FM", "--push-ca", certificates.caFile,
                    "--push", url("127.0.0.1", port, "/tls.opus"), "--push", url("127.0.0.2", port, "/wrong-host.opus"),
                    "--push", url("127.0.0.1", icecast.port, "/plain-icecast.opus"),
                    "--push", url("127.0.0.1", plainPort, "/plain-http.opus"),
                ])
            defer { trusting.stop() }
            // Another CA, and none (the system's store, which does not hold the test CA).
            let wrongCA = try ServedStation([
                "--push-ca", stranger.caFile, "--push", url("127.0.0.1", port, "/ca.opus"),
            ])
            defer { wrongCA.stop() }
            let noCA = try ServedStation(["--push", url("localhost", port, "/no-ca.opus")])
            defer { noCA.stop() }

            #expect(
                waitUntil(15) { Self.push(trusting, "/tls.opus")?.state == .connected },
                "\((try? trusting.pushes()) ?? [])\n\(trusting.server.log)")
            let (head, body) = try icecast.listen("/tls.opus", seconds: 4)
            #expect(head.hasPrefix("HTTP/1.0 200") && head.lowercased().contains("icy-name:tls fm"), "\(head)")
            try ServerProcessTests.IcecastPushTests.expectStationAudio(body, "Icecast listener of the TLS push")
            let file = temporaryPath("tls-push.opus")
            defer { unlink(file) }
            try Data(body).write(to: URL(fileURLWithPath: file))
            let probe = try run(
                try #require(tool("ffprobe")),
                [
                    "-v", "error", "-show_entries", "stream=codec_name,channels,sample_rate:format=format_name", "-of",
                    "default=nw=1", file,
                ])
            print("ffprobe of Icecast's /tls.opus (pushed over TLS):\n\(probe.stdout)\(probe.stderr)")
            #expect(
                probe.status == 0 && probe.stdout.contains("codec_name=opus") && probe.stdout.contains("channels=2")
                    && probe.stdout.contains("format_name=ogg"), "\(probe)")
            let good = try #require(Self.push(trusting, "/tls.opus"))
            #expect(good.target == "icecasts://***@127.0.0.1:\(port)/tls.opus")
            #expect(good.reconnects == 0 && good.bytesSent > 20_000, "\(good)")

            // Every refusal: retried, nothing sent, the reason in status and in the log.
            let refusals: [(ServedStation, String, String)] = [
                (
                    trusting, "/wrong-host.opus",
                    "the server's TLS certificate was not accepted: SSL: no alternative certificate subject name "
                        + "matches target host name '127.0.0.2'"
                ),
                (
                    trusting, "/plain-icecast.opus",
                    "the TLS handshake timed out: SSL connection timeout (does 127.0.0.1:\(icecast.port) speak TLS? "
                        + "Icecast's plain port takes icecast://)"
                ),
                (trusting, "/plain-http.opus", "the TLS handshake failed: "),
                (
                    wrongCA, "/ca.opus",
                    "the server's TLS certificate was not accepted: SSL certificate problem: unable to get local issuer "
                        + "certificate"
                ),
                (
                    noCA, "/no-ca.opus",
                    "the server's TLS certificate was not accepted: SSL certificate problem: unable to get local issuer "
                        + "certificate"
                ),
            ]
            for (station, mount, reason) in refusals {
                #expect(
                    waitUntil(15) { (Self.push(station, mount)?.reconnects ?? 0) >= 1 },
                    "\((try? station.pushes()) ?? [])")
                let status = try #require(Self.push(station, mount))
                let error = status.lastError ?? ""
                print("push to \(mount): \(error)")
                #expect(error.hasPrefix(reason), "\(mount): \(status)")
                #expect(status.bytesSent == 0 && status.state != .connected, "\(status)")
                let target = status.target
                #expect(target.hasPrefix("icecasts://***@"), "\(target)")
                #expect(
                    station.server.log.contains("push to \(target) failed: \(reason)"),
                    "\(mount): \(station.server.log)")
                #expect(try icecast.listen(mount, seconds: 0.5).head.hasPrefix("HTTP/1.0 404"), "\(mount)")
            }
            for station in [trusting, wrongCA, noCA] {
                let status = "\((try? station.pushes()) ?? [])"
                #expect(!station.server.log.contains(icecast.password), "the source password in the log")
                #expect(!status.contains(icecast.password), "the source password in the status")
            }
        }
    }
}
