import RadioRelay
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem
import RadioRelayTestSupport

// The checks behind the ICY fuzz target (ICYFuzz.swift lists the invariants).

/// A fuzz input: the metadata interval and the ICY-framed stream. A first byte below 0x80 gives a short interval,
/// 1 + that byte (metadata every few bytes); otherwise the first two bytes choose an odd interval from 1 to 65 535.
struct ICYInput {
    var interval: Int
    var stream: [UInt8]

    init(_ input: [UInt8]) {
        guard let first = input.first else {
            self.init(interval: 1, stream: [])
            return
        }
        if first < 0x80 || input.count < 2 {
            self.init(interval: 1 + Int(first & 0x7F), stream: Array(input.dropFirst()))
        } else {
            let x = Int(first & 0x7F) << 8 | Int(input[1])
            self.init(interval: 1 + x * 2 % 65_535, stream: Array(input.dropFirst(2)))
        }
    }

    init(interval: Int, stream: [UInt8]) {
        self.interval = interval
        self.stream = stream
    }

    /// The input that gives this interval and stream (for writing corpus seeds).
    var encoded: [UInt8] {
        if interval <= 128 { return [UInt8(interval - 1)] + stream }
        let x = (interval - 1) / 2
        return [0x80 | UInt8(x >> 8), UInt8(x & 0xFF)] + stream
    }
}

/// What one demux of a stream produced.
struct Demuxed: Equatable {
    var audio: [UInt8] = []
    var blocks: [[String: String]] = []
    var metadataBytes = 0
    var lengthBytes = 0
    var emptyRuns = 0
}

func demux(_ stream: [UInt8], interval: Int, chunks: [Int]) -> Demuxed {
    var demuxer = ICYDemuxer(interval: interval)
    var result = Demuxed()
    var offset = 0
    var index = 0
    stream.withUnsafeBytes { bytes in
        while offset < bytes.count {
            let size = min(index < chunks.count ? chunks[index] : bytes.count, bytes.count - offset)
            index += 1
            demuxer.demux(
                UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + size]),
                audio: { run in
                    if run.isEmpty { result.emptyRuns += 1 }
                    result.audio += run
                },
                metadata: { result.blocks.append($0) })
            offset += size
        }
    }
    result.metadataBytes = demuxer.metadataBytes
    result.lengthBytes = demuxer.lengthBytes
    return result
}

/// The ICY framing walked independently: the audio, and the raw text of every complete metadata block.
func walk(_ stream: [UInt8], interval: Int) -> (audio: [UInt8], blocks: [[UInt8]], metadataBytes: Int, lengths: Int) {
    var audio: [UInt8] = []
    var blocks: [[UInt8]] = []
    var metadataBytes = 0
    var lengths = 0
    var i = 0
    while i < stream.count {
        let n = min(interval, stream.count - i)
        audio += stream[i..<i + n]
        i += n
        guard i < stream.count else { break }
        let length = Int(stream[i]) * 16
        lengths += 1
        i += 1
        let m = min(length, stream.count - i)
        if m == length { blocks.append(Array(stream[i..<i + m])) }
        metadataBytes += m
        i += m
    }
    return (audio, blocks, metadataBytes, lengths)
}

/// C0, DEL, C1 and the bidi controls: what no sanitized text may contain.
func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x00...0x1F, 0x7F...0x9F, 0x200E, 0x200F, 0x061C, 0x202A...0x202E, 0x2066...0x2069: true
    default: false
    }
}

func checkFields(_ raw: [UInt8], label: String) -> [String] {
    var failures: [String] = []
    for (key, value) in ICYDemuxer.parse(raw) {
        if key.isEmpty || key.first!.isWhitespace || key.last!.isWhitespace {
            failures.append("\(label): key \(Array(key.unicodeScalars.map(\.value))) empty or not trimmed")
        }
        for (text, limit) in [(key, Sanitized.headerLimit), (value, Sanitized.titleLimit)] {
            let clean = Sanitized.text(text, limit: limit)
            if clean.unicodeScalars.contains(where: isUnsafe) || clean.utf8.count > limit {
                failures.append("\(label): sanitized \(Array(clean.unicodeScalars.map(\.value)).prefix(60))")
            }
        }
    }
    return failures
}

func checkICY(_ bytes: [UInt8]) -> [String] {
    let input = ICYInput(bytes)
    let (interval, stream) = (input.interval, input.stream)
    var failures: [String] = []
    guard (1...65_535).contains(interval) else { return ["interval \(interval) outside 1…65535"] }
    let whole = demux(stream, interval: interval, chunks: [stream.count])
    var seed: UInt64 = 0xCBF2_9CE4_8422_2325 ^ UInt64(bytes.count)
    for byte in bytes.prefix(8) { seed = (seed ^ UInt64(byte)) &* 0x100_0000_01B3 }
    var generator = SplitMix64(seed: seed)
    var random: [Int] = []
    while random.reduce(0, +) < stream.count { random.append(Int(generator.next() % 300) - 20) }
    let small = stream.count <= 2048 ? 1 : 4
    let split = stream.isEmpty ? 0 : Int(stream[stream.count - 1]) * 257 % (stream.count + 1)
    let chunkings: [(String, [Int])] = [
        ("small chunks", (0..<stream.count).map { 1 + $0 * 7 % small }),
        ("random chunks (seed \(seed))", random.map { max(0, $0) }),
        ("split at \(split)", [split]),
    ]
    for (label, chunks) in chunkings {
        let run = demux(stream, interval: interval, chunks: chunks)
        if run != whole {
            failures.append(
                """
                \(label): \(run.audio.count) audio bytes, \(run.blocks.count) blocks, \(run.metadataBytes) + \
                \(run.lengthBytes); one chunk gave \(whole.audio.count), \(whole.blocks.count), \
                \(whole.metadataBytes) + \(whole.lengthBytes)
                """)
        }
    }
    if whole.audio.count + whole.metadataBytes + whole.lengthBytes != stream.count || whole.emptyRuns > 0 {
        failures.append(
            """
            \(whole.audio.count) audio + \(whole.metadataBytes) metadata + \(whole.lengthBytes) length bytes \
            (\(whole.emptyRuns) empty runs) for \(stream.count) input bytes
            """)
    }
    let model = walk(stream, interval: interval)
    let expected = model.blocks.map(ICYDemuxer.parse).filter { !$0.isEmpty }
    if model.audio != whole.audio || model.metadataBytes != whole.metadataBytes || model.lengths != whole.lengthBytes
        || expected != whole.blocks
    {
        failures.append(
            """
            the framing walk found \(model.audio.count) audio bytes, \(expected.count) blocks with fields, \
            \(model.metadataBytes) + \(model.lengths); the demuxer \(whole.audio.count), \(whole.blocks.count), \
            \(whole.metadataBytes) + \(whole.lengthBytes)
            """)
    }
    for (i, block) in model.blocks.enumerated() { failures += checkFields(block, label: "block \(i)") }
    failures += checkFields(Array(stream.prefix(4080)), label: "the stream as one block")
    return failures
}
