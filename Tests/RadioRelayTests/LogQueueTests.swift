import CLinux
import Foundation
import Glibc
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// The log's bounded queue: a caller never waits for output, what does not fit is counted and reported.
@Suite(.timeLimit(.minutes(1))) struct LogQueueTests {
    /// What a sink received, from any thread.
    final class Output: Sendable {
        let text = LockedBox("")
        func append(_ more: String) { text.withLock { $0 += more } }
    }

    static func entry(_ message: String, _ priority: Log.Priority = .notice) -> LogQueue.Entry {
        LogQueue.Entry(priority: priority, message: message, time: timespec())
    }

    static func journalQueue(capacity: Int, output: Output, sink: (@Sendable (String) -> Void)? = nil) -> LogQueue {
        LogQueue(
            capacity: capacity, format: { Log.format($0, dropped: $1, journal: true) },
            sink: sink ?? { output.append($0) })
    }

    @Test func linesOverTheCapacityAreDroppedAndTheNextBatchSaysHowMany() {
        let output = Output()
        let queue = Self.journalQueue(capacity: 3, output: output)
        for i in 0..<8 { queue.enqueue(Self.entry("line \(i)")) }
        #expect(queue.counts == (3, 5))
        queue.flush()
        #expect(
            output.text.snapshot
                == "<4>log: 5 lines dropped: stderr was too slow\n<5>line 0\n<5>line 1\n<5>line 2\n")
        #expect(queue.counts == (0, 0))
        queue.enqueue(Self.entry("after", .info))
        queue.flush()
        #expect(output.text.snapshot.hasSuffix("line 2\n<6>after\n"))
    }

    /// A sink that blocks (a stuck journal) does not block whoever logs: 100 000 lines go in at once while the
    /// writer waits, and once output flows again the lines come out in order, with a count of the lost ones.
    @Test func aStuckSinkNeverBlocksTheCaller() throws {
        let output = Output()
        let release = DispatchSemaphore(value: 0)
        let queue = Self.journalQueue(capacity: 100, output: output) { text in
            release.wait()
            output.append(text)
        }
        #expect(queue.startWriter())
        let start = monotonicNow()
        for i in 0..<100_000 { queue.enqueue(Self.entry("line \(i)")) }
        #expect(monotonicNow() - start < 5)
        #expect(queue.counts.dropped > 0 || output.text.snapshot.isEmpty)
        for _ in 0..<100 { release.signal() }  // output flows again
        let deadline = monotonicNow() + 10
        while queue.counts != (0, 0) && monotonicNow() < deadline { usleep(10_000) }
        queue.enqueue(Self.entry("last"))
        while !output.text.snapshot.hasSuffix("<5>last\n") && monotonicNow() < deadline { usleep(10_000) }
        let lines = output.text.snapshot.split(separator: "\n")
        #expect(lines.last == "<5>last")
        #expect(lines.count <= 2 * 100 + 3, "\(lines.count)")
        #expect(lines.contains { $0.contains("lines dropped: stderr was too slow") })
        let numbers = lines.compactMap { $0.hasPrefix("<5>line ") ? Int($0.dropFirst(8)) : nil }
        #expect(numbers.first == 0 && numbers == numbers.sorted())
    }

    @Test func aTerminalLineCarriesATimeAndALabel() {
        let line = Log.line(Self.entry("disk on fire", .error), journal: false)
        #expect(line.hasSuffix(" error: disk on fire\n"))
        #expect(line.count == "00:00:00.000 error: disk on fire\n".count)
        #expect(Log.line(Self.entry("hello", .notice), journal: true) == "<5>hello\n")
    }

    /// A line below the threshold is not even built (the access log under `--log-level notice`).
    @Test func aDisabledLineIsNotBuilt() {
        guard !Log.isEnabled(.debug) else { return }  // another test may not lower the threshold: it never does
        var built = false
        Log.debug(
            { () -> String in
                built = true
                return "expensive"
            }())
        #expect(!built)
    }
}
