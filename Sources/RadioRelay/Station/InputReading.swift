import RadioRelayMedia
import RadioRelaySystem

/// What reads an input's bytes, by what the station does with them: a `DecodedInput` (a transcoding station's: MP3,
/// or a live source's MP3 or Ogg Opus, decoded to the common format) or a `RelayedInput` (an edge's: another
/// relay's Ogg Opus, its packets relayed as they are). Each is made by the station's chain
/// (`PipelineChain.reading(for:station:)`) and feeds that chain, so the pipeline calls it without knowing which
/// kind it is: it gets back what it acts on (`InputObservation`) and never looks at the chain's type.
protocol InputReading: AnyObject {
    /// Reads `bytes`: what it finds reaches the chain when the input plays (`role`), and the pipeline through
    /// `observe` (formats, titles, audio as it arrives).
    func read(
        _ bytes: UnsafeRawBufferPointer, _ role: ReadingRole, observe: (InputObservation) throws -> Void) throws
    /// A file's pass ended: what the reading still holds (a decoder's last frame and its Reader's tail) goes out
    /// before the next pass's first, so the seam has no hole.
    func endPass(_ role: ReadingRole, observe: (InputObservation) throws -> Void) throws
    /// A new connection: nothing of the last one is carried on (`metaInterval`: its ICY metadata interval, once
    /// the response said it).
    func restart(metaInterval: Int?)
    /// The chain goes on with this input (a switch to it): a transcoding station's crossfade into its kept audio,
    /// an edge's new root head and tags.
    func takeOver(_ handover: InputHandover) throws
    /// A title its source sent beside the audio (a live source's metadata update), to the chain when it plays.
    func announce(title: String, plays: Bool) throws
    /// Forgets the audio kept for a switch to it.
    func forgetKeptAudio()
    /// The station's settings changed (a reload): its level meter's threshold among them.
    func reconfigure(_ station: StationConfiguration)
    /// What audio it expects, for errors about an input that sends none: `audio` while a live source's format is
    /// not yet recognised, else its codec's (`MPEG audio`, `Opus audio`).
    var expectedAudio: String { get }
    /// Its counters, for the station's totals.
    var counters: ReadingCounters { get }
}

/// How an input stands when its bytes are read.
struct ReadingRole {
    /// It plays: what it yields goes to the chain.
    var plays = false
    /// Its level is measured (a station with `dead_air`).
    var meters = false
}

/// What an input yields that the pipeline acts on, whatever reads it.
enum InputObservation {
    /// What it sends now (an MP3 stream's format, a live source's Opus).
    case format(DataFormat)
    /// A title it sent (an ICY `StreamTitle`, a root's `TITLE=`), sanitized.
    case title(String)
    /// A piece of audio arrived (a decoded buffer, a root's Opus packet).
    case audio(InputAudio)
}

/// A piece of an input's audio, as the pipeline sees it.
struct InputAudio {
    /// Its length in seconds (a relayed packet counts none: a root is not paced by its packets).
    var seconds = 0.0
    /// The level meter's verdict when the piece completed a window: whether the last one was quiet.
    var quiet: Bool?
    /// The decoded audio (nil for a relayed packet): a crossfade's outgoing input goes on with it.
    var buffer: PCMBuffer?
}

/// What a switch to an input asks of its reading.
struct InputHandover {
    /// Frames the crossfade lasts, and the shortest fade-in.
    var crossfade = 0
    var minimum = 0
    /// The old input goes on delivering into the fade.
    var outgoingContinues = false
    /// How much of the audio kept for the switch goes first (the newest; nil: all of it, a live source's).
    var keptFrames: Int?
    /// The input's format, and the one the station showed until now.
    var format: DataFormat?
    var stationFormat: DataFormat?
}

/// The counters of an input's reading.
struct ReadingCounters: Equatable {
    /// MP3 packets parsed (a relayed input's packets are the relay chain's).
    var packets = 0
    var decoded = 0
    var skippedBytes = 0
    var errors = 0
    var readers = 0

    static func + (lhs: Self, rhs: Self) -> Self {
        ReadingCounters(
            packets: lhs.packets + rhs.packets, decoded: lhs.decoded + rhs.decoded,
            skippedBytes: lhs.skippedBytes + rhs.skippedBytes, errors: lhs.errors + rhs.errors,
            readers: lhs.readers + rhs.readers)
    }
}
