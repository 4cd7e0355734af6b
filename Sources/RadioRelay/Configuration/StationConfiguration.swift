import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// Everything one station needs: where its audio comes from, how it is encoded, and how listeners are served.
public struct StationConfiguration: Sendable, Equatable {
    public var name = "main"
    /// The `upstream` values in priority order (`--upstream`, `upstream =`, repeatable): inputs `1`, `2`, … of
    /// `inputs`.
    public var upstreams: [String] = []
    /// The inputs of `[input STATION/NAME]` sections, after the `upstream` values in priority.
    public var namedInputs: [InputConfiguration] = []
    /// What the `upstream` key and the `[input]` sections set, as a reload compares it.
    var inputList: InputList {
        get { InputList(upstreams: upstreams, named: namedInputs) }
        set { (upstreams, namedInputs) = (newValue.upstreams, newValue.named) }
    }
    /// The first input's URL; setting it makes it the station's one `upstream` value.
    public var upstream: String {
        get { upstreams.first ?? namedInputs.first?.upstream ?? "" }
        set { upstreams = [newValue] }
    }
    /// The title shown while an input without one of its own plays (`title`; an `[input]` section may set its own).
    public var title: String?
    /// How the station switches between its inputs (`dead_air`, `dead_air_level`, `recover`, `crossfade`,
    /// `standby`).
    public var failover = FailoverSettings()
    /// The main output's encoding and listening side.
    public var encoder = EncoderConfiguration()
    public var broadcaster = BroadcasterConfiguration()
    /// More outputs of the same decoded audio, each with its own Encoder, ring and port (see
    /// `RenditionConfiguration`).
    public var renditions: [RenditionConfiguration] = []
    /// The main output's HTTP mount path, without the leading `/`: `NAME.opus` unless set.
    public var mount: String {
        get { customMount ?? "\(name).opus" }
        set { customMount = newValue }
    }
    /// The `mount` key's value (nil: the default), what a reload compares.
    var customMount: String?
    public var commonRate = OpusClock.rate
    /// Read the upstream at real time, holding it back at the lead (nothing dropped). nil: yes for files and for
    /// HTTP responses that announce their length (finite), no for live streams (which arrive at real time by
    /// themselves; a burst beyond the lead is trimmed).
    public var paced: Bool?
    /// Start a file upstream again when it ends (how the bundled sample serves as a live station).
    public var loop = true
    /// Seconds an upstream connection may take (`connect_timeout`; an `[input]` section may set its own).
    public var connectTimeout = 10
    /// Seconds without a byte from the upstream before the connection is dropped and retried (`stall_timeout`).
    public var stallTimeout = 10
    /// The range of both timeouts, seconds.
    public static let timeoutRange = 1...300
    /// Seconds an upstream may send bytes without a single MPEG audio frame before it counts as down.
    public var noAudioTimeout = 10.0
    /// Reconnect delays, from the first to the last, with decorrelated jitter (see `ReconnectSchedule`).
    public var reconnectDelay: ClosedRange<Double> = 1...30
    /// Seconds the audio may fall behind the wall clock before silence fills in for the missing upstream.
    public var silenceAfter = 0.3
    /// Seconds the audio may run ahead of the wall clock (`--max-lead`): a finite upstream is held back there, a
    /// live one that sends faster than real time has its oldest audio dropped beyond it.
    public var maxLead = 1.0
    /// Each new ICY title starts a chained Ogg link with its own OpusTags (`TITLE=`), as Icecast relays Ogg sources
    /// (`--chain-titles`). Off by default: many players stop or stumble at a new link. A reload may change it.
    public var chainTitles = false
    /// The loudness every decoded input is brought to (LUFS, `InputLoudness`); nil: off.
    public var loudness: Double?
    public static let loudnessRange = -36.0...(-6.0)
    /// The true-peak ceiling before the encoders (dBTP, `TruePeakLimiter`); nil: no limiter. On by default: a lossy
    /// codec fed peaks at full scale clips in every listener's decoder.
    public var truePeak: Double? = StationConfiguration.defaultTruePeak
    public static let defaultTruePeak = -1.0
    public static let truePeakRange = -12.0...0.0
    /// A live HLS stream per output under the mount's directory on the HTTP address (`/NAME/live.m3u8`), made from
    /// the output's own packets; its segment length and window. A change restarts the station.
    public var hls = true
    package var hlsSettings = HLSSegmenter.Settings()
    /// Its archive on disk (`archive`, `archive_span`, `archive_keep`) and its recordings of live shows
    /// (`record_live`, `record_live_source`, `record_live_max`); each off without a directory.
    public var archive = ArchiveSettings()
    public var recording = RecordingSettings()
    /// An MP3 pass-through output at `/NAME.mp3` (`mp3 = yes`): the upstream's own frames, with the same burst, lag
    /// and limits as the station's own output, titles in band for players that ask; no decode or encode of its own.
    /// Only for an MP3 upstream. A change restarts the station.
    public var mp3 = false
    /// Its raw TCP port (`mp3_port`; 0, the default: any free port — its listeners come to the HTTP address).
    public var mp3Port = 0
    /// The MP3 pass-through output's mount and its name in status and metrics.
    public var mp3Mount: String { "\(name).mp3" }
    public static let mp3OutputName = "mp3"
    /// What HTTP listeners are told about the station.
    public var info = StationInfo()
    /// Live sources (`source_password`): a source client that sends this password (user `source`) with `PUT` or
    /// `SOURCE` to `/NAME` or one of the station's mounts on the HTTP address plays over every other input, as the
    /// input named `live`. nil: the station takes none.
    public var sourcePassword: SourcePassword?
    /// DJ accounts (`[dj NAME]` sections whose `stations` name this one) may take the station over: it takes live
    /// sources then even without `source_password`. Set by the config file's reader from those sections.
    package var liveAccounts = false
    /// Whether the station takes live sources (`source_password`, or DJ accounts): it has the input `live`.
    public var takesLiveSources: Bool { sourcePassword != nil || liveAccounts }
    /// Seconds without a byte from a live source before it counts as gone (`source_timeout`, Icecast's default).
    public var sourceTimeout = 10
    /// Seconds a connection may go on with a peer that does not answer before the kernel gives it up (`PeerTimeout`:
    /// keep-alive and `TCP_USER_TIMEOUT` on upstreams, live sources, pushes and listeners).
    public var peerTimeout = 20
    /// Icecast mounts the station's stream is pushed to as a source (`--push`, `push = …`), each on its own thread.
    package var pushes: [IcecastTarget] = []
    /// Who may listen, by address, country and user agent (`allow`, `deny`, `deny_agents`, `geoip`,
    /// `allow_countries`, `deny_countries`).
    package var access = AccessList()
    /// Where a listener goes when the station (or the server) is full (`overflow`): absolute http(s) URLs, taken in
    /// turn.
    package var overflow: [String] = []
    /// Who may listen by credentials (`listener_add`, `htpasswd`, …): a station with any is protected.
    package var authentication = ListenerAuthentication()
    /// The CA certificates (PEM) `icecasts://` pushes verify the server against (`push_ca`); nil: the system's.
    package var pushCA: String?

