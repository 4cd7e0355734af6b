import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

extension StreamClockTests {
    /// An edge whose root restarted: the root's pages come in its listeners' 300 ms flushes (or 0.1–1 s clumps while
    /// its own upstream settles); the edge settled with no lead (its root had none when it joined); a 3.4 s outage;
    /// then the new root's 1.4 s join burst (1 s lead + 0.4 s) and real time. Before the fix: the outage's debt trims
    /// every arrival back to the (low) reference, so each late flush is a ~0.16 s hole then a skip, until the debt is
    /// spent (python port: 2.1–2.7 s of silence in 13–17 holes, 3.2 s dropped). After: none.
    @Test(arguments: [0 as UInt64, 9])
    func aRestartedRootsJoinBurstIsACushionNotHoles(_ seed: UInt64) {
        var sim = ClockSimulation()
        var generator = SplitMix64(seed: seed)
        var t = 0.0
        var source = 0.0
        var next = 0.35
        while t < 20 {
            sim.now = 1_000 + t
            if t >= next - 1e-9 {
                sim.deliver(source: source, seconds: 0.3)
                source += 0.3
                next += 0.3
            }
            sim.step()
            t += 0.02
        }
        while t < 23.4 {  // the root is down
            sim.now = 1_000 + t
            sim.step()
            t += 0.02
        }
        let silenceBefore = sim.clock.silenceSeconds
        let droppedBefore = sim.clock.droppedSeconds
        sim.clock.connected()  // what Pipeline.connected does on the new connection's first bytes
        // The new root started at 23.0 and runs 1 s ahead: by wall time t it has made t − 22 s of audio.
        var made = 0.0
        next = t
        while t < 60 {
            sim.now = 1_000 + t
            if t >= next - 1e-9 {
                let now = t - 22
                if now > made { sim.deliver(source: 1_000 + 22 + made, seconds: now - made) }
                made = max(made, now)
                next += seed == 0 ? 0.3 : 0.1 + Double(generator.next() % 900) / 1000
            }
            sim.step()
            t += 0.02
        }
        #expect(sim.clock.silenceSeconds - silenceBefore == 0, "holes after the reconnect")
        #expect(sim.clock.droppedSeconds - droppedBefore < 0.05)
        #expect(sim.maxAhead < 1.01)  // the lead, give or take a nudge
    }
}

extension StreamClockTests {
    /// An upstream that sends 2 s of its past on connect, then one 26 ms MP3 frame every 26 ms. The burst is cut
    /// below the lead, so each later frame goes to the encoder in the iteration it arrives in; cut to the lead
    /// exactly, every frame waited for the wall clock to make room for it (measured: 20–26 ms more latency at p50
    /// in low-latency mode, for good).
    @Test func framesAfterABurstAreNotHeldAtTheLead() {
        var clock = StreamClock(now: 1_000)
        var queue: [(arrived: Double, seconds: Double)] = [(1_000, 2.0)]
        var holds: [Double] = []
        let frame = 1152.0 / 44_100
        var next = 1_000 + frame
        var now = 1_000.0
        while now < 1_030 {
            now += 0.005
            while next <= now {
                queue.append((next, frame))
                next += frame
            }
            let step = clock.step(now: now, queued: queue.reduce(0) { $0 + $1.seconds }, finite: false)
            for (amount, released) in [(step.drop, false), (step.release, true)] {
                var left = amount
                while left > 1e-9, !queue.isEmpty {
                    let taken = min(left, queue[0].seconds)
                    left -= taken
                    queue[0].seconds -= taken
                    if queue[0].seconds <= 1e-9 {
                        if released && queue[0].arrived > 1_005 { holds.append(now - queue[0].arrived) }
                        queue.removeFirst()
                    }
                }
            }
        }
        holds.sort()
        #expect(holds.count > 900)
        #expect(holds[holds.count / 2] < 0.006 && holds[holds.count * 99 / 100] < 0.006, "median and p99 hold")
        #expect(clock.ahead(now: now) < 1.0 - 0.05)
    }
}
