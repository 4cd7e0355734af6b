import RadioRelaySystem

/// MP3 pass-through: the upstream's own frames, handed on unchanged, in step with the decoded audio.
///
/// The stage chain appends every frame the Parser hands it (the same frames the Reader decodes), and mirrors on it
/// what the stream clock does to the decoded audio: `release` hands on as many seconds of whole frames as the
/// Encoders were given, `drop` drops as many as the clock dropped, `silence` makes silent frames for an outage. So
/// the pass-through stream runs at the same real-time pace, with the same lead and the same silence, as the Opus
/// outputs, without a decode or an encode of its own. A second a frame does not cover yet is carried as credit to
/// the next call: frames always go out whole.
///
/// Bounded: at most `maxQueuedFrames` frames wait (the oldest go first), and `trim` keeps the queue within a slack of
/// the decoded audio waiting beside it, so frames that decoded to nothing (a damaged frame) cannot pile up.
public final class MP3PassThrough {
    /// Frames released since the last `take`, as one run of bytes, and where they end on the stream's timeline
    /// (48 kHz samples, counting on across rate changes).
    public struct Chunk: Sendable, Equatable {
        public let bytes: [UInt8]
        public let timeline: Int64
        public let frames: Int
    }

    public struct Statistics: Sendable, Equatable {
        public var framesIn = 0
        public var framesOut = 0
        public var silentFrames = 0
        /// Frames dropped by the clock (the upstream ran ahead), by `trim`, or for the queue's bound.
        public var framesDropped = 0

        public init() {}
    }

    /// About 100 s of 26 ms frames: more than any lead the clock allows.
    public static let maxQueuedFrames = 4096

    public private(set) var statistics = Statistics()
    private var queue: [AudioPacket] = []
    private var head = 0
    /// Seconds of the frames waiting.
    public private(set) var queuedSeconds = 0.0
    private var releaseCredit = 0.0
    private var dropCredit = 0.0
    private var silenceCredit = 0.0
    /// The frame silence is made like: the newest frame's format (before any, 44.1 kHz stereo at 128 kb/s).
    private var silentFrame: MP3SilentFrame? = MP3SilentFrame.standard
    private var pending: [UInt8] = []
    private var pendingFrames = 0
    private var timeline: Int64 = 0
    private var timelineRemainder = 0
    private var timelineRate = 0

    public init() {}

    /// Frames waiting.
    public var queuedFrames: Int { queue.count - head }

    /// A frame from the Parser, in stream order.
    public func append(_ packet: AudioPacket) {
        statistics.framesIn += 1
        if queuedFrames >= Self.maxQueuedFrames { dropOldest() }
        queue.append(packet)
        queuedSeconds += packet.duration
    }

    /// The clock handed `seconds` of decoded audio on: as many seconds of frames go out.
    public func release(seconds: Double) {
        guard seconds > 0, seconds.isFinite else { return }
        releaseCredit += seconds
        while head < queue.count, queue[head].duration <= releaseCredit + 1e-9 {
            let packet = queue[head]
            releaseCredit -= packet.duration
            removeFirst()
            emit(packet.bytes, header: packet.header)
        }
        // Nothing left to cover: a credit beyond one frame would release a run of frames at once later.
        if head == queue.count { releaseCredit = min(releaseCredit, MP3SilentFrame.longestFrameSeconds) }
    }

    /// The clock dropped `seconds` of decoded audio (the upstream ran ahead): as many seconds of frames go.
    public func drop(seconds: Double) {
        guard seconds > 0, seconds.isFinite else { return }
        dropCredit += seconds
        while head < queue.count, queue[head].duration <= dropCredit + 1e-9 {
            dropCredit -= queue[head].duration
            removeFirst()
            statistics.framesDropped += 1
        }
        if head == queue.count { dropCredit = 0 }
    }

    /// `seconds` of silence (the upstream is away or late): silent frames in the newest frame's format.
    public func silence(seconds: Double) {
        guard seconds > 0, seconds.isFinite else { return }
        silenceCredit += seconds
        guard let frame = silentFrame else { return }
        while frame.seconds <= silenceCredit + 1e-9 {
            silenceCredit -= frame.seconds
            emit(frame.bytes, header: frame.header)
            statistics.silentFrames += 1
        }
    }

    /// Drops the oldest frames while more than `seconds` wait (the decoded audio waiting beside them, plus slack).
    public func trim(toSeconds seconds: Double) {
        while queuedFrames > 0, queuedSeconds > seconds + 1e-9 { dropOldest() }
    }

    /// The frames released since the last call, as one chunk; nil when none were.
    public func take() -> Chunk? {
        guard pendingFrames > 0 else { return nil }
        defer {
            pending.removeAll(keepingCapacity: true)
            pendingFrames = 0
        }
        return Chunk(bytes: pending, timeline: timeline, frames: pendingFrames)
    }

    private func emit(_ bytes: [UInt8], header: MP3FrameHeader) {
        pending += bytes
        pendingFrames += 1
        statistics.framesOut += 1
        let shape = silentFrame?.header
        if header.sampleRate != shape?.sampleRate || header.channels != shape?.channels
            || header.layer != shape?.layer || header.version != shape?.version,
            let silent = MP3SilentFrame(like: bytes)
        {
            silentFrame = silent  // a format change: silence from now on sounds like the new format
        }
        if header.sampleRate != timelineRate {
            timelineRate = header.sampleRate
            timelineRemainder = 0
        }
        // Samples at 48 kHz, the remainder carried so that 44.1 kHz frames add up exactly.
        timelineRemainder += header.samplesPerFrame * OpusClock.rate
        timeline += Int64(timelineRemainder / header.sampleRate)
        timelineRemainder %= header.sampleRate
    }

    private func dropOldest() {
        removeFirst()
        statistics.framesDropped += 1
    }

    private func removeFirst() {
        queuedSeconds = max(0, queuedSeconds - queue[head].duration)
        head += 1
        if head == queue.count {
            queue.removeAll(keepingCapacity: true)
            head = 0
            queuedSeconds = 0
        } else if head >= 1024 {
            queue.removeFirst(head)
            head = 0
        }
    }
}

@available(*, unavailable) extension MP3PassThrough: Sendable {}
