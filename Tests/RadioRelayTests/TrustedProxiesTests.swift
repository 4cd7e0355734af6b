import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// `proxy_from`'s networks as pure values: parsing CIDR text of both families and matching socket addresses.
@Suite struct TrustedProxiesTests {
    static func address(_ host: String) -> SocketAddress {
        SocketAddress(host: host, port: 1234)!
    }

    @Test func networksOfBothFamiliesMatchTheirAddresses() throws {
        let proxies = try #require(TrustedProxies(parsing: "127.0.0.1, 10.0.0.0/8,::1, 2001:db8::/32, [fd00::1]"))
        #expect(proxies.description == "127.0.0.1, 10.0.0.0/8, ::1, 2001:db8::/32, fd00::1")
        for trusted in [
            "127.0.0.1", "10.0.0.1", "10.255.255.255", "::1", "2001:db8:ffff::7", "fd00::1", "::ffff:10.1.2.3",
        ] {
            #expect(proxies.trusts(Self.address(trusted)), "\(trusted)")
        }
        for untrusted in [
            "127.0.0.2", "11.0.0.1", "9.255.255.255", "::2", "2001:db9::1", "fd00::2", "::ffff:127.0.0.2",
        ] {
            #expect(!proxies.trusts(Self.address(untrusted)), "\(untrusted)")
        }
    }

    @Test func edgesOfThePrefix() throws {
        let all4 = try #require(AddressRange("0.0.0.0/0"))
        #expect(all4.contains(Self.address("203.0.113.1")) && !all4.contains(Self.address("2001:db8::1")))
        let all6 = try #require(AddressRange("::/0"))
        #expect(all6.contains(Self.address("2001:db8::1")) && all6.contains(Self.address("203.0.113.1")))
        let half = try #require(AddressRange("2001:db8:0:0:8000::/65"))
        #expect(half.contains(Self.address("2001:db8::8000:0:0:1")) && !half.contains(Self.address("2001:db8::1")))
        let host = try #require(AddressRange("192.0.2.255/32"))
        #expect(host.contains(Self.address("192.0.2.255")) && !host.contains(Self.address("192.0.2.254")))
    }

    @Test func whatIsNotANetworkIsRefused() {
        for text in [
            "", "localhost", "10.0.0.0/33", "::/129", "10.1.2.3/8", "10.0.0.0/", "10.0.0.0/-1", "10.0.0.0/+8",
            "1.2.3", "10.0.0.0/8/8", "::1/١٢٨", "fe80::1%eth0",
        ] {
            #expect(AddressRange(text) == nil, "\(text)")
        }
        #expect(TrustedProxies(parsing: "10.0.0.0/8,") == nil)
        #expect(TrustedProxies(parsing: " , ") == nil)
        #expect(TrustedProxies(parsing: Array(repeating: "::1", count: 257).joined(separator: ",")) == nil)
    }

    @Test func startUpSaysOnceWhoIsBelieved() {
        var behind = StationConfiguration()
        behind.name = "edge"
        behind.broadcaster.proxyProtocol = true
        var configured = behind
        configured.name = "other"
        configured.broadcaster.proxyFrom = TrustedProxies(parsing: "10.0.0.0/8")
        let notes = TrustedProxies.notes(stations: [behind, configured], httpProxyProtocol: true, httpProxyFrom: nil)
        #expect(notes.count == 1)
        #expect(notes.first?.contains("loopback only (127.0.0.0/8, ::1) on station edge, http") == true)
        #expect(
            TrustedProxies.notes(
                stations: [configured], httpProxyProtocol: true, httpProxyFrom: TrustedProxies(parsing: "::1")
            ).isEmpty)
    }

    @Test func theConfigFileKeys() throws {
        let file = try ConfigFileTests.parse(
            """
            [server]
            http = 8090
            http_proxy_protocol = yes
            http_proxy_from = 10.0.0.0/8, ::1
            proxy_from = 192.0.2.0/24

            [station a]
            upstream = http://example.org/a.mp3
            proxy_protocol = yes

            [station b]
            upstream = http://example.org/b.mp3
            port = 8001
            proxy_from = 198.51.100.7
            """)
        #expect(file.server.httpProxyFrom?.description == "10.0.0.0/8, ::1")
        #expect(file.stations[0].broadcaster.trustedProxies.description == "192.0.2.0/24")
        #expect(file.stations[1].broadcaster.trustedProxies.description == "198.51.100.7")
        #expect(throws: ConfigFileError.self) {
            try ConfigFileTests.parse("[station a]\nupstream = http://example.org/a.mp3\nproxy_from = 10.0.0.1/8\n")
        }
    }
}
