import RadioRelay
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem
import RadioRelayTestSupport

// The checks behind the Parser fuzz target (ParserFuzz.swift lists the invariants): one run's record, the checker
// that compares runs against each other and the contract, and the chunkings an input is fed in.

/// The longest frame (MPEG-2.5 layer II, 160 kb/s, 8 kHz, padded) and the shortest (MPEG-2 layer III, 8 kb/s, 24 kHz).
let maxFrameLength = 2881
let minFrameLength = 24
/// The most the Parser may hold after a `parse` call: a synced frame whose successor starts a chain of another format
/// needs that frame, two more, and the header after them before it can decide.
let maxCarryOver = 3 * maxFrameLength + 3
/// Inputs up to this length are also fed byte by byte.
let byteByByteLimit = 2048

/// What one run of the Parser over an input produced.
struct Run: Equatable {
    enum Event: Equatable {
        case format(sampleRate: Int, channels: Int, bitrate: Int, layer: Int, samplesPerFrame: Int)
        case packet([UInt8], followsGap: Bool)
    }

    var events: [Event] = []
    var packetBytes = 0
    var statistics = Parser.Statistics()
    var gapless: GaplessInfo?
    /// With `resetAt`: the index of the first event after the reset.
    var eventsBeforeReset: Int?
}

/// The Parser configurations every input is checked in: files (`transcode`), live (`serve`: frames handed on
/// unconfirmed, ID3v2 tags bounded at 1 MiB), and live with a 4 KiB tag bound, so that fuzz inputs (at most 8 KiB)
/// reach the "tag too long: garbage" path.
struct Mode {
    var name: String
    var confirmsFrames: Bool
    var maxTagLength: Int

    static let all = [
        Mode(name: "file", confirmsFrames: true, maxTagLength: .max),
        Mode(name: "live", confirmsFrames: false, maxTagLength: Parser.liveTagLimit),
        Mode(name: "live, 4 KiB tags", confirmsFrames: false, maxTagLength: 4096),
    ]
}

/// Collects the invariant violations of one input; empty means the input passed.
struct Checker {
    let mode: Mode
    var failures: [String] = []

