import Glibc
import Testing

@testable import RadioRelayNet

/// glibc's `malloc_usable_size` (malloc.h, which the Glibc module leaves out).
@_silgen_name("malloc_usable_size") private func mallocUsableSize(_ pointer: UnsafeMutableRawPointer?) -> Int

/// The roster holds an entry per listener (19 000 on one output in `bench/scale.sh`): what a raw listener's costs,
/// and that what it leaves out or shares still reads back.
@Suite struct ListenerEntryTests {
    /// A raw TCP listener's entry is one allocation of 72 usable bytes (glibc's chunk of 80): its place and kind are
    /// one shared reference, and the user agent and user name, which a raw listener never sends, one more left nil.
    /// Two optional strings and a kind inline made it 104 (a chunk of 112): 0.6 MB more at 19 000 listeners.
    @Test func aRawListenersEntryIsOneSmallAllocation() {
        let place = ListenerMount(station: "jazz", mount: "/jazz.opus", kind: .tcp)
        let entry = ListenerEntry(
            id: ListenerID(1), place: place, address: "203.0.113.7", userAgent: nil, connectedAt: 3)
        let size = mallocUsableSize(Unmanaged.passUnretained(entry).toOpaque())
        #expect(size <= 72, "\(size) usable bytes")
        #expect(entry.place === place, "the output's shared place, not a copy")
        #expect(entry.kind == .tcp && entry.station == "jazz" && entry.mount == "/jazz.opus")
        #expect(entry.userAgent == nil && entry.username == nil && entry.address == "203.0.113.7")
    }

    /// An HTTP listener's user agent and user read back; a place is the same one for its own kind and made again
    /// for another, so the kind shown is always the listener's.
    @Test func whatAnHTTPListenerSaidReadsBack() {
        let raw = ListenerMount(station: "jazz", mount: "/jazz.opus", kind: .tcp)
        let entry = ListenerEntry(
            id: ListenerID(2), place: raw.of(.http), address: "2001:db8::1", userAgent: "mpv 0.35", username: "ann",
            connectedAt: 4)
        #expect(entry.kind == .http && entry.place !== raw && entry.mount == "/jazz.opus")
        #expect(entry.userAgent == "mpv 0.35" && entry.username == "ann")
        let named = ListenerEntry(
            id: ListenerID(3), place: raw.of(.hls), address: "192.0.2.1", userAgent: nil, username: "bo",
            connectedAt: 5)
        #expect(named.kind == .hls && named.userAgent == nil && named.username == "bo")
        #expect(raw.of(.tcp) === raw && raw.of(.events).kind == .events && raw.of(.events).station == "jazz")
    }
}
