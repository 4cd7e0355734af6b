import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// The stream clock of a station: decides, on every iteration of the pipeline loop, how much decoded audio goes to
/// the Encoder, how much is dropped, how much silence fills in, and whether the upstream may be read. A pure value:
/// every decision takes `now` (monotonic seconds) and how much decoded audio waits, so tests drive it on virtual
/// time; the pipeline only carries the decisions out.
///
/// `ahead` is the audio encoded so far minus the wall-clock time since the stream's origin. A listener that reads at
/// real time keeps up exactly when `ahead` stays bounded, so the rules are about `ahead`:
/// - **Lead.** `ahead` never exceeds `maxLead`. A finite upstream (a file, a response with a length) is simply not
///   read further (back-pressure, nothing lost); a live one that sends faster than real time (a burst on connect, a
///   fast clock) has its oldest decoded audio dropped, keeping the newest, once more than half a lead waits beyond
///   the lead (so the pieces of a stream that runs at its lead are not trimmed one by one).
/// - **Jitter and silence.** Audio that is late by up to `jitter` is waited for; past that, silence fills in up to
///   half of it. A short gap bridged so stays as a little more buffer (an adaptive jitter buffer: the next late
///   arrival of that size needs no silence). An outage (a silence run of `outage` or more) is remembered as `debt`:
///   when late audio then arrives, as much of the oldest queued audio as the debt (and no more than brings `ahead`
///   back to its reference) is dropped, so latency returns to what it was before the outage.
/// - **Pauses.** A gap between two iterations longer than `pause` is time the loop did not run (SIGSTOP, a VM
///   pause): the origin moves by it instead of silence filling it.
/// - **Drift.** An upstream whose clock runs a little fast or slow moves the low envelope of `ahead` away from its
///   reference; the clock then asks for a small rate correction (`nudge`, at most `maxNudge`), which the PCM queue
///   applies by leaving out or repeating single samples, so a steady ±300 ppm causes no gap and no skip.
struct StreamClock: Equatable {
    struct Settings: Equatable {
        /// Seconds the audio may run ahead of the wall clock.
        var maxLead = 1.0
        /// Below the lead a burst is cut to, so the live pieces after it pass without waiting for room.
        var headroom = 0.1
        /// A silence run this long is an outage, whose silence late audio may take back.
        var outage = 1.0
        /// Seconds of lateness waited for before silence fills in: about ten MP3 frames, more than the arrival
        /// jitter of a healthy TCP stream (Icecast sends every 100–250 ms), well under what a listener notices as
        /// a gap being bridged late.
        var jitter = 0.3
        /// An iteration gap longer than this is a pause of the process, not an outage.
        var pause = 0.5
        /// Silence is encoded in steps of at most this much, so one step never builds an unbounded buffer.
        var longestSilenceStep = 0.2
        /// The low envelope of `ahead` may wander this far from its reference before the rate is nudged.
        var driftBand = 0.08
        /// The largest rate correction (1000 ppm: one sample in a thousand, inaudible).
        var maxNudge = 0.001
        /// Seconds of continuous audio after which the envelope becomes the reference, and debt expires.
        var settle = 4.0
        /// The longest nap while a finite upstream is held back, so stop requests stay responsive.
        var longestNap = 0.02
    }

    /// What one iteration does, in seconds of audio at the common rate.
    struct Step: Equatable {
        /// Oldest queued audio to drop (before releasing).
        var drop = 0.0
        /// Queued audio to hand to the Encoder.
        var release = 0.0
        /// Silence to encode after it.
        var silence = 0.0
        /// Rate correction for the released audio: > 0 leaves samples out, < 0 repeats some.
        var nudge = 0.0
        /// Whether the upstream may be read (false: a finite upstream is held back at the lead).
        var mayRead = true
    }

    private(set) var settings: Settings
    /// Monotonic time of the stream's second 0, moved forward by pauses.
    private(set) var origin: Double
    /// Seconds of audio handed to the Encoder, silence included.
    private(set) var encoded = 0.0
    /// Silence inserted during outages that late audio may still take back.
    private(set) var debt = 0.0
    /// Seconds of silence inserted since audio last flowed.
    private var silenceRun = 0.0
    /// The low envelope of `ahead` the stream settled at; nil until it settles.
    private(set) var reference: Double?
    private(set) var nudge = 0.0
    private(set) var pausedSeconds = 0.0
    private(set) var droppedSeconds = 0.0
    private(set) var silenceSeconds = 0.0
    private var lastNow: Double
    /// Since when audio has flowed without silence.
    private var flowingSince: Double?
    /// The low envelope of `ahead` over the last `settle` seconds: minimum per quarter of the window.
    private var envelope = Envelope()

    init(settings: Settings = Settings(), now: Double) {
        self.settings = settings
        self.origin = now
        self.lastNow = now
    }

    /// New settings (a reload); the stream's state goes on.
    mutating func update(settings: Settings) { self.settings = settings }