    /// Parses `input` in chunks of the given sizes (the remainder, if any, as a last chunk), checking every event and
    /// the carry-over as it goes; `arrays` feeds the chunks through `parse(_: [UInt8], _:)` instead of the raw buffer,
    /// and `resetAt` calls `reset()` once that many bytes have been fed (at a chunk boundary).
    mutating func run(
        _ input: UnsafeRawBufferPointer, chunks: [Int], label: String, arrays: Bool = false, resetAt: Int? = nil
    ) -> Run {
        let parser = Parser(confirmsFrames: mode.confirmsFrames, maxTagLength: mode.maxTagLength)
        let label = "\(mode.name), \(label)"
        var result = Run()
        var current: DataFormat?
        var awaitingPacketFor: DataFormat?
        var violations: [String] = []

        func handle(_ event: Parser.Event) {
            switch event {
            case .format(let format):
                if awaitingPacketFor != nil { violations.append("\(label): two format events in a row") }
                if let current, current.hasSameShape(as: format) {
                    violations.append("\(label): format event without a change of shape: \(current) → \(format)")
                }
                current = format
                awaitingPacketFor = format
                result.events.append(
                    .format(
                        sampleRate: format.sampleRate, channels: format.channels,
                        bitrate: format.bitrate, layer: format.layer,
                        samplesPerFrame: format.samplesPerFrame))
            case .packet(let packet):
                let bytes = packet.bytes
                let header = packet.header
                if bytes.count != header.frameLength {
                    violations.append("\(label): packet of \(bytes.count) bytes, header says \(header.frameLength)")
                }
                if bytes.count < 4 {
                    violations.append("\(label): packet of \(bytes.count) bytes")
                } else if MP3FrameHeader(bytes[0], bytes[1], bytes[2], bytes[3]) != header {
                    violations.append("\(label): packet's first 4 bytes do not parse to its header \(header)")
                }
                if let format = current {
                    if format.sampleRate != header.sampleRate || format.channels != header.channels
                        || format.layer != header.layer
                    {
                        violations.append("\(label): packet \(header) does not match the current format \(format)")
                    }
                } else {
                    violations.append("\(label): packet before any format event")
                }
                if let format = awaitingPacketFor {
                    if format.bitrate != header.bitrate || format.samplesPerFrame != header.samplesPerFrame {
                        violations.append("\(label): format \(format) does not describe its packet \(header)")
                    }
                    awaitingPacketFor = nil
                }
                result.packetBytes += bytes.count
                result.events.append(.packet(bytes, followsGap: packet.followsGap))
            }
        }

        var offset = 0
        var index = 0
        var carryOverReported = false
        var droppedAtReset = 0
        var packetsBeforeReset = 0
        while offset < input.count {
            let size = min(index < chunks.count ? chunks[index] : input.count, input.count - offset)
            index += 1
            let chunk = UnsafeRawBufferPointer(rebasing: input[offset..<offset + size])
            if arrays { parser.parse(Array(chunk), handle) } else { parser.parse(chunk, handle) }
            offset += size
            if parser.carryOverCount > maxCarryOver || parser.carryOverCount < 0, !carryOverReported {
                carryOverReported = true
                violations.append("\(label): carry-over of \(parser.carryOverCount) bytes after \(offset) bytes")
            }
            if offset == resetAt {
                droppedAtReset = parser.carryOverCount
                packetsBeforeReset = parser.statistics.packets
                parser.reset()
                result.eventsBeforeReset = result.events.count
            }
        }
        parser.finish(handle)
        if parser.carryOverCount != 0 {
            violations.append("\(label): carry-over of \(parser.carryOverCount) bytes after finish")
        }
        if awaitingPacketFor != nil { violations.append("\(label): format event not followed by a packet") }

        result.statistics = parser.statistics
        result.gapless = parser.gapless
        let packets = result.events.count(where: { if case .packet = $0 { true } else { false } })
        if result.statistics.packets != packets {
            violations.append("\(label): statistics.packets = \(result.statistics.packets), \(packets) packets emitted")
        }
        // After a reset (a new connection) the first packet follows a gap if any audio came before.
        if let first = result.eventsBeforeReset, packetsBeforeReset > 0,
            let packet = result.events[first...].first(where: { if case .packet = $0 { true } else { false } }),
            case .packet(_, false) = packet
        {
            violations.append("\(label): the first packet after the reset does not follow a gap")
        }
        // Every input byte is a packet's, skipped (the carry-over a reset drops counts as skipped), or part of a
        // skipped Xing/Info/VBRI frame.
        let statistics = result.statistics
        let tagFrameBytes = input.count - result.packetBytes - statistics.bytesSkipped - statistics.tagBytesSkipped
        let tagFrames = statistics.infoFramesSkipped
        if tagFrameBytes < tagFrames * minFrameLength || tagFrameBytes > tagFrames * maxFrameLength {
            violations.append(
                """
                \(label): \(input.count) input bytes = \(result.packetBytes) in packets + \
                \(statistics.bytesSkipped) skipped + \(statistics.tagBytesSkipped) in ID3 tags + \
                (\(droppedAtReset) of them dropped by reset) + \(tagFrameBytes) left for \(tagFrames) Xing/Info/VBRI frames
                """)
        }
        failures += violations
        return result
    }
}

/// Deterministic chunk sizes from a seed (SplitMix64) adding up to at least `total`: `tiny` gives 1 to 7 bytes,
/// otherwise mostly small, some up to a few frames, some empty.
func chunkSizes(seed: UInt64, total: Int, tiny: Bool = false) -> [Int] {
    var generator = SplitMix64(seed: seed)
    var sizes: [Int] = []
    var sum = 0
    while sum < total {
        let r = generator.next()
        let size: Int
        switch tiny ? 8 : r % 8 {
        case 8: size = 1 + Int((r >> 8) % 7)
        case 0: size = 0
        case 1, 2, 3: size = 1 + Int((r >> 8) % 8)
        case 4, 5: size = 1 + Int((r >> 8) % 700)
        default: size = 1 + Int((r >> 8) % 4000)
        }
        sizes.append(size)
        sum += size
    }
    return sizes
}
