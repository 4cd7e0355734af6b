import RadioRelayNet
import RadioRelaySystem
import Testing

/// HLS players counted as distinct addresses within 30 s, on virtual time, bounded.
@Suite struct HLSPlayersTests {
    @Test func distinctRecentAddresses() {
        var players = HLSPlayers()
        let a = HostKey(ipv4: 0x0A00_0001)
        let b = HostKey(ipv4: 0x0A00_0002)
        for second in stride(from: 0.0, to: 20, by: 2) { players.saw(a, now: second) }  // a player every segment
        players.saw(b, now: 5)
        #expect(players.count(now: 20) == 2)
        #expect(players.count(now: 34.9) == 2 && players.count(now: 35) == 1, "b's last fetch is 30 s old at 35 s")
        #expect(players.count(now: 47.9) == 1 && players.count(now: 48) == 0, "a's last fetch was at 18 s")
        // A flood of addresses: the table stays bounded, and the newest are counted.
        var flood = HLSPlayers()
        for index in 0..<(HLSPlayers.maxAddresses + 1000) {
            flood.saw(HostKey(ipv4: UInt32(index)), now: Double(index) / 10_000)
        }
        #expect(flood.addresses == HLSPlayers.maxAddresses)
        #expect(flood.count(now: 7) == HLSPlayers.maxAddresses)
        // Once the first ones expire, a new address is counted again (pruned at most once a second).
        flood.saw(HostKey(ipv4: 0xFFFF_FFFF), now: 33)
        #expect(flood.count(now: 33) < HLSPlayers.maxAddresses && flood.count(now: 33) > 0)
    }
}
