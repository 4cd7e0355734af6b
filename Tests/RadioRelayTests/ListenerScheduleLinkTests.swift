import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// The listener rules with chained links (a title per link), on virtual time: a listener only ever gets audio pages
/// of the link whose headers it was given last, and lag and burst are read on the stream-wide timeline, since
/// granule positions start again in each link.
extension ListenerScheduleTests {
    /// 5 s of link -1 (pages 0..<50), a link started at page 50 (headers 50, 51) and 1 s of its audio (52..<62).
    static func ringWithALinkOneSecondOld() -> FakeRing {
        var ring = FakeRing(pages: 50)
        ring.startLink()
        ring.publish(10)
        return ring
    }

    @Test func aListenerWhoJoinsAfterATitleChangeGetsTheNewLinksHeadersAndABurstWithinIt() {
        let ring = Self.ringWithALinkOneSecondOld()
        #expect(ring.headerLink == 50)
        // A 2 s burst would start at page 41, in the link before: it starts at the new link's first audio page.
        #expect(schedule.burstStart(ring) == 52)
        var state = ListenerState()
        #expect(schedule.plan(&state, now: 0, window: ring) == .write(end: 62))
        #expect(state.cursor == 52 && state.headerCount == 2 && state.link == 50)
        // The live edge, where a moved listener lands, is in the new link too (never its header pages).
        #expect(schedule.liveEdge(ring) == 61)
    }

    @Test func untilTheNewLinksFirstAudioPageAJoinerStartsInTheLinkBeforeAndGetsTheNewHeadersInSequence() {
        var ring = FakeRing(pages: 50)
        ring.startLink()  // pages 50, 51: headers only, no audio of the link yet
        #expect(ring.headerLink == -1)
        #expect(schedule.burstStart(ring) == 30)  // 2 s back, in link -1, whose headers it gets
        #expect(schedule.liveEdge(ring) == 49)
        var state = ListenerState()
        #expect(schedule.plan(&state, now: 0, window: ring) == .write(end: 52))  // through the new BOS and tags
        #expect(state.link == -1)
    }

    @Test func lagIsReadOnTheTimelineAcrossLinks() {
        var ring = FakeRing(pages: 100)
        ring.startLink()
        ring.publish(50)  // 15 s of audio in all; the link's granules would start again at page 102
        #expect(schedule.lag(of: caughtUp(at: 59), in: ring) == .seconds(9))  // page 59 ends at 6.0 s, live 15.0 s
        #expect(schedule.lag(of: caughtUp(at: 100), in: ring) == .seconds(5))  // the BOS page: where link -1 ended
        #expect(schedule.lag(of: caughtUp(at: 121), in: ring) == .seconds(3))
    }

    @Test func aListenerMovedAcrossALinkBoundaryGetsTheCurrentLinksHeadersFirst() {
        var ring = FakeRing(pages: 100)
        ring.startLink()
        ring.publish(50)
        var state = caughtUp(at: 19)  // 13 s behind, still in link -1
        #expect(schedule.plan(&state, now: 1, window: ring) == .moved(from: .seconds(13), end: 152))
        #expect(state.cursor == 151 && state.moved)
        #expect(state.headersSent == 0 && state.headerCount == 2 && state.link == 100)
        #expect(schedule.hasPending(state, ring))
        // One already in the current link is moved within it, with no headers again.
        var current = caughtUp(at: 106)
        current.link = 100
        ring.publish(80)
        #expect(schedule.plan(&current, now: 2, window: ring) == .moved(from: .seconds(12.5), end: 232))
        #expect(current.cursor == 231 && current.headersSent == 2 && current.link == 100)
    }

    /// What listeners receive while titles change every 1.5 s: one that keeps up, one that reads half the pace
    /// (moved, then dropped), and one joining at every tick for a while. Each must get headers before any audio, and
    /// only audio of the link whose headers it got last, however it came to that link: headers at its start, a
    /// BOS page in sequence, or headers again after a move.
    @Test func everyListenerOnlyEverGetsAudioOfTheLinkItHasTheHeadersOf() {
        let schedule = ListenerSchedule(flushInterval: 0, maxLag: 2, burst: 1)
        var ring = FakeRing(pages: 30, capacity: 100)
        enum Received: Equatable {
            case headers(link: Int64)
            case page(link: Int64, header: Bool)
        }
        struct Simulated {
            var state = ListenerState()
            var heldHeaders: Int64?
            var received: [Received] = []
            var dropped = false
            let pagesPerTick: Int
        }
        var listeners = [Simulated(pagesPerTick: 1000), Simulated(pagesPerTick: 1)]
        for tick in 1...200 {
            let now = Double(tick) * 0.1
            if tick % 15 == 0 { ring.startLink() }
            ring.publish(tick % 2)  // 100 ms of audio every other tick: a slow reader's budget is 1 page a tick
            if tick < 40 { listeners.append(Simulated(pagesPerTick: 1000)) }
            for i in listeners.indices where !listeners[i].dropped {
                let budget = listeners[i].pagesPerTick == 1 ? tick % 4 / 3 : 1000  // the slow one: one in 4 ticks
                let end: Int64
                switch schedule.plan(&listeners[i].state, now: now, window: ring) {
                case .write(let limit), .moved(_, let limit): end = limit
                case .drop, .end:
                    listeners[i].dropped = true
                    continue
                }
                // As the loop does: headers it does not hold yet are the window's; then pages in order.
                var state = listeners[i].state
                if state.headersSent < state.headerCount {
                    listeners[i].received.append(.headers(link: state.link))
                    state.headersSent = state.headerCount
                }
                var cursor = state.cursor ?? end
                while cursor < end && cursor < (state.cursor ?? end) + Int64(budget) {
                    let offset = Int(cursor - ring.oldest)
                    listeners[i].received.append(.page(link: ring.link(at: offset), header: ring.isHeader(at: offset)))
                    state.link = ring.link(at: offset)
                    cursor += 1
                }
                state.cursor = cursor
                listeners[i].state = state
            }
        }
        #expect(listeners[1].state.moved && listeners[1].dropped, "the slow one is moved, then dropped")
        #expect(!listeners[0].state.moved && listeners[0].state.cursor == ring.head)
        for (index, listener) in listeners.enumerated() {
            var current: Int64?
            var valid = true
            for item in listener.received {
                switch item {
                case .headers(let link): current = link
                case .page(let link, header: true): current = link
                case .page(let link, header: false): valid = valid && current == link
                }
            }
            var startsWithHeaders = false
            if case .headers = listener.received.first { startsWithHeaders = true }
            #expect(valid && startsWithHeaders, "listener \(index): \(listener.received)")
        }
        // The slow one was moved across a boundary: it got headers twice, the second time the current link's.
        let headers = listeners[1].received.filter { if case .headers = $0 { true } else { false } }
        #expect(headers.count == 2, "\(listeners[1].received)")
        #expect(listeners.count > 40)
    }
}
