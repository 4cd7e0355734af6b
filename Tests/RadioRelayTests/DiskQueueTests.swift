import Dispatch
import RadioRelaySystem
import RadioRelayTestSupport
import Testing

@testable import RadioRelay

/// The hand-over to a disk writer's thread, with a writer that hangs as a disk does (blocked in its round until the
/// test lets it go): the round's time grows while the queue still takes items, a round past `stallAfter` is told
/// once (by the thread that queues), its end is told when the writer comes back to wait, and a queue that fills is
/// counted as a gap handed to the writer before its next item.
@Suite struct DiskQueueTests {
    @Test func aHungRoundIsToldOnceAndItsEndWhenTheWriterComesBack() throws {
        let queue = try DiskQueue<Int>(maxItems: 4, maxBytes: 1 << 20, prefix: "test: archive", stallAfter: 0.3) {
            -$0
        }
        let disk = DispatchSemaphore(value: 0)
        let seen = LockedBox<[Int]>([])
        try queue.start(name: "disk-test") { thread in
            while !thread.isStopping {
                queue.wait(milliseconds: 50)
                for item in queue.take() {
                    seen.withLock { $0.append(item) }
                    if item == 100 { disk.wait() }  // a write that hangs
                }
            }
        }
        defer { _ = queue.stop(timeout: 5) }
        #expect(queue.enqueue([100], bytes: 1))
        #expect(waitUntil(5) { seen.snapshot == [100] })
        // Hung: the round grows; items queue until the queue is full, then are dropped.
        #expect(waitUntil(5) { queue.roundSeconds() >= 0.3 })
        #expect(!queue.isStallTold)
        #expect(queue.enqueue([1, 2, 3, 4], bytes: 4))
        #expect(queue.isStallTold)
        #expect(!queue.enqueue([5, 6], bytes: 2))
        #expect(queue.isStallTold)
        disk.signal()
        // Back: its round ends at its next wait, where the end is told; the gap comes before the next item.
        #expect(waitUntil(5) { !queue.isStallTold && queue.roundSeconds() < 0.3 })
        #expect(queue.enqueue([8], bytes: 1))
        #expect(waitUntil(5) { seen.snapshot.last == 8 })
        #expect(seen.snapshot == [100, 1, 2, 3, 4, -2, 8])
    }

    @Test func roundsAreTimedFromWhenTheyBegan() {
        #expect(StallWatch.seconds(roundBegan: 0, now: 500) == 0)
        #expect(StallWatch.seconds(roundBegan: StallWatch.millis(100), now: 112.5) == 12.5)
        #expect(StallWatch.seconds(roundBegan: StallWatch.millis(100), now: 99) == 0)
        #expect(StallWatch.millis(0) == 1)
        #expect(StallWatch.shown(47.04) == "47.0" && StallWatch.shown(0.96) == "1.0" && StallWatch.shown(-3) == "0.0")
        #expect(StallWatch.shown(.infinity) == "1000000000.0")
    }
}
