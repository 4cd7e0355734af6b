import CLinux
import Foundation
import Glibc
import Synchronization
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

    static func journalQueue(capacity: Int, output: Output, sink: LogQueue.Sink? = nil) -> LogQueue {
        LogQueue(
            capacity: capacity, format: { Log.format($0, dropped: $1, journal: true) },
            sink: sink ?? { bytes, _ in
                output.append(String(decoding: bytes, as: UTF8.self))
                return .wrote(bytes.count)
            })
    }

    /// An output that takes nothing while `stalled` is set (waiting as long as it is allowed, as `poll` would), and
    /// takes at most `piece` bytes a call otherwise.
    final class StallingOutput: Sendable {
        let stalled = Atomic<Bool>(true)
        let output = Output()
        let piece: Int
        init(piece: Int = 1 << 20) { self.piece = piece }

        var sink: LogQueue.Sink {
            { [self] bytes, wait in
                if stalled.load(ordering: .relaxed) {
                    usleep(UInt32(max(0, min(wait, 1)) * 1_000_000))
                    return .wrote(0)
                }
                let count = min(bytes.count, piece)
                output.append(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[..<count]), as: UTF8.self))
                return .wrote(count)
            }
        }
    }

    @Test func linesOverTheCapacityAreDroppedAndTheNextBatchSaysHowMany() {
        let output = Output()
        let queue = Self.journalQueue(capacity: 3, output: output)
        for i in 0..<8 { queue.enqueue(Self.entry("line \(i)")) }
        #expect(queue.counts == (3, 5))
        #expect(queue.flush() == 0)
        #expect(
            output.text.snapshot
                == "<4>log: 5 lines dropped: stderr was too slow\n<5>line 0\n<5>line 1\n<5>line 2\n")
        #expect(queue.counts == (0, 0))
        queue.enqueue(Self.entry("after", .info))
        queue.flush()
        #expect(output.text.snapshot.hasSuffix("line 2\n<6>after\n"))
    }

    /// A stalled output (a stuck journal) blocks neither whoever logs nor a flush: 100 000 lines go in at once while
    /// the writer waits, a flush returns by its timeout saying how many lines did not get out, and once output flows
    /// again (in small pieces) the lines come out in order, with a count of the lost ones.
    @Test func aStalledOutputNeverBlocksTheCallerNorAFlush() throws {
        let stalling = StallingOutput(piece: 7)
        let queue = Self.journalQueue(capacity: 100, output: stalling.output, sink: stalling.sink)
        #expect(queue.startWriter())
        let start = monotonicNow()
        for i in 0..<100_000 { queue.enqueue(Self.entry("line \(i)")) }
        #expect(monotonicNow() - start < 5)
        let flushStart = monotonicNow()
        let unwritten = queue.flush(timeout: 0.3)
        let flushTook = monotonicNow() - flushStart
        #expect(flushTook >= 0.25 && flushTook < 1.5, "\(flushTook) s")
        #expect(unwritten > 0 && unwritten <= 200, "\(unwritten)")
        #expect(stalling.output.text.snapshot.isEmpty)
        stalling.stalled.store(false, ordering: .relaxed)  // output flows again
        #expect(queue.flush(timeout: 20) == 0)
        queue.enqueue(Self.entry("last"))
        #expect(queue.flush(timeout: 20) == 0)
        let lines = stalling.output.text.snapshot.split(separator: "\n")
        #expect(lines.last == "<5>last")
        #expect(lines.count <= 2 * 100 + 3, "\(lines.count)")
        #expect(lines.contains { $0.contains("lines dropped: stderr was too slow") })
        let numbers = lines.compactMap { $0.hasPrefix("<5>line ") ? Int($0.dropFirst(8)) : nil }
        #expect(numbers.first == 0 && numbers == numbers.sorted())
    }

    /// A stop against an output that never takes a byte ends within its timeout, the writer thread ends, and every
    /// line it could not write is counted; lines queued afterwards are dropped.
    @Test func aStopEndsWithinItsTimeoutAndCountsWhatWasNotWritten() {
        let stalling = StallingOutput()
        let queue = Self.journalQueue(capacity: 1000, output: stalling.output, sink: stalling.sink)
        #expect(queue.startWriter())
        for i in 0..<500 { queue.enqueue(Self.entry("line \(i)")) }
        let start = monotonicNow()
        let unwritten = queue.stop(timeout: 0.5)
        let took = monotonicNow() - start
        #expect(unwritten == 500)
        #expect(took >= 0.45 && took < 2, "\(took) s")
        #expect(!queue.enqueue(Self.entry("after the stop")))
        stalling.stalled.store(false, ordering: .relaxed)
        #expect(queue.flush(timeout: 0.5) == 0)
        #expect(stalling.output.text.snapshot.isEmpty)
    }

    /// Work given to the queue runs on the writer thread before its next batch (so before every line queued after
    /// it, and perhaps before some queued earlier: a file opened there gets them too); a flush waits for it.
    @Test func tasksRunOnTheWriterBeforeLaterLines() {
        let output = Output()
        let queue = Self.journalQueue(capacity: 100, output: output)
        #expect(queue.startWriter())
        queue.enqueue(Self.entry("before"))
        let caller = pthread_self()
        let ranElsewhere = LockedBox(false)
        queue.perform {
            ranElsewhere.withLock { $0 = pthread_equal(pthread_self(), caller) == 0 }
            output.append("<task>\n")
        }
        queue.enqueue(Self.entry("after"))
        #expect(queue.flush(timeout: 10) == 0)
        #expect(ranElsewhere.snapshot)
        let text = output.text.snapshot
        #expect(
            text == "<task>\n<5>before\n<5>after\n" || text == "<5>before\n<task>\n<5>after\n", "\(text)")
        #expect(queue.stop(timeout: 1) == 0)
    }

    /// An output that fails loses the batch: the failure callback is told how many lines, the next batch goes on.
    @Test func aFailedWriteIsCountedAndTheNextBatchGoesOn() {
        let output = Output()
        let lost = LockedBox<[Int]>([])
        let fail = LockedBox(true)
        let queue = LogQueue(
            capacity: 100, format: { Log.format($0, dropped: $1, journal: true) },
            sink: { bytes, _ in
                if fail.snapshot { return .failed(errno: EPIPE) }
                output.append(String(decoding: bytes, as: UTF8.self))
                return .wrote(bytes.count)
            },
            onFailure: { lines, code in lost.withLock { $0.append(lines * 1000 + Int(code)) } })
        for i in 0..<3 { queue.enqueue(Self.entry("lost \(i)")) }
        #expect(queue.flush() == 0)
        fail.withLock { $0 = false }
        queue.enqueue(Self.entry("kept"))
        #expect(queue.flush() == 0)
        #expect(lost.snapshot == [3000 + Int(EPIPE)])
        #expect(output.text.snapshot == "<5>kept\n")
    }

    /// Writes `chunk` to `fd` without waiting until the output takes nothing (at most 64 MiB): the bytes taken, and
    /// the last outcome.
    static func fill(_ fd: Int32, with chunk: [UInt8]) -> (total: Int, last: BoundedOutput.Outcome) {
        var total = 0
        var outcome = BoundedOutput.Outcome.wrote(1)
        while case .wrote(let count) = outcome, count > 0, total < 64 << 20 {
            outcome = chunk.withUnsafeBytes { BoundedOutput.write(fd, $0, wait: 0) }
            if case .wrote(let count) = outcome { total += count }
        }
        return (total, outcome)
    }

    /// `BoundedOutput` on a real pipe that nobody reads, left blocking as stderr is: once full, a write waits only
    /// as long as it is allowed and takes nothing; read from, it takes bytes again; with the reader gone, it fails
    /// (EPIPE, never SIGPIPE).
    @Test func aFullPipeNeverBlocksAWrite() throws {
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { _ = Glibc.close(ends[1]) }
        signal(SIGPIPE, SIG_IGN)
        let chunk = [UInt8](repeating: 0x61, count: 65536)
        let (total, outcome) = Self.fill(ends[1], with: chunk)
        #expect(outcome == .wrote(0))
        #expect(total >= 4096 && total < 64 << 20, "\(total)")
        let start = monotonicNow()
        let stalled = chunk.withUnsafeBytes { BoundedOutput.write(ends[1], $0, wait: 0.2) }
        let took = monotonicNow() - start
        #expect(stalled == .wrote(0))
        #expect(took >= 0.15 && took < 1, "\(took) s")
        #expect(!BoundedOutput.writeAll(ends[1], chunk, timeout: 0.1))
        var sink = [UInt8](repeating: 0, count: 65536)
        _ = Glibc.read(ends[0], &sink, sink.count)
        let flowing = chunk.withUnsafeBytes { BoundedOutput.write(ends[1], $0, wait: 1) }
        #expect(flowing != .wrote(0))
        _ = Glibc.close(ends[0])
        let broken = chunk.withUnsafeBytes { BoundedOutput.write(ends[1], $0, wait: 1) }
        #expect(broken == .failed(errno: EPIPE))
    }

    /// The same on a blocking socket (the journal's stream): `send` with `MSG_DONTWAIT` never blocks.
    @Test func aFullSocketNeverBlocksAWrite() {
        var pair: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer {
            _ = Glibc.close(pair[0])
            _ = Glibc.close(pair[1])
        }
        let chunk = [UInt8](repeating: 0x62, count: 65536)
        #expect(Self.fill(pair[1], with: chunk).last == .wrote(0))
        let start = monotonicNow()
        #expect(!BoundedOutput.writeAll(pair[1], chunk, timeout: 0.2))
        #expect(monotonicNow() - start < 1)
    }

    @Test func aTerminalLineCarriesATimeAndALabel() {
        let line = Log.line(Self.entry("disk on fire", .error), journal: false)
        #expect(line.hasSuffix(" error: disk on fire\n"))
        #expect(line.count == "00:00:00.000 error: disk on fire\n".count)
        #expect(Log.line(Self.entry("hello", .notice), journal: true) == "<5>hello\n")
    }

    /// A line below the threshold is not even built (the access log under `--log-level notice`).
    @Test func aDisabledLineIsNotBuilt() throws {
        // No test lowers the process's threshold to debug: if one ever does, this says so instead of passing.
        try #require(!Log.isEnabled(.debug), "the log threshold is at debug: this test cannot see a line not built")
        var built = false
        Log.debug(
            { () -> String in
                built = true
                return "expensive"
            }())
        #expect(!built)
    }
}
