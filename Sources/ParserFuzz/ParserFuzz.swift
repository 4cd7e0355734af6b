// libFuzzer target for the MP3 `Parser` (see STYLE.md, "Fuzzing").
//
// Built with -DFUZZING (and -sanitize=fuzzer,address) this file only defines `LLVMFuzzerTestOneInput`; libFuzzer
// supplies `main`. Built plainly it has a `@main` that replays a corpus (default Tests/FuzzCorpus/Parser) through the
// same checks, so CI can run it without the fuzzing toolchain.
//
// Every input is parsed several times, in differently sized chunks, and the runs are checked against each other and
// against the Parser's documented contract:
//   1. every packet is exactly one frame: its byte count is its header's frameLength and its first four bytes parse
//      to that header;
//   2. the chunking does not matter: one chunk, byte by byte (1-7 byte chunks above 2 KiB), input-seeded random
//      chunk sizes (with empty chunks) and a two-way split all give the same events (format events, packet bytes
//      and followsGap, in order), the same statistics and the same gapless info;
//   3. the carry-over stays within the longest wait the Parser can be in (a frame plus two confirming frames of
//      another format, plus a header: 3 × 2 881 + 3 bytes) after every `parse`, and is 0 after `finish`;
//   4. the bytes add up: packet bytes + statistics.bytesSkipped + statistics.tagBytesSkipped (ID3v2) + the skipped
//      Xing/Info/VBRI frames = input length (those frames are not reported by size, so their share must lie
//      between 24 and 2 881 bytes each);
//   5. events are well formed: a format event comes first and only on a change of shape (rate, channels, layer), is
//      followed by the packet that caused it and describes it; every packet has the current format's shape;
//      statistics.packets counts the packets.
//   6. `reset()` (a new connection) at a split point: the packets after it are the ones a new Parser gives for the
//      rest of the input, the first of them follows a gap if audio came before, and the bytes still add up when the
//      carry-over the reset dropped is counted.

import RadioRelay
import RadioRelayTestSupport

#if !FUZZING
    import Foundation
#endif

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

/// Collects the invariant violations of one input; empty means the input passed.
struct Checker {
    var failures: [String] = []

