/// When each of a set of keys (connections) is due, as a pure value: setting, moving and removing a deadline and
/// finding the earliest cost O(log n) or O(1), not a scan of every key — a loop with 10 000 idle connections pays
/// nothing for them per wake-up.
///
/// A binary min-heap with lazy deletion: a moved or removed deadline leaves its old entry in the heap, recognised
/// as stale (its stamp is no longer the key's) and dropped when it reaches the top. Stale entries are bounded: when
/// they outnumber the live ones (plus 64), the heap is rebuilt from the live deadlines.
package struct DeadlineHeap<Key: Hashable> {
    private struct Entry {
        var deadline: Double
        var key: Key
        var stamp: UInt64
    }

    /// A key's current deadline and the stamp of its entry (a struct, not a tuple: no metadata looked up at run time).
    private struct Live {
        var deadline: Double
        var stamp: UInt64
    }

    private var heap: [Entry] = []
    private var live: [Key: Live] = [:]
    private var nextStamp: UInt64 = 0

    package init() {}

    /// Keys with a deadline.
    package var count: Int { live.count }
    package var isEmpty: Bool { live.isEmpty }
    /// Entries held, stale ones included (for tests of the bound).
    package var storage: Int { heap.count }

    /// Gives `key` the deadline `deadline` (replacing the one it had).
    package mutating func set(_ key: Key, _ deadline: Double) {
        nextStamp &+= 1
        live[key] = Live(deadline: deadline, stamp: nextStamp)
        push(Entry(deadline: deadline, key: key, stamp: nextStamp))
        if heap.count > 2 * live.count + 64 { rebuild() }
    }

    /// Forgets `key`'s deadline.
    package mutating func remove(_ key: Key) {
        live[key] = nil
        if heap.count > 2 * live.count + 64 { rebuild() }
    }

    /// The earliest live deadline and its key (stale entries above it are dropped).
    package mutating func first() -> (key: Key, deadline: Double)? {
        while let top = heap.first {
            if let current = live[top.key], current.stamp == top.stamp { return (top.key, top.deadline) }
            popTop()
        }
        return nil
    }

    /// Removes and returns the keys whose deadline is `now` or earlier, earliest first.
    package mutating func popExpired(now: Double) -> [Key] {
        var due: [Key] = []
        while let (key, deadline) = first(), deadline <= now {
            live[key] = nil
            popTop()
            due.append(key)
        }
        return due
    }

    private mutating func rebuild() {
        heap = live.map { Entry(deadline: $0.value.deadline, key: $0.key, stamp: $0.value.stamp) }
        guard heap.count > 1 else { return }
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
    }

    private mutating func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func popTop() {
        guard !heap.isEmpty else { return }
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        if !heap.isEmpty { siftDown(0) }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            var smallest = left
            let right = left + 1
            if right < heap.count && heap[right].deadline < heap[left].deadline { smallest = right }
            guard heap[smallest].deadline < heap[parent].deadline else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
