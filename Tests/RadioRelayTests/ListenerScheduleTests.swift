import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// The listener rules on virtual time: a fake ring of page metadata, a fake clock, no sockets, no sleeping.
@Suite struct ListenerScheduleTests {
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

        /// Publishes `n` clean 100 ms audio pages.
        mutating func publish(_ n: Int) {
            for _ in 0..<n {
                audioPages += 1
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
            timelines.append(audioPages * 4800)
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

    let schedule = ListenerSchedule(flushInterval: 0.3, maxLag: 10, burst: 2)

    /// A listener that has received everything up to `cursor`, between pages.
    func caughtUp(at cursor: Int64, lastFlush: Double = 0) -> ListenerState {
        var state = ListenerState()
        state.headersSent = 2
        state.headerCount = 2
        state.cursor = cursor
        state.lastFlush = lastFlush
        return state
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

    // MARK: When writes are due

    @Test func writesFollowPagesAfterThreeQuartersOfTheInterval() {
        let ring = FakeRing(pages: 10)
        var state = caughtUp(at: 9, lastFlush: 100)
        #expect(schedule.due(state, now: 100.2, window: ring) == .at(100.6))  // a page waits: fallback at 2×
        #expect(schedule.due(state, now: 100.23, window: ring) == .now)  // ¾ of 300 ms have passed
        state.cursor = 10
        #expect(schedule.due(state, now: 100.2, window: ring) == .idle)  // nothing waits
        state.backedUp = true
        #expect(schedule.due(state, now: 100.01, window: ring) == .now)  // backed up: when looked at, at once
        #expect(schedule.due(ListenerState(), now: 0, window: ring) == .now)  // never written: at once
    }

    /// A backed-up listener is looked at again when its lag would cross the next line at the stream's pace: maxLag,
    /// then (not moved yet, mid-page) twice it; past its last line, or overtaken, after the floor.
    @Test func aBackedUpListenerIsLookedAtWhenItsLagCrossesALine() {
        var ring = FakeRing(pages: 100)
        var state = caughtUp(at: 70)  // 2.9 s behind
        state.backedUp = true
        #expect(abs(schedule.recheck(state, now: 50, window: ring) - (50 + 7.1 + 0.1)) < 1e-9)
        ring.publish(150)  // 250 pages: 17.9 s behind
        #expect(abs(schedule.recheck(state, now: 50, window: ring) - (50 + 2.1 + 0.1)) < 1e-9)
        state.moved = true  // dropped at its next look: at once
        #expect(abs(schedule.recheck(state, now: 50, window: ring) - (50 + 0.2)) < 1e-9)
        var overtaken = FakeRing(pages: 300, capacity: 100)
        overtaken.publish(0)
        #expect(abs(schedule.recheck(caughtUp(at: 50), now: 50, window: overtaken) - (50 + 0.2)) < 1e-9)
        #expect(schedule.recheck(ListenerState(), now: 0, window: FakeRing()) == 10.1)  // nothing yet: maxLag on
    }

    /// A listener that stops reading for good, on virtual time with a page every 100 ms: looked at only when its
    /// lag crosses a line — moved to the live edge once past 10 s, dropped once 10 s behind again — not at each of
    /// the 200 publications (the loop used to try a `sendmsg` on it at every one).
    @Test func aStalledListenerIsLookedAtTwiceInTwentySeconds() {
        var ring = FakeRing(pages: 30, capacity: 400)
        var state = caughtUp(at: 30)
        state.backedUp = true
        var due = schedule.recheck(state, now: 3, window: ring)
        var looks: [(at: Double, action: String)] = []
        for tick in 31...260 {
            let now = Double(tick) * 0.1
            ring.publish(1)
            guard now >= due else { continue }
            switch schedule.plan(&state, now: now, window: ring) {
            case .write: looks.append((now, "write"))
            case .moved: looks.append((now, "moved"))
            case .drop: looks.append((now, "drop"))
            }
            if looks.last?.action == "drop" { break }
            due = schedule.recheck(state, now: now, window: ring)
        }
        // Lag grows a page at a time: a look that finds it just at the line writes nothing and comes again 0.1 s on.
        #expect(looks.filter { $0.action != "write" }.map(\.action) == ["moved", "drop"], "\(looks)")
        #expect(looks.count <= 4, "\(looks)")
        #expect(looks.first { $0.action == "moved" }.map { (13.0...13.3).contains($0.at) } == true, "\(looks)")
        #expect(looks.last.map { (23.0...23.5).contains($0.at) } == true, "\(looks)")
    }

    @Test func pendingCountsHeadersAndPages() {
        let ring = FakeRing(pages: 10)
        var state = caughtUp(at: 10)
        #expect(!schedule.hasPending(state, ring))
        state.headersSent = 1
        #expect(schedule.hasPending(state, ring))
        var fresh = ListenerState()
        fresh.headersSent = 2
        #expect(schedule.hasPending(fresh, ring))
        #expect(!schedule.hasPending(fresh, FakeRing(pages: 0)))
        let everyPage = ListenerSchedule(flushInterval: 0, maxLag: 10, burst: 2)
        #expect(everyPage.due(caughtUp(at: 10, lastFlush: 5), now: 5, window: ring) == .now)
    }

    @Test func theLoopSleepsUntilTheEarliestDeadlineWithinBounds() {
        #expect(ListenerSchedule.waitMilliseconds(until: nil, now: 10) == 500)
        #expect(ListenerSchedule.waitMilliseconds(until: 10.1234, now: 10) == 124)
        #expect(ListenerSchedule.waitMilliseconds(until: 9, now: 10) == 0)
        #expect(ListenerSchedule.waitMilliseconds(until: 11, now: 10) == 500)
        #expect(ListenerSchedule.waitMilliseconds(until: -.infinity, now: 10) == 0)
        #expect(ListenerSchedule.waitMilliseconds(until: .infinity, now: 10) == 500)
        #expect(ListenerSchedule.waitMilliseconds(until: .nan, now: 10) == 0)
        #expect(ListenerSchedule.waitMilliseconds(until: 10.2, now: 10, cap: 50) == 50)
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
                case .drop:
                    events.append("\(index) dropped at \(tick)")
                    end = -1
                }
                if end >= 0 {
                    state.headersSent = ring.headerCount
                    state.cursor = min(end, (state.cursor ?? end) + Int64(budget))
                    state.lastFlush = now
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

/// When a listener is written, against pages published on the MP3 frame grid (an upstream's 1152-sample frames at
/// 44.1 kHz, 26.12 ms, each completing a 20 ms page or so): with a flush interval, a write waits for the first
/// publication ¾ of the interval after the last write, so audio that completes a page just after a write waits up
/// to the interval; with `--flush-ms 0`, every publication is written at once.
@Suite struct ListenerWriteScheduleTests {
    /// Waits, in publications, between the page holding each 1-second marker and the write that sends it, over
    /// `seconds` of publications every 26.12 ms, for a listener whose first write is at `join`.
    static func waits(flush: Double, join: Double, seconds: Double = 12) -> [Int] {
        let schedule = ListenerSchedule(flushInterval: flush, maxLag: 10, burst: 2)
        var ring = ListenerScheduleTests.FakeRing(pages: 1)
        var state = ListenerState()
        state.lastFlush = join
        let frame = 1152.0 / 44_100
        var writes: [Int] = []
        var index = 0
        while Double(index) * frame < seconds {
            index += 1
            let now = Double(index) * frame
            ring.publish(1)
            guard now >= join else { continue }
            if schedule.due(state, now: now, window: ring) == .now {
                state.lastFlush = now
                writes.append(index)
            }
        }
        // The marker at second k is in the page published first at or after k s; it waits for the next write.
        return (Int(join.rounded(.up))..<Int(seconds)).compactMap { second in
            let published = Int((Double(second) / frame).rounded(.up))
            return writes.first { $0 >= published }.map { $0 - published }
        }
    }

    @Test func flushZeroWritesEveryPublicationAtOnce() {
        for join in [0.3, 2.0] { #expect(Self.waits(flush: 0, join: join).allSatisfy { $0 == 0 }) }
    }

    /// With the default 300 ms interval the waits make the sawtooth reported from a run said to be low-latency:
    /// writes every 9 frames (235 ms) against 38.28 frames a second, so each 1-second marker waits about 2.3 frames
    /// less than the one before and the wait wraps every ~4 s: 0, 7, 5, 2 frames, which with the 53 ms any marker
    /// takes are exactly the reported 53, 236, 184, 105 ms. It is the write schedule of a 300 ms flush interval, not
    /// held pages: with `--flush-ms 0` there is none (above).
    @Test func aFlushIntervalMakesTheFourSecondSawtooth() {
        let waits = Self.waits(flush: 0.3, join: 0.3)
        // In ms, plus the 53 ms a marker takes with no wait (20 ms page, a decoder frame, the encoder's lookahead).
        let frame = 1152.0 / 44.1
        #expect(waits.prefix(4).map { Int((Double($0) * frame).rounded()) + 53 } == [53, 236, 184, 105])
        for index in 4..<waits.count { #expect(abs(waits[index] - waits[index - 4]) <= 1, "a 4-second period") }
    }
}