    /// A new upstream connection (its first bytes): the outage's silence before it is not taken back from its audio.
    /// A new connection's join burst is the upstream's own buffer, not our late audio: the lead rule keeps up to
    /// `maxLead` of it as the cushion that rides out the new upstream's settling (an edge's restarted root, which
    /// bursts, then sends in clumps while its own upstream settles).
    mutating func connected() {
        silenceRun = 0
        debt = 0
    }

    /// Seconds the encoded audio is ahead of the wall clock (negative: behind).
    func ahead(now: Double) -> Double { encoded - (now - origin) }

    /// One iteration at `now` with `queued` seconds of decoded audio waiting. `finite`: the upstream can be held
    /// back (nothing is dropped); otherwise it is live.
    mutating func step(now: Double, queued: Double, finite: Bool) -> Step {
        var step = Step()
        let gap = now - lastNow
        lastNow = now
        if gap > settings.pause {
            origin += gap
            pausedSeconds += gap
        }
        let wall = now - origin
        var waiting = max(0, queued.isFinite ? queued : 0)
        if waiting > 0 && silenceRun > 0 {
            // A short gap bridged while debt remains means the cushion is too small: the bridge stays as buffer (no
            // more silence taken back), or every late arrival would be a hole followed by a skip.
            if silenceRun >= settings.outage { debt += silenceRun } else { debt = 0 }
            silenceRun = 0
        }
        // Late audio after an outage's silence: take the silence back from the oldest queued audio.
        if debt > 0 && waiting > 0 {
            let excess = encoded + waiting - wall - (reference ?? 0)
            let take = min(debt, waiting, max(0, excess))
            if take > 0 {
                step.drop += take
                debt -= take
                waiting -= take
            }
        }
        let room = wall + settings.maxLead - encoded
        if finite {
            step.release = min(waiting, max(0, room))
            step.mayRead = encoded + waiting < wall + settings.maxLead
        } else {
            // Audio beyond the lead waits (unencoded) up to half a lead more, so that pieces of a normal size keep
            // flowing when the stream runs at its lead; past that, everything but the newest `room` less a little
            // headroom is dropped at once: one clean cut, not a cut on every piece while a burst arrives. The
            // headroom lets the pieces that follow pass at once; cut to the lead exactly, each new piece would wait
            // for the wall clock to make room for it (up to a piece's length of latency, for good).
            let over = waiting - max(0, room)
            if over > settings.maxLead / 2 {
                let cut = min(waiting, over + settings.headroom)
                step.drop += cut
                waiting -= cut
            }
            step.release = min(waiting, max(0, room))
        }
        droppedSeconds += step.drop
        step.nudge = steer(now: now, release: step.release)
        encoded += step.release * (1 - step.nudge)
        let behind = wall - encoded
        if behind > settings.jitter {
            step.silence = min(settings.longestSilenceStep, behind - settings.jitter / 2)
            encoded += step.silence
            silenceSeconds += step.silence
            silenceRun += step.silence
            flowingSince = nil
            envelope = Envelope()
        }
        return step
    }

    /// Tracks the envelope while audio flows and chooses the rate correction.
    private mutating func steer(now: Double, release: Double) -> Double {
        guard release > 0 || flowingSince != nil else { return 0 }
        let since = flowingSince ?? now
        flowingSince = since
        envelope.note(ahead(now: now) + release, at: now, window: settings.settle)
        guard now - since >= settings.settle, let low = envelope.minimum else { return nudge }
        if reference == nil { reference = low }
        if now - since >= 2 * settings.settle { debt = 0 }
        let target = reference ?? low
        if low > target + settings.driftBand {
            nudge = settings.maxNudge
        } else if low < target - settings.driftBand {
            nudge = -settings.maxNudge
        } else if (nudge > 0 && low <= target) || (nudge < 0 && low >= target) {
            nudge = 0
        }
        return nudge
    }

    /// Paced reading: whether the next piece of a finite upstream may be decoded now.
    func mayFeed(now: Double, queued: Double) -> Bool {
        encoded + queued - (now - origin) < settings.maxLead
    }

    /// A finite upstream held at the lead: how long to nap before the clock makes room (nil: no nap).
    func nap(now: Double, queued: Double) -> Double? {
        let early = encoded + queued - (now - origin) - settings.maxLead
        guard early > 0 else { return nil }
        return min(settings.longestNap, early) + 0.001
    }
}

/// The minimum of a value over a sliding window, kept as four quarter-window buckets (no allocation).
struct Envelope: Equatable {
    private var buckets: [Double] = [.infinity, .infinity, .infinity, .infinity]
    private var bucketStart: Double?

    var minimum: Double? {
        let low = buckets.min() ?? .infinity
        return low.isFinite ? low : nil
    }

    mutating func note(_ value: Double, at now: Double, window: Double) {
        let width = window / 4
        if let start = bucketStart, now - start < width {
            buckets[3] = min(buckets[3], value)
            return
        }
        let elapsed = bucketStart.map { Int(min(4, max(1, ((now - $0) / width).rounded(.down)))) } ?? 4
        for _ in 0..<elapsed {
            buckets.removeFirst()
            buckets.append(.infinity)
        }
        buckets[3] = value
        bucketStart = now
    }
}