    public init() {}

    /// Where HTTP listeners ask for the stream: `/NAME.opus` unless `mount` says otherwise.
    public var mountPath: String { "/" + mount }

    /// Every input in priority order: the `upstream` values (named `1`, `2`, …, with the station's title, pace and
    /// timeouts), then the `[input]` sections' (read over the station's settings).
    public var inputs: [InputConfiguration] {
        (takesLiveSources ? [InputConfiguration.live(timeout: sourceTimeout, title: title)] : [])
            + upstreams.enumerated().map { index, url in
                var input = InputConfiguration(name: "\(index + 1)", upstream: url)
                input.title = title
                input.paced = paced
                input.connectTimeout = connectTimeout
                input.stallTimeout = stallTimeout
                return input
            } + namedInputs
    }

    /// The paths a live source may send to: `/NAME` and the station's own mounts (Icecast clients use the listener
    /// mount), the MP3 one included.
    public var sourcePaths: [String] {
        ["/" + name, mountPath] + (mp3 ? ["/" + mp3Mount] : [])
    }

    public var isFileUpstream: Bool { (try? UpstreamURL.classify(upstream)) == .file }

    public var isPaced: Bool { paced ?? isFileUpstream }

    /// Whether the station relays another relay's (or an Icecast mount's) Ogg Opus as it is: its inputs are
    /// `tcp://`, or URLs or paths ending in `.opus`, `.ogg` or `.oga` (see `UpstreamURL.isOggOpus`). Every input of
    /// a station is of one kind (`validate`).
    public var relaysOggOpus: Bool { UpstreamURL.isOggOpus(upstream) }

