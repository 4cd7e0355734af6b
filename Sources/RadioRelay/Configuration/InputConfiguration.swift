import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// One of a station's inputs: where audio comes from, and how it is read. A station plays the highest-priority
/// healthy one (`InputSelector`); the list is the station's `upstream` values in order, then its `[input
/// STATION/NAME]` sections in the order of the file.
public struct InputConfiguration: Sendable, Equatable {
    /// Its name in status, metrics, logs and the force command: its position (`1`, `2`, …) for an `upstream` value,
    /// the section's name for an `[input]` section.
    public var name: String
    /// An http(s) URL (ICY or not), `tcp://` (another relay's Ogg Opus), a file: URL or a path; empty for the live
    /// source's input, which has none.
    public var upstream: String
    /// The live source's input (`source_password`): a kind of its own, fed by the source client that connects.
    public private(set) var isLive = false
    /// The title shown while it plays when it gives none of its own (no ICY title, a file without an ID3 title, a
    /// live source that sends none).
    public var title: String?
    /// `title` was set in its own `[input]` section: for a file it is shown instead of the file's ID3 title (a
    /// station ID named by the operator); a station's `title` is only what a file without an ID3 title shows.
    public var titleIsOwn = false
    /// Read at real time, held back at the lead (see `StationConfiguration.paced`); nil: files and responses with a
    /// length.
    public var paced: Bool?
    public var connectTimeout = 10
    public var stallTimeout = 10

    public init(name: String, upstream: String) {
        self.name = name
        self.upstream = upstream
    }

    /// The live source's input (`source_password`): fed by the source client that connects, never connected to.
    public static func live(timeout: Int, title: String? = nil) -> InputConfiguration {
        var input = InputConfiguration(name: liveName, upstream: "")
        input.isLive = true
        input.title = title
        input.stallTimeout = timeout
        input.connectTimeout = timeout
        input.paced = true
        return input
    }

    public static let liveName = "live"

    /// A file (played at real time, looped).
    public var isFile: Bool { !isLive && (try? UpstreamURL.classify(upstream)) == .file }
    /// Another relay's Ogg Opus, relayed as it is (see `UpstreamURL.isOggOpus`).
    public var isOggOpus: Bool { !isLive && UpstreamURL.isOggOpus(upstream) }
    public var isPaced: Bool { paced ?? isFile }

    /// `file`, `http`, `https`, `tcp` or `live`, for status.
    public var kind: InputKind {
        if isLive { return .live }
        return switch try? UpstreamURL.classify(upstream) {
        case .file: .file
        case .tcp: .tcp
        case .http: upstream.lowercased().hasPrefix("https:") ? .https : .http
        case nil: .unknown
        }
    }

    /// What it reads, as status and logs show it (no secret).
    public var shown: String { isLive ? "live source" : Redaction.text(upstream) }

    /// How status and logs name it: `input 2 (http://backup:8000/live)`.
    var label: String { "input \(name)" }
}

/// What makes a station switch between its inputs: the rules `InputSelector` applies, and the sound of a switch.
public struct FailoverSettings: Sendable, Equatable {
    /// Seconds an input's audio may stay below `deadAirLevel` before it counts as failed; 0: off.
    public var deadAir = 0.0
    /// dBFS under which audio counts as silence.
    public var deadAirLevel = -50.0
    /// Seconds a higher-priority input must be healthy before it takes over again.
    public var recover = 10.0
    /// Seconds of crossfade when both inputs have audio (a short fade-in otherwise).
    public var crossfade = 0.5
    /// Keep the input right below the one that plays connected and decoding.
    public var hotStandby = false

    public init() {}

    public static let deadAirRange = 0.0...3600
    public static let deadAirLevelRange = -90.0...(-10.0)
    public static let recoverRange = 0.0...3600
    public static let crossfadeRange = 0.0...10
    /// The inputs a station may list.
    public static let maxInputs = 16
}

extension StationConfiguration {
    /// The inputs as a log line names them: the one URL (redacted), or `input 1 URL, then input 2 URL, …`.
    var inputsShown: String {
        let inputs = self.inputs
        guard inputs.count > 1 else { return inputs.first?.shown ?? "" }
        return inputs.map { "input \($0.name) \($0.shown)" }.joined(separator: ", then ")
    }

