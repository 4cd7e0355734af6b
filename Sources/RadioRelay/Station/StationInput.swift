import Glibc
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// One input of a station at run time, confined to the pipeline thread: its connection (Downloader, reconnect
/// schedule, the read-ahead of a paced one), what reads its bytes (`reading`: a transcoding station's
/// `DecodedInput`, an edge's `RelayedInput`), its format and title, and what its kind has of its own (`origin`: a
/// `FileInput`'s passes and checks, a `LiveInput`'s source). Every input that is connected is read (and measured),
/// whether it plays or not, so that the selector hears a standby's health and a silenced input's recovery; only the
/// one that plays reaches the station's chain.
final class StationInput {
    /// What its connection is doing.
    enum Activity: Equatable {
        /// Not connected: not needed now (a cold standby), or not yet tried.
        case idle
        case connecting
        case connected
        /// Waiting before the next attempt, with the reason of the last failure.
        case retrying(String)
        /// The live source's input while no source is connected (why the last one ended, if one did).
        case waiting(String?)
    }

    /// Where its audio comes from, with what that kind has of its own.
    enum Origin {
        /// An upstream on the network (HTTP, or a root's TCP).
        case network
        case file(FileInput)
        case live(LiveInput)
    }

    var configuration: InputConfiguration
    /// What reads its bytes, and feeds the station's chain while it plays.
    let reading: any InputReading
    let origin: Origin
    var downloader: Downloader?
    var reconnect: ReconnectSchedule
    private(set) var activity = Activity.idle
    /// Wall-clock seconds since `activity` last changed.
    private(set) var since = wallClockNow()
    /// The current connection's first bytes were seen (and logged).
    var announced = false
    /// The current connection, for the no-audio rule.
    struct Connection {
        var openedAt = 0.0
        /// When `packets` last changed, what it was then, and `bytesIn` then (no byte since: a stall).
        var lastAudioAt = 0.0
        var lastPackets = 0
        var bytesAtAudio = 0
        /// The longest waits between two arrivals of audio on this connection, in the window now and the one
        /// before it (`gapWindow` seconds each, the first starting at `gapWindowStart`): how the input delivers (an
        /// Ogg source's one-second pages arrive a second apart), so that lateness is judged against it. The wait
        /// for a connection's first audio (its set-up, a root with nothing to send yet) is not one, and a stall
        /// long past (TCP recovering a loss) is forgotten within two windows, so neither makes the late rule wait
        /// past what the lead covers.
        var gapNow = 0.0
        var gapBefore = 0.0
        var gapWindowStart = 0.0
        /// `bytesIn` and `packets` when it opened.
        var bytesAtOpen = 0
        var packetsAtOpen = 0

        /// Arrivals of audio on this connection.
        var arrivals = 0

        /// Seconds each window of waits covers.
        static let gapWindow = 15.0

        /// Two waits between arrivals are known (three arrivals): how the input delivers is known, and the late
        /// rule may judge it (before that, an Ogg source's second one-second page is not late).
        var knowsCadence: Bool { arrivals >= 3 }

        /// The longest wait between arrivals within the last one to two windows at `now`.
        func longestGap(now: Double) -> Double {
            let age = now - gapWindowStart
            if age < Self.gapWindow { return max(gapNow, gapBefore) }
            return age < 2 * Self.gapWindow ? gapNow : 0
        }

        /// Audio arrived at `now` (`packets` is the input's count since, `bytes` its bytes in).
        mutating func audioArrived(packets: Int, bytes: Int, now: Double) {
            let age = now - gapWindowStart
            if !(age < Self.gapWindow) {
                gapBefore = age < 2 * Self.gapWindow ? gapNow : 0
                gapNow = 0
                gapWindowStart = now
            }
            if lastPackets != packetsAtOpen { gapNow = max(gapNow, now - lastAudioAt) }
            arrivals += 1
            lastPackets = packets
            lastAudioAt = now
            bytesAtAudio = bytes
        }

        init() {}

        init(openedAt: Double, lastAudioAt: Double, packets: Int, bytes: Int) {
            self.openedAt = openedAt
            gapWindowStart = openedAt
            self.lastAudioAt = lastAudioAt
            lastPackets = packets
            packetsAtOpen = packets
            bytesAtAudio = bytes
            bytesAtOpen = bytes
        }
    }
    var connection = Connection()
    /// Read at real time (a file, `pace = yes`, a response with a length).
    var paced = false
    var backlog = Backlog(limit: 64 * 1024)
    /// Its audio flows on this connection (the selector was told).
    var flowing = false
    var bytesIn = 0
    /// Pieces of audio taken from it, whatever the codec: decoded buffers (MP3 or Opus) or a root's Opus packets.
    var packets = 0
    var reconnects = 0
    var lastError: String?
    /// Its newest title: an ICY `StreamTitle`, a root's `TITLE=`, a file's ID3 title; else the configured one.
    var ownTitle: String?
    var format: DataFormat?
    /// A paced input that does not play keeps its own real-time pace: seconds of audio decoded since `origin`.
    var pace = (origin: 0.0, seconds: 0.0)
    /// The dead-air reason last told, so that the log says it once.
    var quietLogged = false
    /// - Parameter chain: the station's, which makes what reads the input's bytes.
    init(_ configuration: InputConfiguration, station: StationConfiguration, chain: any PipelineChain) {
        self.configuration = configuration
        reading = chain.reading(for: configuration, station: station)
        if configuration.isLive {
            origin = .live(LiveInput())
        } else if configuration.isFile {
            origin = .file(FileInput(path: Downloader.path(of: configuration.upstream)))
        } else {
            origin = .network
        }
        reconnect = ReconnectSchedule(delays: station.reconnectDelay)
    }

    var file: FileInput? {
        if case .file(let file) = origin { return file }
        return nil
    }

    var live: LiveInput? {
        if case .live(let live) = origin { return live }
        return nil
    }

    var name: String { configuration.name }

    /// What shows while it plays, by one rule: a file's own `title` (its `[input]` section's) over its ID3 title;
    /// otherwise what the input says (an ICY or Ogg title, a file's ID3 title, a live source's metadata), else the
    /// `title` it has from its section or the station, else a live source's `ice-name`; else nothing (`""` for a
    /// live source, so that the relayed input's last title does not stay on a DJ's set).
    var title: String? {
        switch origin {
        case .network: return ownTitle ?? configuration.title
        case .file: return (configuration.titleIsOwn ? configuration.title : nil) ?? ownTitle ?? configuration.title
        case .live(let live): return ownTitle ?? configuration.title ?? live.name ?? ""
        }
    }

    func set(_ activity: Activity) {
        guard activity != self.activity else { return }
        self.activity = activity
        since = wallClockNow()
    }

    /// Forgets what the connection left: kept audio, the pass, whether it flows; its read-ahead too unless
    /// `keepingBacklog` (what a finite input that plays sent before it ended still plays).
    func forgetConnection(keepingBacklog: Bool = false) {
        if !keepingBacklog { backlog.clear() }
        reading.forgetKeptAudio()
        file?.passEnded = false
        flowing = false
        announced = false
    }
}

@available(*, unavailable) extension StationInput: Sendable {}
