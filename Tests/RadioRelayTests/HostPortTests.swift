import RadioRelaySystem
import Testing

/// The one parser of `HOST:PORT` and the one port range.
@Suite struct HostPortTests {
    @Test func authoritiesWithAPort() {
        #expect(HostPort(parsing: "127.0.0.1:8080") == HostPort(host: "127.0.0.1", port: 8080))
        #expect(HostPort(parsing: "[::1]:8080") == HostPort(host: "::1", port: 8080))
        #expect(HostPort(parsing: "::1:8080") == HostPort(host: "::1", port: 8080), "the port after the last colon")
        #expect(HostPort(parsing: "radio.example:443")?.description == "radio.example:443")
        #expect(HostPort(host: "::1", port: 9).description == "[::1]:9")
        for bad in [
            "", "host", "host:", ":80", "host:0", "host:65536", "host:-1", "host:+80", "host: 80", "host:80 ", "[::1]",
            "[::1]80", "[::1:80", "a/b:80", "user@host:80", "host:99999999999999999999", "host:٨٠",
        ] {
            #expect(HostPort(parsing: bad) == nil, "\(bad)")
        }
        #expect(HostPort.split("[::1]")?.port == nil && HostPort.split("host")?.host == "host")
        // A separator followed by a combining mark is still a separator (the port then is not digits: refused).
        #expect(HostPort.split("host:\u{301}80")?.host == "host" && HostPort(parsing: "host:\u{301}80") == nil)
        #expect(HostPort.split("[::1]\u{301}:80") == nil && HostPort.split("[\u{301}::1]:80")?.port == "80")
        #expect(Port.parse("65535") == 65535 && Port.parse("1") == 1 && Port.parse("0") == nil && Port.parse("") == nil)
        #expect(Port.range == 1...65535 && Port.rangeOrAnyFree.contains(0))
    }
}
