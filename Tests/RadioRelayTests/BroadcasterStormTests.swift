import Foundation
import Glibc
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// A connection storm while a listener is being served at real time: the newcomers are admitted in batches
/// between which the loop keeps serving, so the listener already there keeps its cadence.
@Suite(.timeLimit(.minutes(1))) struct BroadcasterStormTests {
    @Test func aStormOfConnectionsDoesNotStallAListenerAlreadyThere() throws {
        let storm = 1_500
        let rig = try BroadcasterTests.Rig()  // default 0.3 s flush interval
        defer { rig.stop() }
        try rig.publish(seconds: 1)
        let reader = try ListenerClient(port: rig.port)
        defer { reader.close() }
        _ = reader.read(for: 0.2)

        final class Shared: @unchecked Sendable {
            let lock = NSLock()
            var arrivals: [Double] = []
            var done = false
        }
        let shared = Shared()
        let finished = DispatchSemaphore(value: 0)
        Thread {
            while true {
                shared.lock.lock()
                let done = shared.done
                shared.lock.unlock()
                if done { break }
                let got = reader.read(for: 0.02)
                if !got.bytes.isEmpty {
                    shared.lock.lock()
                    shared.arrivals.append(monotonicNow())
                    shared.lock.unlock()
                }
            }
            finished.signal()
        }.start()
        let port = rig.port
        let connected = LockedBox<[ListenerClient]>([])
        Thread {
            for _ in 0..<storm {
                if let client = try? ListenerClient(port: port) { connected.withLock { $0.append(client) } }
            }
            finished.signal()
        }.start()
        let start = monotonicNow()
        for i in 1...30 {  // 3 s of audio at real time, 100 ms pages
            try rig.publish(seconds: 0.1)
            let due = start + Double(i) * 0.1 - monotonicNow()
            if due > 0 { usleep(UInt32(due * 1_000_000)) }
        }
        finished.wait()  // the storm is over
        shared.lock.lock()
        shared.done = true
        shared.lock.unlock()
        finished.wait()
        defer { for client in connected.snapshot { client.close() } }

        #expect(connected.snapshot.count == storm)
        let deadline = monotonicNow() + 10
        while rig.broadcaster.counters.snapshot.listeners < storm + 1 && monotonicNow() < deadline { usleep(20_000) }
        #expect(rig.broadcaster.counters.snapshot.listeners == storm + 1)
        // The listener already there: writes every 0.3 s (0.6 s at the latest), storm or not.
        let arrivals = shared.arrivals
        let gaps = zip(arrivals.dropFirst(), arrivals).map { $0 - $1 }
        let worst = gaps.max() ?? 0
        #expect(arrivals.count >= 6, "\(arrivals.count) arrivals")
        #expect(worst < 0.8, "longest stall \(worst) s")
    }
}
