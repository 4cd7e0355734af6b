import RadioRelayNet
import RadioRelaySystem
import Synchronization
import Testing

/// HLS players as sessions known by address and user agent, each with its ID, ended 30 s after their last answer,
/// on virtual time, bounded.
@Suite struct HLSSessionsTests {
    static func entry(_ id: UInt64, at now: Double = 0) -> ListenerEntry {
        ListenerEntry(
            id: ListenerID(id), place: ListenerMount(station: "jazz", mount: "/jazz.opus", kind: .hls),
            address: "10.0.0.\(id)",
            userAgent: "AppleCoreMedia/1.0", connectedAt: now)
    }

    static let request = ListenerRequest(line: "GET /jazz/live.m3u8 HTTP/1.1", userAgent: "AppleCoreMedia/1.0")

    @Test func aSessionIsAnAddressAndAUserAgentUntilItsWindowEnds() {
        var sessions = HLSSessions()
        let a = HLSSessions.Key(host: HostKey(ipv4: 0x0A00_0001), agent: "AppleCoreMedia/1.0")
        let sameAddressOtherPlayer = HLSSessions.Key(host: HostKey(ipv4: 0x0A00_0001), agent: "VLC/3.0.18")
        let b = HLSSessions.Key(host: HostKey(ipv4: 0x0A00_0002), agent: "AppleCoreMedia/1.0")
        #expect(sessions.answered(a, bytes: 100, now: 0) == nil, "no session before its first answer began one")
        #expect(sessions.begin(a, entry: Self.entry(1), request: Self.request, bytes: 100, now: 0).kept)
        #expect(
            sessions.begin(sameAddressOtherPlayer, entry: Self.entry(2), request: Self.request, bytes: 5, now: 1).kept)
        #expect(sessions.begin(b, entry: Self.entry(3), request: Self.request, bytes: 7, now: 5).kept)
        for second in stride(from: 2.0, to: 20, by: 2) {  // a fetches every segment
            #expect(sessions.answered(a, bytes: 1000, now: second)?.id == ListenerID(1))
        }
        #expect(sessions.count(now: 20) == 3)
        #expect(sessions.count(now: 34.9) == 2 && sessions.count(now: 35) == 1, "b's last answer is 30 s old at 35 s")
        // Ending: the ones whose window is over leave, with their bytes; the rest stay.
        let ended = sessions.end(now: 35)
        #expect(Set(ended.map(\.entry.id)) == [ListenerID(2), ListenerID(3)])
        #expect(ended.first { $0.entry.id == ListenerID(3) }?.entry.bytes.load(ordering: .relaxed) == 7)
        #expect(sessions.end(now: 35.5).isEmpty, "looked for at most once a second")
        #expect(sessions.answered(a, bytes: 0, now: 47.9) != nil)
        #expect(sessions.answered(b, bytes: 0, now: 40) == nil, "b's session ended: its next answer begins a new one")
        let rest = sessions.end(now: 100)
        #expect(rest.map(\.entry.id) == [ListenerID(1)])
        #expect(rest.first?.entry.bytes.load(ordering: .relaxed) == 100 + 9 * 1000)
        #expect(sessions.kept == 0)
    }

    @Test func aKeyThatComesBackAfterItsWindowEndsTheOldSession() {
        var sessions = HLSSessions()
        let a = HLSSessions.Key(host: HostKey(ipv4: 1), agent: nil)
        _ = sessions.begin(a, entry: Self.entry(1), request: Self.request, bytes: 1, now: 0)
        #expect(sessions.answered(a, bytes: 1, now: 31) == nil)
        let (kept, ended) = sessions.begin(a, entry: Self.entry(2), request: Self.request, bytes: 1, now: 31)
        #expect(kept && ended?.entry.id == ListenerID(1))
    }

    @Test func aFloodOfAddressesOrAgentsStaysBounded() {
        var flood = HLSSessions()
        let entry = Self.entry(1)
        for index in 0..<(HLSSessions.maxSessions + 1000) {
            let key = HLSSessions.Key(host: HostKey(ipv4: UInt32(index % 1000)), agent: "agent \(index)")
            let kept = flood.begin(key, entry: entry, request: Self.request, bytes: 0, now: Double(index) / 10_000).kept
            if kept != (index < HLSSessions.maxSessions) { Issue.record("session \(index): kept \(kept)") }
        }
        #expect(flood.kept == HLSSessions.maxSessions)
        // A user agent of any length is cut to the part that tells sessions apart.
        let long = HLSSessions.Key(host: HostKey(ipv4: 1), agent: String(repeating: "x", count: 100_000))
        #expect(long.agent.unicodeScalars.count == HLSSessions.agentLimit)
        // Once the first ones ended and were taken out, there is room again.
        #expect(flood.end(now: 37).count > 0)
        let late = HLSSessions.Key(host: HostKey(ipv4: 0xFFFF_FFFF), agent: nil)
        #expect(flood.begin(late, entry: entry, request: Self.request, bytes: 0, now: 37).kept)
    }
}
