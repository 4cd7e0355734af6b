import RadioRelayTestSupport
import Testing

@testable import RadioRelay

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