    /// The inputs: at least one, at most `FailoverSettings.maxInputs`, each a URL the Downloader reads, names unique,
    /// all of one kind (MP3 to decode, or Ogg Opus to relay: the URL's form decides), timeouts and failover settings
    /// in range.
    func validateInputs() throws(ConfigurationError) {
        let inputs = self.inputs
        guard !inputs.isEmpty else {
            throw ConfigurationError("station \(name): no upstream URL (nor source_password, nor a DJ account)")
        }
        guard let first = inputs.first(where: { !$0.isLive }) ?? inputs.first else { return }
        guard inputs.count <= FailoverSettings.maxInputs else {
            throw ConfigurationError(
                "station \(name): \(inputs.count) inputs: a station takes at most \(FailoverSettings.maxInputs)")
        }
        var names: Set<String> = []
        guard Self.timeoutRange.contains(sourceTimeout) else {
            throw ConfigurationError(
                "station \(name): source_timeout must be \(Self.timeoutRange.lowerBound) to "
                    + "\(Self.timeoutRange.upperBound) seconds")
        }
        if takesLiveSources && namedInputs.contains(where: { $0.name == InputConfiguration.liveName }) {
            throw ConfigurationError(
                "station \(name): input \(InputConfiguration.liveName): the name is the live source's: rename it")
        }
        for input in inputs where !input.isLive {
            let label = inputs.count == 1 ? "upstream" : "input \(input.name): upstream"
            do {
                _ = try UpstreamURL.classify(input.upstream)
            } catch {
                throw ConfigurationError("station \(name): \(label) \(error.message)")
            }
            guard names.insert(input.name).inserted else {
                throw ConfigurationError("station \(name): two inputs named \(input.name): rename one")
            }
            guard Self.timeoutRange.contains(input.connectTimeout), Self.timeoutRange.contains(input.stallTimeout)
            else {
                throw ConfigurationError(
                    "station \(name): input \(input.name): connect_timeout and stall_timeout must be "
                        + "\(Self.timeoutRange.lowerBound) to \(Self.timeoutRange.upperBound) seconds")
            }
            if let other = Self.kindMismatch(first, input) {
                throw ConfigurationError("station \(name): \(other)")
            }
        }
        try failover.validate(station: name)
        if first.isOggOpus && failover.deadAir > 0 {
            throw ConfigurationError(
                "station \(name): dead_air needs decoded audio, and an edge relays its roots' Opus without decoding: "
                    + "remove dead_air (an edge's inputs fail by their connections)")
        }
        if let loudness, !Self.loudnessRange.contains(loudness) {
            throw ConfigurationError("station \(name): loudness must be off or \(Values.text(Self.loudnessRange)) LUFS")
        }
        if first.isOggOpus && loudness != nil {
            throw ConfigurationError(
                "station \(name): loudness needs decoded audio, and an edge relays its roots' Opus without decoding: "
                    + "set loudness on the root station, or remove it here")
        }
        if let truePeak, !Self.truePeakRange.contains(truePeak) {
            throw ConfigurationError(
                "station \(name): true_peak must be off or \(Values.text(Self.truePeakRange)) dBTP")
        }
        if first.isOggOpus, let truePeak, truePeak != Self.defaultTruePeak {
            throw ConfigurationError(
                "station \(name): true_peak needs decoded audio, and an edge relays its roots' Opus without decoding: "
                    + "set true_peak on the root station, or remove it here")
        }
    }

    /// Why `input` cannot be in a list that starts with `first`: one is MP3, the other Ogg Opus.
    static func kindMismatch(_ first: InputConfiguration, _ input: InputConfiguration) -> String? {
        guard input.isOggOpus != first.isOggOpus else { return nil }
        func kind(_ input: InputConfiguration) -> String { input.isOggOpus ? "Ogg Opus (relayed as it is)" : "MP3" }
        return
            "input \(input.name) (\(input.shown)) is \(kind(input)) but input \(first.name) is \(kind(first)): a "
            + "station's inputs are all MP3 or all Ogg Opus (tcp://, or a URL or path ending in .opus, .ogg or .oga)"
    }
}

extension FailoverSettings {
    func validate(station: String) throws(ConfigurationError) {
        guard deadAir.isFinite, Self.deadAirRange.contains(deadAir),
            deadAirLevel.isFinite, Self.deadAirLevelRange.contains(deadAirLevel),
            recover.isFinite, Self.recoverRange.contains(recover),
            crossfade.isFinite, Self.crossfadeRange.contains(crossfade)
        else {
            throw ConfigurationError(
                "station \(station): dead_air must be 0 to 3600 s, dead_air_level -90 to -10 dBFS, recover 0 to "
                    + "3600 s and crossfade 0 to 10 s")
        }
    }
}

/// Where an input's audio comes from, as status shows it.
public enum InputKind: String, Sendable, Codable {
    case http, https, tcp, file, live, unknown
}
