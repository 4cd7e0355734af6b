import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// What the listener-rule suites share (`ListenerScheduleTests`, `ListenerWriteTimingTests`): the schedule under test
/// (300 ms flush interval, 10 s max lag, 2 s burst) and a listener caught up to a page.
protocol ListenerScheduleFixture {}

extension ListenerScheduleFixture {
    var schedule: ListenerSchedule { ListenerSchedule(flushInterval: 0.3, maxLag: 10, burst: 2) }

    /// A listener that has received everything up to `cursor`, between pages, last written (in turn) at `lastFlush`
    /// with page `cursor - 1` the newest (`FakeRing`'s 100 ms pages).
    func caughtUp(at cursor: Int64, lastFlush: Double = 0) -> ListenerState {
        var state = ListenerState()
        state.headersSent = 2
        state.headerCount = 2
        state.cursor = cursor
        state.lastFlush = lastFlush
        state.writtenAt = cursor * 4800
        return state
    }
}

/// The listener rules on virtual time: a fake ring of page metadata, a fake clock, no sockets, no sleeping.
@Suite struct ListenerScheduleTests: ListenerScheduleFixture {
    /// Page metadata as the schedule sees it: 100 ms audio pages, the `n`-th audio page ending at n × 4800 on the
    /// timeline; `startLink` adds a chained link's two header pages, which become the headers once the link's first
    /// audio page is published (as in `PageRing`).
    struct FakeRing: PageWindow {
        var oldest: Int64 = 0
        var timelines: [Int64] = []
        var continued: [Bool] = []
        var headerFlags: [Bool] = []
        var links: [Int64] = []
        var headerCount = 2
        var headerLink: Int64 = -1
        /// Pages the ring holds at most (older ones leave it).
        var capacity = 400
        var audioPages: Int64 = 0
        /// The timeline position the newest audio page ends at.
        var position: Int64 = 0
        /// How long each audio page `publish` adds is, in granules (100 ms).
        var pageGranules: Int64 = 4800
        var newestLink: Int64 = -1
        var pendingLink: Int64?

        init(pages: Int = 0, capacity: Int = 400, headers: Int = 2) {
            self.capacity = capacity
            headerCount = headers
            publish(pages)
        }

        var count: Int { timelines.count }
        func timeline(at offset: Int) -> Int64 { timelines[offset] }
        func isContinued(at offset: Int) -> Bool { continued[offset] }
        func isHeader(at offset: Int) -> Bool { headerFlags[offset] }
        func link(at offset: Int) -> Int64 { links[offset] }

        /// Publishes `n` clean audio pages of `granules` each (`pageGranules` when nil).
        mutating func publish(_ n: Int, granules: Int64? = nil) {
            for _ in 0..<n {
                audioPages += 1
                position += granules ?? pageGranules
                append(header: false)
                if let pending = pendingLink {
                    headerLink = pending
                    pendingLink = nil
                }
            }
        }

        /// Publishes a new link's BOS and OpusTags pages.
        mutating func startLink() {
            newestLink = head
            pendingLink = head
            append(header: true)
            append(header: true)
        }

        private mutating func append(header: Bool) {
            timelines.append(position)
            continued.append(false)
            headerFlags.append(header)
            links.append(newestLink)
            if timelines.count > capacity {
                timelines.removeFirst()
                continued.removeFirst()
                headerFlags.removeFirst()
                links.removeFirst()
                oldest += 1
            }
        }

        mutating func markContinued(_ indices: some Sequence<Int64>) {
            for index in indices { continued[Int(index - oldest)] = true }
        }
    }

    // MARK: Where a listener starts

    @Test func aNewListenerStartsAtTheFirstCleanPageWithinTheBurst() {
        var ring = FakeRing(pages: 50)  // 5 s; live edge granule 240 000; 2 s before it: 144 000
        #expect(schedule.burstStart(ring) == 30)
        ring.markContinued([30])
        #expect(schedule.burstStart(ring) == 31)
        var state = ListenerState()
        #expect(schedule.plan(&state, now: 0, window: ring) == .write(end: 50))
        #expect(state.cursor == 31)
    }

    @Test func withoutACleanPageInTheBurstItStartsAtTheLiveEdge() {
        var ring = FakeRing(pages: 50)
        ring.markContinued(30..<50)
        #expect(schedule.burstStart(ring) == 29)  // the newest clean page
        ring.markContinued(0..<30)
        #expect(schedule.burstStart(ring) == 50)  // none clean: the head, it waits for the next page
        #expect(schedule.liveEdge(ring) == 50)
        let noBurst = ListenerSchedule(flushInterval: 0.3, maxLag: 10, burst: 0)
        #expect(noBurst.burstStart(FakeRing(pages: 50)) == 49)
    }