    /// Seconds audio may run ahead of real time.
    public static let maxLeadRange = 0.2...30.0
    /// The longest wait between upstream reconnects, seconds.
    public static let reconnectMaxRange = 1.0...3600

    public func validate() throws {
        try validateInputs()
        try encoder.validate()
        try broadcaster.validate()
        guard Self.timeoutRange.contains(peerTimeout) else {
            throw ConfigurationError("station \(name): peer_timeout \(peerTimeout) s: use 1 to 300 seconds")
        }
        if takesLiveSources && relaysOggOpus {
            throw ConfigurationError(
                "station \(name): \(sourcePassword != nil ? "source_password" : "a DJ account") takes MP3 or Ogg Opus sources that the station decodes and encodes; "
                    + "an edge relays its roots' Ogg Opus without decoding: give the live source to the root station")
        }
        if relaysOggOpus && mp3 {
            throw ConfigurationError(
                "station \(name): mp3 = yes passes an MP3 upstream's frames through; this upstream is Ogg Opus: "
                    + "set mp3 = no (its Opus mounts serve it)")
        }
        if access.geoip == nil && !(access.allowCountries.isEmpty && access.denyCountries.isEmpty) {
            throw ConfigurationError(
                "station \(name): allow_countries and deny_countries need a country database: set geoip = PATH "
                    + "(a MaxMind-format .mmdb file, such as GeoLite2-Country.mmdb)")
        }
        try validateProtection()
        if relaysOggOpus && !renditions.isEmpty {
            throw ConfigurationError(
                "station \(name): an Ogg Opus upstream is relayed as it is, without decoding: renditions need an MP3 "
                    + "upstream to encode (or a rendition of the root relay to pull)")
        }
        guard Reader.supportedCommonRates.contains(commonRate) else {
            throw ConfigurationError("station \(name): common rate \(commonRate) Hz: use 48000 or 44100")
        }
        guard maxLead.isFinite, Self.maxLeadRange.contains(maxLead) else {
            throw ConfigurationError("station \(name): max lead \(maxLead) s: use 0.2 to 30 seconds")
        }
        guard silenceAfter.isFinite, (0.05...10).contains(silenceAfter) else {
            throw ConfigurationError("station \(name): jitter allowance \(silenceAfter) s: use 0.05 to 10 seconds")
        }
        try validateOutputs()
        try validatePushes()
        guard ArchiveSettings.isSpan(archive.span) else {
            throw ConfigurationError(
                "station \(name): archive_span \(archive.span) s: use 10 to 86400 that divide a day")
        }
        guard HLSSegmenter.Settings.segmentRange.contains(hlsSettings.segmentSeconds),
            HLSSegmenter.Settings.windowRange.contains(hlsSettings.window)
        else {
            throw ConfigurationError(
                "station \(name): hls_segment must be 0.5 to 10 seconds and hls_window 3 to 30 segments")
        }
    }

