import Glibc
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// One input of a station at run time, confined to the pipeline thread: its connection (Downloader, reconnect
/// schedule, the read-ahead of a paced one), what reads its bytes — an MP3 input's `InputDecoder` (ICY → Parser →
/// Reader, to the common format), an Ogg Opus root's `OggDemuxer` — and what it has that a switch to it needs: its
/// newest decoded audio (`pending`), its format and title, a root's head and tags. Every input that is connected is
/// read and measured (`meter`), whether it plays or not, so that the selector hears a standby's health and a
/// silenced input's recovery; only the one that plays reaches the station's chain.
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

    var configuration: InputConfiguration
    /// An MP3 input's decoding (nil for an Ogg Opus root).
    let decoder: InputDecoder?
    /// An Ogg Opus root's demuxing (unused for an MP3 input).
    var demuxer = OggDemuxer()
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
    /// A file's pass ended: its next one starts once this one played out, and only if it had audio.
    var passEnded = false
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
    /// A file's ID3 title was looked for (once per input).
    var fileTitleRead = false
    /// The newest decoded audio of an input that does not play (what a switch to it starts with), bounded.
    var pending: PCMQueue
    var meter: LevelMeter
    /// A paced input that does not play keeps its own real-time pace: seconds of audio decoded since `origin`.
    var pace = (origin: 0.0, seconds: 0.0)
    /// An Ogg Opus root's newest head and tags, handed to the relay chain when it starts to play.
    var head: (serial: UInt32, head: OpusPacketInfo.Head)?
    var tags: (serial: UInt32, comments: [String])?
    /// The dead-air reason last told, so that the log says it once.
    var quietLogged = false
    /// A file input's file cannot be read now (why), found while it waits unconnected (`Pipeline.checkFiles`):
    /// shown as failed, so the fallback's absence is seen before the emergency.
    var unreadable: String?
    var fileCheckedAt = -Double.infinity
    /// The live source closed its connection: what it sent is played out, then the station hands back (why).
    var liveEnding: String?
    /// How logs name the live source connected last (`live source ADDR:PORT`).
    var liveLabel = "live source"
    /// The `ice-name` of the live source connected last (a title when it sends none).
    var liveName: String?

    init(_ configuration: InputConfiguration, station: StationConfiguration) {
        self.configuration = configuration
        if configuration.isOggOpus {
            decoder = nil
        } else {
            var decoding = InputDecoder.Configuration()
            decoding.commonRate = station.commonRate
            // Live: a frame goes on as soon as it is complete, and a live stream's LAME tag says nothing about
            // where the station's stream ends; a file's says where each pass of its loop starts and ends.
            decoding.confirmsFrames = false
            decoding.gapless = configuration.isFile
            decoding.maxTagLength = Parser.liveTagLimit
            decoding.recognisesFormat = configuration.isLive
            decoder = InputDecoder(decoding)
        }
        reconnect = ReconnectSchedule(delays: station.reconnectDelay)
        pending = PCMQueue(sampleRate: station.commonRate)
        meter = LevelMeter(thresholdDB: station.failover.deadAirLevel, rate: station.commonRate)
    }

    var name: String { configuration.name }

    /// What shows while it plays, by one rule: a file's own `title` (its `[input]` section's) over its ID3 title;
    /// otherwise what the input says (an ICY or Ogg title, a file's ID3 title, a live source's metadata), else the
    /// `title` it has from its section or the station, else a live source's `ice-name`; else nothing (`""` for a
    /// live source, so that the relayed input's last title does not stay on a DJ's set).
    var title: String? {
        if configuration.isFile && configuration.titleIsOwn, let own = configuration.title { return own }
        guard configuration.isLive else { return ownTitle ?? configuration.title }
        return ownTitle ?? configuration.title ?? liveName ?? ""
    }

    func set(_ activity: Activity) {
        guard activity != self.activity else { return }
        self.activity = activity
        since = wallClockNow()
    }

    /// The newest decoded audio kept while it does not play: enough for a crossfade into it.
    static let pendingSeconds = 1.0

    /// Keeps `buffer` as its newest audio, dropping the oldest beyond `pendingSeconds`.
    func keep(_ buffer: PCMBuffer) {
        pending.append(buffer)
        let limit = Int(Self.pendingSeconds * Double(pending.sampleRate))
        if pending.frameCount > limit { pending.drop(frames: pending.frameCount - limit) }
    }

    /// Forgets what the connection left: kept audio, the pass, whether it flows; its read-ahead too unless
    /// `keepingBacklog` (what a finite input that plays sent before it ended still plays).
    func forgetConnection(keepingBacklog: Bool = false) {
        if !keepingBacklog { backlog.clear() }
        pending.removeAll()
        passEnded = false
        flowing = false
        announced = false
    }

    /// Why this file input's file cannot be read (nil: it can, or it is no file input).
    var fileProblem: String? {
        guard configuration.isFile else { return nil }
        let path = Downloader.path(of: configuration.upstream)
        guard access(path, R_OK) != 0 else { return nil }
        return "cannot read \(path): \(String(cString: strerror(errno)))"
    }

    /// A file's ID3 title, read once from its first bytes (a local file: a bounded read on the pipeline thread).
    func readFileTitle() {
        guard !fileTitleRead, configuration.isFile else { return }
        fileTitleRead = true
        let path = Downloader.path(of: configuration.upstream)
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: ID3Title.readLimit)
        var filled = 0
        while filled < bytes.count {
            let n = bytes.withUnsafeMutableBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return -1 }
                return read(fd, base + filled, buffer.count - filled)
            }
            if n <= 0 { break }
            filled += n
        }
        if let title = ID3Title.read(Array(bytes[..<filled])) { ownTitle = title }
    }
}

@available(*, unavailable) extension StationInput: Sendable {}
