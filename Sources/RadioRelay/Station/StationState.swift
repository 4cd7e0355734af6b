import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// What a station shows the outside (status endpoint, logs, sd_notify STATUS, tests). Written by the pipeline
/// thread, read from anywhere through `Station.state`.
public struct StationState: Sendable, Equatable {
    public enum Upstream: Sendable, Equatable {
        case connecting
        case connected
        /// Waiting before the next attempt, with the reason of the last failure.
        case retrying(reason: String)

        /// Which of the three, without the reason (`upstream_state`).
        public var phase: Phase {
            switch self {
            case .connecting: .connecting
            case .connected: .connected
            case .retrying: .retrying
            }
        }

        public enum Phase: String, Sendable, Codable {
            case connecting, connected, retrying
        }

        /// Why it is down, while it is.
        public var reason: String? {
            if case .retrying(let reason) = self { return reason }
            return nil
        }
    }

    public var upstream: Upstream = .connecting
    /// The last `StreamTitle` from the upstream's ICY metadata.
    public var title: String?
    public var format: DataFormat?
    /// MPEG frames the Parser found, and the Reader decoded: equal, whatever the number of outputs, since a
    /// station decodes once and encodes that audio once per output.
    public var packets = 0
    public var decodedPackets = 0
    /// Readers the station made (1 once audio flowed) and Encoders it feeds (one per output).
    public var readers = 0
    public var encoders = 0
    public var bytesIn = 0
    public var reconnects = 0
    /// The last upstream failure, kept after the upstream is back (for the status page and tests).
    public var lastError: String?
    /// Seconds of silence encoded while the upstream was away or behind.
    public var silenceSeconds = 0.0
    /// Seconds of decoded upstream audio dropped to keep the stream within its lead (a fast or bursting upstream,
    /// or silence taken back after an outage).
    public var droppedSeconds = 0.0
    /// Seconds the pipeline did not run (a paused process); not filled with silence.
    public var pausedSeconds = 0.0
    public var skippedBytes = 0
    public var decodeErrors = 0
    /// Seconds of audio encoded (the stream's clock).
    public var encodedSeconds = 0.0
    /// Its true-peak limiter (`true_peak`), nil when it has none.
    public var limiter: Limiter?
    /// Each input, in priority order, and the one that plays.
    public var inputs: [InputState] = []
    public var playingInput: String?
    /// The input an operator forced, until released or until it fails.
    public var forcedInput: String?
    /// The newest switches, oldest first (at most `switchHistory`), and every switch so far by reason.
    public var switches: [InputSwitch] = []
    public var switchCounts: [String: Int] = [:]
    public static let switchHistory = 20
}

/// What status shows of one input.
public struct InputState: Sendable, Equatable {
    /// What an input is doing: `standby` is connected, or not needed now (`connected` says).
    public enum Phase: String, Sendable, Codable, CaseIterable {
        case playing, standby, connecting, retrying
        /// Dead air (still connected and listened to), or a file that cannot be read.
        case failed
        /// The live input with no source connected.
        case waiting
    }

    public var name: String
    public var kind: InputKind
    /// Its URL or path, redacted.
    public var url: String
    public var state: Phase
    public var reason: String?
    /// Wall-clock seconds since it is in this state.
    public var since: Double
    public var connected: Bool
    public var title: String?
    public var bytesIn: Int
    public var reconnects: Int
    /// What its audio is (`MPEG layer 3, 44100 Hz, stereo, 128 kb/s`, `Ogg Opus, 48000 Hz, stereo`), once known.
    public var format: String?
    /// The live source on the air (the `live` input's, while one is connected).
    public var source: Source?
    /// Its loudness stage (`loudness = LUFS`), nil when the station has none.
    public var loudness: Loudness?

    /// An input's loudness stage as status shows it.
    public struct Loudness: Sendable, Equatable {
        /// Its gated loudness over the last 10 s (LUFS; nil: nothing above the gates yet).
        public var lufs: Double?
        /// The gain applied now (dB).
        public var gain: Double
    }

    package init(
        name: String, kind: InputKind, url: String = "", state: Phase, reason: String? = nil, since: Double = 0,
        connected: Bool = false, title: String? = nil, bytesIn: Int = 0, reconnects: Int = 0
    ) {
        self.name = name
        self.kind = kind
        self.url = url
        self.state = state
        self.reason = reason
        self.since = since
        self.connected = connected
        self.title = title
        self.bytesIn = bytesIn
        self.reconnects = reconnects
    }

    /// A live source client, as status shows it.
    public struct Source: Sendable, Equatable {
        /// Its address and port.
        public var address: String
        public var userAgent: String?
        /// `PUT` or `SOURCE`.
        public var method: String
        /// Wall-clock seconds when it connected.
        public var since: Double
        /// Bytes it sent on this connection.
        public var bytes: Int
        /// The DJ account it authenticated as; nil: the station's own user `source`.
        public var dj: String?
    }
}

/// One change of the input that plays.
public struct InputSwitch: Sendable, Equatable {
    /// Wall-clock seconds.
    public var at: Double
    public var from: String
    public var to: String
    /// `failed`, `dead air`, `recovered`, `forced` or `released`.
    public var reason: String
    /// What the input left said, when it failed.
    public var detail: String?
}

extension StationState {
    /// A station's true-peak limiter as status shows it.
    public struct Limiter: Sendable, Equatable {
        /// Its ceiling (dBTP) at the encoders' input: `true_peak` less the codec's overshoot (`CodecOvershoot`).
        public var ceiling: Double
        /// The deepest gain reduction over the last one to two seconds (dB, ≤ 0).
        public var reduction: Double
        /// Seconds of audio it has reduced.
        public var limitedSeconds: Double
    }
}