    @Test func anEmptyRingGivesHeadersOnly() {
        var state = ListenerState()
        let ring = FakeRing(pages: 0)
        #expect(schedule.burstStart(ring) == 0)
        #expect(schedule.plan(&state, now: 0, window: ring) == .write(end: 0))
        #expect(state.cursor == 0)
        var bare = ListenerState()
        #expect(schedule.plan(&bare, now: 0, window: FakeRing(pages: 0, headers: 0)) == .write(end: 0))
        #expect(bare.cursor == nil)  // nothing at all yet: no place chosen
    }

    // MARK: Lag

    @Test func lagIsMeasuredFromTheNextPageToTheLiveEdge() {
        let ring = FakeRing(pages: 200, capacity: 100)  // holds 100..<200
        #expect(schedule.lag(of: ListenerState(), in: ring) == .seconds(0))
        #expect(schedule.lag(of: caughtUp(at: 200), in: ring) == .seconds(0))
        #expect(schedule.lag(of: caughtUp(at: 150), in: ring) == .seconds(4.9))
        #expect(schedule.lag(of: caughtUp(at: 0), in: FakeRing(pages: 0)) == .seconds(0))
        var partial = caughtUp(at: 90)
        partial.offset = 10
        partial.partialTimeline = 91 * 4800
        #expect(schedule.lag(of: partial, in: ring) == .seconds(10.9))  // its page left the ring but is kept
        #expect(schedule.lag(of: caughtUp(at: 90), in: ring) == .overtaken)
    }

    // MARK: Moving and dropping

    @Test func aListenerTooFarBehindIsMovedOnceToACleanPage() {
        var ring = FakeRing(pages: 200)
        ring.markContinued([199])
        var state = caughtUp(at: 79)  // 12 s behind
        state.partialTimeline = 123
        #expect(schedule.plan(&state, now: 1, window: ring) == .moved(from: .seconds(12), end: 200))
        #expect(state.cursor == 198 && state.moved && state.partialTimeline == nil)
        #expect(schedule.plan(&state, now: 2, window: ring) == .write(end: 200))
        #expect(state.lastFlush == 2)  // the write counts from now
    }

    @Test func aListenerMidPageFinishesThatPageBeforeItIsMoved() {
        let ring = FakeRing(pages: 200)
        var state = caughtUp(at: 80)
        state.offset = 17
        #expect(schedule.plan(&state, now: 1, window: ring) == .write(end: 81))
        #expect(!state.moved && state.cursor == 80)
        var headersPending = caughtUp(at: 80)
        headersPending.headersSent = 1
        #expect(schedule.plan(&headersPending, now: 1, window: ring) == .write(end: 81))
        #expect(!headersPending.moved)
    }

    /// `max_listener_duration`: past its end a listener finishes the page (or header) in progress, then ends at a page
    /// boundary, whatever its lag.
    @Test func aSessionPastItsEndFinishesItsPageThenEnds() {
        let ring = FakeRing(pages: 200)
        var state = caughtUp(at: 190)
        state.endsAt = 5
        #expect(schedule.plan(&state, now: 4.9, window: ring) == .write(end: 200))
        state.offset = 300
        #expect(schedule.plan(&state, now: 5, window: ring) == .write(end: 191), "the page in progress only")
        state.offset = 0
        state.cursor = 191
        #expect(schedule.plan(&state, now: 5.1, window: ring) == .end)
        var behind = caughtUp(at: 20)  // 18 s behind: it would be moved, but its session is over
        behind.endsAt = 1
        #expect(schedule.plan(&behind, now: 2, window: ring) == .end)
        var headers = caughtUp(at: 150)
        headers.headersSent = 1
        headers.endsAt = 0
        #expect(schedule.plan(&headers, now: 1, window: ring) == .write(end: 151), "its headers and one page first")
    }

    @Test func aListenerIsDroppedWhenItFallsBehindAgainOrTwiceTheAllowance() {
        let ring = FakeRing(pages: 300)
        var moved = caughtUp(at: 179)  // 12 s behind, after a move
        moved.moved = true
        #expect(schedule.plan(&moved, now: 1, window: ring) == .drop(.behind(seconds: 12, afterMove: true)))
        var far = caughtUp(at: 69)  // 23 s behind: more than twice max lag
        #expect(schedule.plan(&far, now: 1, window: ring) == .drop(.behind(seconds: 23, afterMove: false)))
        #expect(SlowReason.behind(seconds: 23, afterMove: false).description == "too slow (23 s behind)")
        #expect(SlowReason.behind(seconds: 12.7, afterMove: true).description == "too slow (12 s behind after a move)")
    }