    /// The renditions: good names and mounts, each unique in the station, valid settings, no two outputs on one
    /// port (port 0, any free port, never clashes).
    func validateOutputs() throws {
        guard StationNames.isValidMount(mount) else {
            throw ConfigurationError("station \(name): mount \(mount): use \(StationNames.mountRule)")
        }
        let outputMounts = [mount] + renditions.map { $0.mount(in: name) }
        if let taken = outputMounts.first(where: { mount in Playlists.suffixes.contains { mount.hasSuffix($0) } }) {
            throw ConfigurationError(
                "station \(name): mount \(taken) ends like a playlist (\(Playlists.suffixes.joined(separator: ", "))): "
                    + "each mount's playlists are at MOUNT.m3u, .pls and .xspf; choose another")
        }
        var names: Set<String> = []
        var mounts: Set<String> = [mount]
        var directories: Set<String> = [PublicDirectory.directory(forMount: mountPath)]
        var ports: Set<Int> = broadcaster.rawListeners ? [broadcaster.port] : []
        if mp3 {
            guard mp3Port == 0 || ports.insert(mp3Port).inserted else {
                throw ConfigurationError(
                    "station \(name): mp3_port \(mp3Port) is the station's own port: give it another")
            }
            guard !renditions.contains(where: { $0.name == Self.mp3OutputName }) else {
                throw ConfigurationError(
                    "station \(name): rendition mp3: the name mp3 is the MP3 pass-through output's: choose another")
            }
            guard mount != mp3Mount else {
                throw ConfigurationError(
                    "station \(name): mount \(mount) is the MP3 pass-through output's: choose another")
            }
            mounts.insert(mp3Mount)
            let directory = PublicDirectory.directory(forMount: "/" + mp3Mount)
            guard directories.insert(directory).inserted else {
                throw ConfigurationError(
                    "station \(name): the MP3 output \(mp3Mount) has its events at \(directory), as the mount \(mount) "
                        + "does: give the station another mount")
            }
        } else if mp3Port != 0 {
            throw ConfigurationError(
                "station \(name): mp3_port \(mp3Port) without mp3 = yes: set mp3 = yes, or remove mp3_port")
        }
        for rendition in renditions {
            let label = "station \(name): rendition \(rendition.name)"
            guard StationNames.isValid(rendition.name) else {
                throw ConfigurationError("\(label): bad name: use \(StationNames.rule)")
            }
            guard rendition.name != RenditionConfiguration.mainName else {
                throw ConfigurationError("\(label): the name main is the station's own output: choose another")
            }
            guard names.insert(rendition.name).inserted else {
                throw ConfigurationError("\(label): a second rendition of that name: rename one")
            }
            let mount = rendition.mount(in: name)
            guard StationNames.isValidMount(mount) else {
                throw ConfigurationError("\(label): mount \(mount): use \(StationNames.mountRule)")
            }
            guard mounts.insert(mount).inserted else {
                throw ConfigurationError("\(label): mount \(mount) is taken by another output of the station")
            }
            let directory = PublicDirectory.directory(forMount: "/" + mount)
            guard directories.insert(directory).inserted else {
                throw ConfigurationError(
                    "\(label): mount \(mount) has its events and HLS at \(directory), as another output of the "
                        + "station does: give each output its own name (a final .opus is dropped there)")
            }
            guard rendition.broadcaster.port == 0 || ports.insert(rendition.broadcaster.port).inserted else {
                throw ConfigurationError(
                    "\(label): port \(rendition.broadcaster.port) is taken by another output of the station")
            }
            do {
                try rendition.encoder.validate()
                try rendition.broadcaster.validate()
            } catch {
                throw ConfigurationError("\(label): \(error)")
            }
        }
    }

    /// No two pushes to the same mount: Icecast takes one source per mount, and the second would be refused forever.
    func validatePushes() throws(ConfigurationError) {
        for (index, target) in pushes.enumerated() where pushes[..<index].contains(where: { $0.sameMount(as: target) })
        {
            throw ConfigurationError("station \(name): pushes twice to \(target): Icecast takes one source per mount")
        }
    }
}

/// A station's inputs as its settings give them: the `upstream` values and the `[input]` sections.
struct InputList: Equatable, Sendable {
    var upstreams: [String]
    var named: [InputConfiguration]
}
