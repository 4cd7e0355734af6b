import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// Which of a station's inputs plays, and which are kept connected, as a pure value on virtual time (tests:
/// `InputSelectorTests`); the pipeline only tells it what each input does and carries out what it decides.
///
/// The inputs are in priority order (a live source, when the station takes one, at the top: `live`). The rules:
/// - the station plays the highest-priority **healthy** input: connected, its audio flowing, and — with dead-air
///   detection (`deadAir` > 0) — not silent for `deadAir` seconds;
/// - when the input that plays fails (refused, ended, stalled, nothing decodable) or goes silent, the best healthy
///   input takes over at once (`failed`, `deadAir`); with none healthy, the station goes on with the one it had (its
///   silence) until one is; an input still connecting for the first time is waited for (it fails within its connect
///   timeout if it is down), so a hot standby does not play first at start-up;
/// - a higher-priority input takes over from a healthy one only once it has itself been healthy — and, with dead-air
///   detection, not silent — for `recover` seconds without a break (`recovered`); so an input that comes and goes
///   faster than that never makes the station switch up; and a lower input never jumps ahead of a higher one that
///   is coming back (two inputs back at once: one switch, to the higher);
/// - a forced input (an operator's) plays while it is healthy, until released or until it fails; a release lets a
///   higher input that has been healthy for `recover` take over at once (`released`);
/// - connected are: the input that plays, every higher-priority one (the pipeline retries each on its own reconnect
///   schedule), on failure the next ones down until a healthy one is found (cold standby: a lower input is
///   connected only when needed), and with `hot` standby the input right below the one that plays, so that an ended
///   input is followed without a gap. An input silenced by dead air stays connected, so its recovery is heard.
///   When the station switches up, the inputs below that are no longer needed forget why they failed.
struct InputSelector: Equatable, Sendable {
    struct Settings: Equatable, Sendable {
        /// Seconds an input must be healthy (and sounding) without a break before it takes over from a lower one.
        var recover = 10.0
        /// Seconds of audio below the dead-air level after which an input counts as silent; 0: off.
        var deadAir = 0.0
        /// Keep the input right below the one that plays connected and decoding.
        var hotStandby = false
        /// Input 0 is a live source: it takes over as soon as its audio flows (no `recover` wait: a DJ going live is
        /// not a flapping upstream), and while it plays the input right below stays connected, so that the station
        /// hands back without a gap when the source leaves.
        var live = false
    }

    /// Why the station switched.
    enum Reason: String, Equatable, Sendable, CaseIterable {
        case failed = "failed"
        case deadAir = "dead air"
        case recovered = "recovered"
        case forced = "forced"
        case released = "released"
        /// A live source took over.
        case live = "live"
        /// The live source ended: the station went back to its inputs.
        case handBack = "hand-back"
        /// The input that played stopped delivering (a hang, a dead path) while a flowing standby could take over
        /// before the lead ran out; its connection is given up only by the stall rule.
        case late = "late"
    }

    struct Switch: Equatable, Sendable {
        var from: Int
        var to: Int
        var reason: Reason
        var at: Double
    }

    /// What the selector knows of one input.
    struct Input: Equatable, Sendable {
        /// Connected with its audio flowing, since when (nil: not).
        var flowingSince: Double?
        /// Why it is down, when it failed.
        var failure: String?
        /// Its audio has been below the dead-air level since this time (nil: it sounds).
        var quietSince: Double?
        /// When it last came back from dead air (its sound counts from then for `recover`).
        var soundSince: Double?
        /// Silent for `deadAir` or longer now (it stays so until it sounds again).
        var isDead = false
        /// Connected but its audio stopped coming while it played (`late`): not healthy until it flows again.
        var isLate = false
    }

    var settings: Settings
    private(set) var inputs: [Input]
    /// The input that plays (always one of them, healthy or not: its silence is what the station has).
    private(set) var playing: Int
    /// The input an operator forced, until released or until it fails.
    private(set) var forced: Int?
    /// An operator released a force since the last decision: a switch up that it allows is labelled `released`.
    private var releasedForce = false

    init(inputs count: Int, settings: Settings = Settings()) {
        self.settings = settings
        inputs = Array(repeating: Input(), count: max(1, count))
        // A station that takes live sources starts with its first other input: the source comes when it comes.
        playing = settings.live && count > 1 ? 1 : 0
    }

    /// The selector for a new list of inputs (a reload): `previous[i]` is the index new input `i` had, if it was
    /// in the list before. Those keep what is known of them; the input that plays goes on playing if it is still
    /// there (else the first, until the rules decide), and a force holds if its input is still there.
    func remapped(previous: [Int?], settings: Settings) -> InputSelector {
        var made = InputSelector(inputs: previous.count, settings: settings)
        for (index, old) in previous.enumerated() {
            guard let old, inputs.indices.contains(old) else { continue }
            made.inputs[index] = inputs[old]
            if old == playing { made.playing = index }
            if old == forced { made.forced = index }
        }
        return made
    }

    // MARK: What the pipeline tells it

    /// Input `index` connected and delivers audio (its first decodable audio, or again after a failure).
    mutating func flowing(_ index: Int, now: Double) {
        guard inputs.indices.contains(index), inputs[index].flowingSince == nil else { return }
        inputs[index].flowingSince = now
        inputs[index].failure = nil
        inputs[index].isLate = false
    }

