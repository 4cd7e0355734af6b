/// The stream clock of a live station: keeps the encoded audio in step with the wall clock. A pure value: every
/// decision takes `now` (monotonic seconds) and the seconds of audio encoded so far, so tests drive it on virtual
/// time; the pipeline thread only carries the decisions out.
///
/// - Pacing (files, or `--pace yes`): read-ahead is fed to the stages only while the stream is at most `lead`
///   seconds ahead of the clock, and the thread naps while it is further ahead with nothing else to do.
/// - Silence: once the audio is more than `silenceAfter` behind the clock (the upstream is away or slow), silence is
///   encoded up to `silenceAfter / 2` behind, so listeners keep a valid, real-time stream.
struct StreamClock: Equatable {
    struct Settings: Equatable {
        /// Seconds a paced stream may run ahead of the wall clock.
        var lead = 0.25
        /// Seconds behind the clock before silence fills in.
        var silenceAfter = 0.5
        /// The longest nap while a paced stream is ahead, so stop requests and the network stay responsive.
        var longestNap = 0.02
        /// Silence encoded in one step at most, so one step never builds an unbounded buffer.
        var longestSilenceStep = 1.0
    }

    let settings: Settings
    /// Monotonic time at which the stream's second 0 was due.
    private(set) var origin: Double

    init(settings: Settings = Settings(), now: Double) {
        self.settings = settings
        self.origin = now
    }

    /// Seconds the audio is ahead of the wall clock (negative: behind).
    func ahead(now: Double, encoded: Double) -> Double { encoded - (now - origin) }

    /// Paced: whether the next piece of read-ahead may go to the stages now.
    func mayFeed(now: Double, encoded: Double) -> Bool { ahead(now: now, encoded: encoded) <= settings.lead }

    /// Paced and with nothing to read: how long to nap before the clock catches up with the lead (nil: no nap).
    func nap(now: Double, encoded: Double) -> Double? {
        let early = ahead(now: now, encoded: encoded) - settings.lead
        guard early > 0 else { return nil }
        // A millisecond past the point where the next piece may go, so the nap does not wake just short of it.
        return min(settings.longestNap, early) + 0.001
    }

    /// Seconds of silence to encode now: none until the audio is `silenceAfter` behind, then up to half of that.
    func silence(now: Double, encoded: Double) -> Double {
        let behind = -ahead(now: now, encoded: encoded)
        guard behind.isFinite, behind > settings.silenceAfter else { return 0 }
        return min(settings.longestSilenceStep, behind - settings.silenceAfter / 2)
    }

    /// Frames at `rate` for `seconds` of silence, never trapping (0 for anything not finite and positive).
    static func frames(_ seconds: Double, rate: Int) -> Int {
        let value = (seconds * Double(rate)).rounded(.down)
        guard value.isFinite, value >= 1 else { return 0 }
        return Int(min(value, Double(Int32.max)))
    }
}