    /// Parses `input` in chunks of the given sizes (the remainder, if any, as a last chunk), checking every event and
    /// the carry-over as it goes; `arrays` feeds the chunks through `parse(_: [UInt8], _:)` instead of the raw buffer,
    /// and `resetAt` calls `reset()` once that many bytes have been fed (at a chunk boundary).
    mutating func run(
        _ input: UnsafeRawBufferPointer, chunks: [Int], label: String, arrays: Bool = false, resetAt: Int? = nil
    ) -> Run {
        let parser = Parser()
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

/// Runs every check on one input; returns the violations (empty: passed).
func checkParser(_ input: UnsafeRawBufferPointer) -> [String] {
    var checker = Checker()
    let whole = checker.run(input, chunks: [input.count], label: "one chunk")

    var seed: UInt64 = 0xCBF2_9CE4_8422_2325 ^ UInt64(input.count)
    for byte in input.prefix(8) { seed = (seed ^ UInt64(byte)) &* 0x100_0000_01B3 }
    let split = input.isEmpty ? 0 : Int(input[input.count - 1]) * 257 % (input.count + 1)
    // Byte by byte checks every chunk boundary at once but costs a parse call per byte; longer inputs get 1-7 byte
    // chunks instead (about a quarter of the calls), which still end at most positions.
    let small: (label: String, chunks: [Int], arrays: Bool) =
        input.count <= byteByByteLimit
        ? ("byte by byte", Array(repeating: 1, count: input.count), false)
        : ("1-7 byte chunks (seed \(seed))", chunkSizes(seed: ~seed, total: input.count, tiny: true), false)
    let others = [
        small,
        ("random chunks (seed \(seed))", chunkSizes(seed: seed, total: input.count), false),
        ("split at \(split), as arrays", [split], true),
    ]
    for (label, chunks, arrays) in others {
        let run = checker.run(input, chunks: chunks, label: label, arrays: arrays)
        guard run != whole else { continue }
        if run.events != whole.events {
            let firstDifference =
                zip(run.events, whole.events).enumerated().first { $0.element.0 != $0.element.1 }?
                .offset ?? min(run.events.count, whole.events.count)
            checker.failures.append(
                """
                \(label): \(run.events.count) events, one chunk gave \(whole.events.count); \
                first difference at event \(firstDifference)
                """)
        }
        if run.statistics != whole.statistics {
            checker.failures.append("\(label): statistics \(run.statistics), one chunk gave \(whole.statistics)")
        }
        if run.gapless != whole.gapless {
            let gapless = [run.gapless, whole.gapless].map { String(describing: $0) }
            checker.failures.append("\(label): gapless \(gapless[0]), one chunk gave \(gapless[1])")
        }
    }

    // reset() forgets sync and carry-over: what follows it must give the packets a new Parser gives for the rest.
    let withReset = checker.run(input, chunks: [split], label: "reset at \(split)", resetAt: split)
    let rest = checker.run(UnsafeRawBufferPointer(rebasing: input[split...]), chunks: [], label: "from \(split) on")
    func packetBytes(_ events: ArraySlice<Run.Event>) -> [[UInt8]] {
        events.compactMap { if case .packet(let bytes, _) = $0 { bytes } else { nil } }
    }
    let afterReset = packetBytes(withReset.events[(withReset.eventsBeforeReset ?? 0)...])
    let fresh = packetBytes(rest.events[...])
    if afterReset != fresh {
        checker.failures.append(
            """
            reset at \(split): \(afterReset.count) packets after the reset, a new Parser gave \(fresh.count) for the \
            rest (first difference at packet \(zip(afterReset, fresh).prefix { $0 == $1 }.count))
            """)
    }
    return checker.failures
}

@_cdecl("LLVMFuzzerTestOneInput")
public func parserFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: size > 0 ? data : nil, count: size)
    let failures = checkParser(input)
    if !failures.isEmpty {
        let shown = failures.prefix(20) + (failures.count > 20 ? ["… \(failures.count - 20) more"] : [])
        fatalError("Parser invariant failed:\n" + shown.joined(separator: "\n"))
    }
    return 0
}

#if !FUZZING
    /// Replays a corpus: every file in the directories (or the files) given as arguments, default Tests/FuzzCorpus/Parser.
    @main
    struct ParserFuzzReplay {
        static func main() {
            let arguments = CommandLine.arguments.dropFirst()
            let roots = arguments.isEmpty ? ["Tests/FuzzCorpus/Parser"] : Array(arguments)
            let fileManager = FileManager.default
            var files: [String] = []
            for root in roots {
                var isDirectory: ObjCBool = false
                guard fileManager.fileExists(atPath: root, isDirectory: &isDirectory) else {
                    printError("ParserFuzz: no such file or directory: \(root)")
                    exit(2)
                }
                if isDirectory.boolValue {
                    let names = (try? fileManager.contentsOfDirectory(atPath: root)) ?? []
                    for name in names.sorted() where !name.hasPrefix(".") {
                        let path = root + "/" + name
                        var nested: ObjCBool = false
                        if fileManager.fileExists(atPath: path, isDirectory: &nested), !nested.boolValue {
                            files.append(path)
                        }
                    }
                } else {
                    files.append(root)
                }
            }
            guard !files.isEmpty else {
                printError("ParserFuzz: no inputs in \(roots.joined(separator: " "))")
                exit(2)
            }
            var failed = 0
            for path in files {
                guard let data = fileManager.contents(atPath: path) else {
                    printError("ParserFuzz: cannot read \(path)")
                    failed += 1
                    continue
                }
                let failures = data.withUnsafeBytes { checkParser($0) }
                if !failures.isEmpty {
                    failed += 1
                    printError("FAIL \(path) (\(data.count) bytes)")
                    for failure in failures { printError("  " + failure) }
                }
            }
            print("\(files.count) inputs replayed, \(failed) failures")
            exit(failed == 0 ? 0 : 1)
        }

        static func printError(_ line: String) {
            StandardError.write(line + "\n")
        }
    }
#endif