    /// Input `index` is connected but its audio stopped coming (the pipeline's `lateAfter` with the station's lead
    /// nearly spent): it is not healthy, so a flowing input below takes over now, long before the stall rule gives its
    /// connection up; once it flows again it is healthy from then (`recover` counts from there).
    mutating func late(_ index: Int, now: Double) {
        guard inputs.indices.contains(index) else { return }
        inputs[index].flowingSince = nil
        inputs[index].isLate = true
    }

    /// Input `index` failed (refused, ended, stalled, nothing decodable): down until it flows again.
    mutating func failed(_ index: Int, reason: String, now: Double) {
        guard inputs.indices.contains(index) else { return }
        inputs[index].flowingSince = nil
        inputs[index].failure = reason
        inputs[index].quietSince = nil
        inputs[index].isDead = false
        inputs[index].isLate = false
        inputs[index].soundSince = nil
    }

    /// Input `index` was disconnected because it is not needed (a cold standby after the station switched up): not
    /// failed, not flowing; it starts afresh when it is connected again.
    mutating func idle(_ index: Int) {
        guard inputs.indices.contains(index) else { return }
        inputs[index] = Input()
    }

    /// A stretch of input `index`'s decoded audio was below the dead-air level (`quiet`) or not, ending at `now`.
    mutating func level(_ index: Int, quiet: Bool, now: Double) {
        guard inputs.indices.contains(index), settings.deadAir > 0 else { return }
        var input = inputs[index]
        if quiet {
            if input.quietSince == nil { input.quietSince = now }
            if let since = input.quietSince, now - since >= settings.deadAir { input.isDead = true }
        } else {
            input.quietSince = nil
            if input.isDead {
                input.isDead = false
                input.soundSince = now
            }
        }
        inputs[index] = input
    }

    /// An operator forces input `index` (nil: releases the force). Returns false for an input that does not exist.
    mutating func force(_ index: Int?) -> Bool {
        guard let index else {
            if forced != nil { releasedForce = true }
            forced = nil
            return true
        }
        guard inputs.indices.contains(index) else { return false }
        forced = index
        return true
    }

    // MARK: What it decides

    /// Whether input `index` is healthy at `now`: flowing, and not silenced by dead air.
    func isHealthy(_ index: Int, now: Double) -> Bool {
        guard inputs.indices.contains(index), inputs[index].flowingSince != nil else { return false }
        return !inputs[index].isDead
    }

    /// Since when input `index` has been healthy without a break (nil: it is not).
    func healthySince(_ index: Int, now: Double) -> Double? {
        guard isHealthy(index, now: now), let flowing = inputs[index].flowingSince else { return nil }
        return max(flowing, inputs[index].soundSince ?? flowing)
    }

    /// The switch to make at `now`, if any (carried out at once: `playing` is the new input afterwards).
    mutating func decide(now: Double) -> Switch? {
        let released = releasedForce
        releasedForce = false
        // A forced input plays while it is healthy; one that failed is released.
        if let forced {
            if isHealthy(forced, now: now) {
                return forced == playing ? nil : switchTo(forced, .forced, now: now)
            }
            if inputs[forced].failure != nil || inputs[forced].isDead { self.forced = nil }
        }
        // The input that plays is left once it failed or went silent; one still connecting the first time (a
        // station starting, a reload) is waited for: its failure, within its connect timeout, moves the station on.
        if inputs[playing].failure != nil || inputs[playing].isDead || inputs[playing].isLate {
            // The best healthy input takes over at once; with none, the station goes on with what it has.
            guard let next = inputs.indices.first(where: { isHealthy($0, now: now) }) else { return nil }
            let reason: Reason =
                inputs[playing].isDead
                ? .deadAir
                : inputs[playing].failure == nil ? .late : settings.live && playing == 0 ? .handBack : .failed
            return switchTo(next, reason, now: now)
        }
        // The highest healthy input above takes over once it has been healthy for `recover` without a break; a
        // lower one never jumps ahead of it while it is coming back (which would make the station switch twice).
        for index in 0..<playing {
            guard let since = healthySince(index, now: now) else { continue }
            let recover = settings.live && index == 0 ? 0 : settings.recover
            guard now - since >= recover else { return nil }
            return switchTo(index, settings.live && index == 0 ? .live : released ? .released : .recovered, now: now)
        }
        return nil
    }

    private mutating func switchTo(_ index: Int, _ reason: Reason, now: Double) -> Switch {
        let from = playing
        playing = index
        // The failed inputs below that are no longer needed forget their failures (top down: each one forgotten makes the
        // ones below it unneeded in turn), so that the next time the station steps down, it steps one at a time
        // from the top again — and not straight to an input below one that failed long ago.
        for below in inputs.indices where below > index && inputs[below].failure != nil {
            if !shouldConnect(below, now: now) { inputs[below] = Input() }
        }
        return Switch(from: from, to: index, reason: reason, at: now)
    }

    /// Whether input `index` should be connected now (the pipeline connects it when its reconnect schedule says,
    /// and disconnects one that should not be).
    func shouldConnect(_ index: Int, now: Double) -> Bool {
        guard inputs.indices.contains(index) else { return false }
        if index <= playing || index == forced { return true }
        // Cold standby: an input below the one that plays is needed once every input above it is down (failed,
        // silenced by dead air, or late: a hung peer or a dead path is connected to at once, not after the stall
        // rule, so that it can take over as soon as it flows): one step down at a time.
        if (0..<index).allSatisfy({ inputs[$0].failure != nil || inputs[$0].isDead || inputs[$0].isLate }) {
            return true
        }
        // Hot standby: the input right below the one that plays stays connected and decoding (always below a live
        // source).
        return (settings.hotStandby || (settings.live && playing == 0)) && index == playing + 1
    }
}
