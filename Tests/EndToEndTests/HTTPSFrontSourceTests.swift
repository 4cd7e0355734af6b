import Foundation
import Glibc
import RadioRelay
import RadioRelayTestSupport
import Testing

extension ServerProcessTests {
    /// A live source over TLS through the shipped HTTPS front (`deploy/haproxy-https.cfg`, its `sources` port in mode
    /// tcp); in this lane, as HAProxy with one source is a light peer (the Chromium half of `HTTPSFrontTests` runs in
    /// the other).
    @Suite(
        .timeLimit(.minutes(2)),
        .enabled(
            if: ["haproxy", "openssl", "ffmpeg"].allSatisfy { tool($0) != nil },
            "needs haproxy, openssl and ffmpeg (.ci/deps --test)"))
    struct HTTPSFrontSourceTests {
        /// A live source through the front's TLS port for sources (mode tcp: Icecast's PUT has no length): ffmpeg with
        /// `-tls 1` takes the station over, the relay sees the source's own address from the PROXY header.
        @Test
        func aLiveSourceGoesOnAirThroughTheTLSFront() throws {
            let certificates = try TestCertificates()
            defer { certificates.remove() }
            let password = "hackme-live-1"
            let relay = try ServedStation(["--proxy-protocol", "yes", "--source-password", password])
            defer { relay.stop() }
            let (port, plainPort, sourcePort) = (try freePort(), try freePort(), try freePort())
            let haproxy = try PeerTests.HTTPSFrontTests.front(
                certificates, port: port, plainPort: plainPort, relay: relay, page: try freePort(),
                sourcePort: sourcePort)
            defer { haproxy.stop() }
            try #require(waitUntil(10) { (try? ListenerClient(port: sourcePort)) != nil })
            let client = try SourceClient.ffmpeg(
                port: sourcePort, password: password, mount: "/test", frequency: 880, seconds: 6, opus: false, tls: true
            )
            defer { client.stop() }
            func live() -> InputState? {
                (try? relay.station())?.inputs.first
            }
            let onAir = waitUntil(10) { (try? relay.station())?.playingInput == "live" }
            #expect(onAir, "\(relay.server.log)\n\(haproxy.log)")
            let source = live()?.source
            #expect(source?.address.hasPrefix("127.0.0.1:") == true, "\(String(describing: source))")
            #expect(source?.userAgent != nil)
            #expect(!relay.server.log.contains(password))
            #expect(waitUntil(10) { (try? relay.station())?.playingInput == "1" }, "handed back")
        }

    }
}
