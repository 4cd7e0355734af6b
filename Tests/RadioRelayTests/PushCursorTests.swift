import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// The page-forwarding rules of a push, on a fake ring of 100 ms pages (`ListenerScheduleTests.FakeRing`).
@Suite struct PushCursorTests {
    typealias FakeRing = ListenerScheduleTests.FakeRing

    @Test func aConnectionStartsWithTheHeadersAtTheNewestCleanPageThenFollowsEveryPage() {
        var cursor = PushCursor(maxLag: 10)
        var ring = FakeRing(pages: 0)
        #expect(cursor.step(ring, room: 64) == .wait, "nothing published yet")
        ring.publish(30)
        #expect(cursor.step(ring, room: 64) == .start(from: 29, end: 30))
        #expect(cursor.step(ring, room: 64) == .wait)
        ring.publish(1)
        #expect(cursor.step(ring, room: 64) == .send(from: 30, end: 31))
        ring.publish(3)
        #expect(cursor.step(ring, room: 64) == .send(from: 31, end: 34))
    }

    @Test func theStartSkipsPagesWhoseFirstPacketIsContinued() {
        var cursor = PushCursor(maxLag: 10)
        var ring = FakeRing(pages: 30)
        ring.markContinued([28, 29])
        #expect(cursor.step(ring, room: 64) == .start(from: 27, end: 30))
        ring = FakeRing(pages: 3)
        ring.markContinued([0, 1, 2])
        cursor.restart()
        #expect(cursor.step(ring, room: 64) == .wait, "no clean page to start at")
    }

    @Test func aFullQueueWaitsAndSendsWhatFitsOnceThereIsRoom() {
        var cursor = PushCursor(maxLag: 10)
        var ring = FakeRing(pages: 10)
        #expect(cursor.step(ring, room: 0) == .wait, "no room: not even the start")
        #expect(cursor.step(ring, room: 1) == .start(from: 9, end: 10))
        ring.publish(5)
        #expect(cursor.step(ring, room: 0) == .wait)
        #expect(cursor.step(ring, room: 2) == .send(from: 10, end: 12))
        #expect(cursor.step(ring, room: 64) == .send(from: 12, end: 15))
    }

    /// Icecast that stops reading: the queue stays full, the station goes on; past the lag allowance the connection
    /// is given up, and the next one starts at the live edge with the headers again.
    @Test func aPushThatFallsBehindIsGivenUpAndStartsAgainAtTheLiveEdge() {
        var cursor = PushCursor(maxLag: 10)
        var ring = FakeRing(pages: 10, capacity: 240)
        #expect(cursor.step(ring, room: 64) == .start(from: 9, end: 10))
        ring.publish(101)  // the newest page ends 10 s after the next one: still allowed
        #expect(cursor.step(ring, room: 0) == .wait)
        ring.publish(1)
        #expect(cursor.step(ring, room: 0) == .behind(.seconds(10.1)))
        #expect(cursor.step(ring, room: 64) == .behind(.seconds(10.1)), "still behind until restarted")
        cursor.restart()
        #expect(cursor.step(ring, room: 64) == .start(from: 111, end: 112))
    }

    @Test func aPushOvertakenByTheRingIsBehind() {
        var cursor = PushCursor(maxLag: 600)
        var ring = FakeRing(pages: 10, capacity: 20)
        #expect(cursor.step(ring, room: 64) == .start(from: 9, end: 10))
        ring.publish(20)
        #expect(ring.oldest == 10)
        ring.publish(1)  // index 10, the next page, has left the ring
        #expect(cursor.step(ring, room: 64) == .behind(.overtaken))
        cursor.restart()
        #expect(cursor.step(ring, room: 64) == .start(from: 30, end: 31))
    }
}
