import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// `DeadlineHeap` on virtual time: the earliest deadline without a scan, moves and removals, and stale entries kept
/// bounded however often deadlines move.
@Suite struct DeadlineHeapTests {
    @Test func expiresInOrderAndOnlyTheDueOnes() {
        var heap = DeadlineHeap<Int32>()
        for (key, deadline) in [(5, 5.0), (1, 1.0), (3, 3.0), (4, 4.0), (2, 2.0)] { heap.set(Int32(key), deadline) }
        #expect(heap.first()?.key == 1)
        #expect(heap.popExpired(now: 3) == [1, 2, 3])
        #expect(heap.count == 2 && heap.first()?.deadline == 4)
        #expect(heap.popExpired(now: 3.5).isEmpty)
    }

    @Test func aMovedOrRemovedDeadlineIsTheNewOne() {
        var heap = DeadlineHeap<Int32>()
        heap.set(1, 1)
        heap.set(2, 2)
        heap.set(1, 10)  // moved later: key 2 is first now
        #expect(heap.first()?.key == 2)
        heap.remove(2)
        #expect(heap.first()?.key == 1 && heap.first()?.deadline == 10)
        #expect(heap.popExpired(now: 5).isEmpty)
        #expect(heap.popExpired(now: 10) == [1])
        #expect(heap.isEmpty && heap.first() == nil)
    }

    /// 10 000 keys whose deadlines move 100 times each: the storage stays within twice the keys plus 64, and the
    /// order is still right.
    @Test func staleEntriesStayBounded() {
        var heap = DeadlineHeap<Int32>()
        for round in 0..<100 {
            for key in 0..<10_000 { heap.set(Int32(key), Double(round * 10_000 + (10_000 - key))) }
            #expect(heap.storage <= 2 * heap.count + 64)
        }
        #expect(heap.count == 10_000)
        #expect(heap.first()?.key == 9_999)
        for key in 0..<9_990 { heap.remove(Int32(key)) }
        #expect(heap.storage <= 2 * heap.count + 64)
        #expect(heap.popExpired(now: .infinity) == (9_990..<10_000).reversed().map { Int32($0) })
    }
}