    @Test func aListenerTheRingOvertookIsTreatedLikeAnyTooSlowOne() {
        let ring = FakeRing(pages: 300, capacity: 150)  // holds 150..<300
        var clean = caughtUp(at: 100)
        #expect(schedule.plan(&clean, now: 1, window: ring) == .moved(from: .overtaken, end: 300))
        #expect(clean.cursor == 299 && clean.moved)
        var again = caughtUp(at: 100)
        again.moved = true
        #expect(schedule.plan(&again, now: 1, window: ring) == .drop(.overtaken(afterMove: true)))
        var headersPending = caughtUp(at: 100)
        headersPending.headersSent = 0
        #expect(schedule.plan(&headersPending, now: 1, window: ring) == .drop(.overtaken(afterMove: false)))
        #expect(SlowReason.overtaken(afterMove: true).description == "too slow (overtaken by the ring after a move)")
        #expect(SlowReason.overtaken(afterMove: false).description == "too slow (overtaken by the ring mid-page)")
    }

    /// The outage found from outside: the process stopped for 30 s, then one catch-up batch overtook every
    /// listener. Each is moved to the live edge (once); nothing traps.
    @Test func aThirtySecondStopMovesEveryListenerInsteadOfTrapping() {
        var ring = FakeRing(pages: 100, capacity: 150)
        var listeners = (0..<5).map { caughtUp(at: 95 + Int64($0), lastFlush: 10) }
        ring.publish(300)  // 30 s at once
        for i in listeners.indices {
            #expect(schedule.due(listeners[i], now: 40, window: ring) == .now)
            #expect(schedule.plan(&listeners[i], now: 40, window: ring) == .moved(from: .overtaken, end: 400))
            #expect(listeners[i].cursor == 399)
        }
    }

    // MARK: Configuration and numbers

    @Test func settingsComeFromTheConfigurationAndUnboundedNumbersNeverTrap() {
        let defaults = ListenerSchedule(BroadcasterConfiguration())
        #expect(defaults == ListenerSchedule(flush: .auto, maxLag: 10, burst: 2))
        #expect(defaults.burstGranules == 96_000)
        #expect(ListenerSchedule(flushInterval: 0.3, maxLag: 10, burst: .infinity).burstGranules == 0)
        #expect(ListenerSchedule(flushInterval: 0.3, maxLag: 10, burst: .nan).burstGranules == 0)
        #expect(ListenerSchedule(flushInterval: 0.3, maxLag: 10, burst: -1).burstGranules == 0)
        #expect(ListenerSchedule(flushInterval: 0.3, maxLag: 10, burst: 1e300).burstGranules == 1_000_000_000_000)
        #expect(wholeSeconds(12.9) == "12" && wholeSeconds(-3.5) == "-3")
        #expect(wholeSeconds(.infinity) == "∞" && wholeSeconds(-.infinity) == "-∞" && wholeSeconds(.nan) == "?")
        #expect(wholeSeconds(1e300) == "∞" && wholeSeconds(-1e300) == "-∞")
    }

    // MARK: The rules together

    /// A listener that takes one page per 200 ms while pages come every 100 ms falls behind, is moved once, falls
    /// behind again and is dropped; one that keeps up is never touched. Whole pages only, on virtual time.
    @Test func aSlowListenerIsMovedThenDroppedWhileAFastOneKeepsUp() {
        let schedule = ListenerSchedule(flushInterval: 0, maxLag: 1, burst: 0.5)
        var ring = FakeRing(pages: 5, capacity: 100)
        var fast = ListenerState()
        var slow = ListenerState()
        var events: [String] = []
        for tick in 1...200 {
            let now = Double(tick) * 0.1
            ring.publish(1)
            for (index, budget) in [(0, 1000), (1, tick % 2)] {
                var state = index == 0 ? fast : slow
                guard schedule.due(state, now: now, window: ring) == .now else { continue }
                let end: Int64
                switch schedule.plan(&state, now: now, window: ring) {
                case .write(let limit): end = limit
                case .moved(_, let limit):
                    events.append("\(index) moved at \(tick)")
                    end = limit
                case .drop, .end:
                    events.append("\(index) dropped at \(tick)")
                    end = -1
                }
                if end >= 0 {
                    state.headersSent = ring.headerCount
                    state.cursor = min(end, (state.cursor ?? end) + Int64(budget))
                    schedule.wrote(&state, now: now, window: ring)
                } else {
                    state.cursor = nil
                    state.moved = true
                }
                if index == 0 { fast = state } else if !events.contains("1 dropped at \(tick - 1)") { slow = state }
            }
            if events.contains(where: { $0.hasPrefix("1 dropped") }) { break }
        }
        #expect(events.count == 2, "\(events)")
        #expect(events.first?.hasPrefix("1 moved") == true)
        #expect(events.last?.hasPrefix("1 dropped") == true)
        #expect(fast.cursor == ring.head && !fast.moved)
    }
}
