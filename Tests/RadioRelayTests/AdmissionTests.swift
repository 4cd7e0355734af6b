import Glibc
import Synchronization
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// Who counts as one client for `--max-per-ip`, and how many listeners the open-files limit leaves.
@Suite struct AdmissionTests {
    static func key(_ host: String, port: UInt16 = 1234) throws -> HostKey {
        HostKey(try #require(SocketAddress(host: host, port: port)))
    }

    @Test func anIPv4ClientIsItsAddressWhateverThePort() throws {
        #expect(try Self.key("192.0.2.7", port: 1) == Self.key("192.0.2.7", port: 2))
        #expect(try Self.key("192.0.2.7") != Self.key("192.0.2.8"))
        #expect(try Self.key("192.0.2.7") == HostKey(ipv4: 0xC000_0207))
    }

    /// What a `::` socket reports for an IPv4 client counts as that IPv4 address.
    @Test func anIPv4MappedAddressIsItsIPv4Address() throws {
        #expect(try Self.key("::ffff:192.0.2.7") == Self.key("192.0.2.7"))
        #expect(try Self.key("::ffff:192.0.2.7") != Self.key("::ffff:192.0.2.8"))
        #expect(try Self.key("::ffff:127.0.0.1").isIPv4)
    }

    @Test func anIPv6ClientIsItsSlash64() throws {
        #expect(try Self.key("2001:db8:1:2::1") == Self.key("2001:db8:1:2:ffff:ffff:ffff:ffff"))
        #expect(try Self.key("2001:db8:1:2::1") != Self.key("2001:db8:1:3::1"))
        #expect(try Self.key("2001:db8:1:2::1") == HostKey(ipv6Prefix: 0x2001_0DB8_0001_0002))
        #expect(try !Self.key("2001:db8::1").isIPv4)
    }

    /// IPv6 addresses in ::/64 that are not IPv4-mapped (::1, the old IPv4-compatible form) are not IPv4 clients.
    @Test func otherAddressesInTheZeroPrefixAreNotIPv4() throws {
        #expect(try Self.key("::1") == Self.key("::2"))
        #expect(try Self.key("::1") != Self.key("0.0.0.1"))
        #expect(try Self.key("::192.0.2.7") != Self.key("192.0.2.7"))
    }

    @Test func aRefusalNamesWhatWasCounted() throws {
        #expect(NetworkLoop.clientName(try #require(SocketAddress(host: "::ffff:10.0.0.1", port: 1))) == "10.0.0.1")
        #expect(NetworkLoop.clientName(try #require(SocketAddress(host: "2001:db8::1", port: 1))) == "2001:db8::1/64")
    }

    @Test func theReserveGrowsWithStations() {
        #expect(ResourceLimits.reserve(stations: 1) == 27)
        #expect(ResourceLimits.reserve(stations: 3) == 43)
        #expect(ResourceLimits.reserve(stations: 3, loops: 16) == 88, "each network loop: epoll and two eventfds")
        #expect(ResourceLimits.listenerCeiling(descriptorLimit: 1024, stations: 1) == 997)
        #expect(ResourceLimits.listenerCeiling(descriptorLimit: 20, stations: 1) == 0)
    }

    /// The start-up step: the soft limit is raised to the hard one, and the listeners of all stations together
    /// are capped under it (0, no limit, is capped too).
    @Test func startUpRaisesTheLimitAndCapsTheListeners() throws {
        let budget = ListenerBudget()
        let cap = ResourceLimits.apply(configured: [100, 50], budget: budget)
        #expect(cap == 150)
        #expect(budget.limit.load(ordering: .relaxed) == 150)
        let (soft, hard) = try ResourceLimits.descriptorLimits()
        #expect(soft == hard || hard == Int.max)
        let unlimited = ListenerBudget()
        let ceiling = ResourceLimits.apply(configured: [0, 50], budget: unlimited)
        #expect(ceiling == ResourceLimits.listenerCeiling(descriptorLimit: soft, stations: 2))
        #expect(unlimited.limit.load(ordering: .relaxed) == ceiling)
    }

    @Test func aBudgetHandsOutItsPlacesAndTakesThemBack() {
        let budget = ListenerBudget(limit: 2)
        #expect(budget.acquire() && budget.acquire())
        #expect(!budget.acquire())
        #expect(budget.open.load(ordering: .relaxed) == 2)
        budget.release()
        #expect(budget.acquire())
    }
}
