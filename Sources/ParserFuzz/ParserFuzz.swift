// libFuzzer target for the MP3 `Parser` (see CONTRIBUTING.md, "Fuzz").
//
// Built with -DFUZZING (and -sanitize=fuzzer,address) this file only defines `LLVMFuzzerTestOneInput`; libFuzzer
// supplies `main`. Built plainly it has a `@main` that replays a corpus (default Tests/FuzzCorpus/Parser) through the
// same checks, so CI can run it without the fuzzing toolchain.
//
// Every input is parsed several times, in differently sized chunks, and the runs are checked against each other and
// against the Parser's documented contract, in each of three configurations (`Mode.all`): files (confirmsFrames
// true), live as `serve` runs it (confirmsFrames false, 1 MiB tag bound) and live with a 4 KiB tag bound, so that the
// "tag too long: garbage" path is reached. Every invariant below holds exactly in every mode:
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
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem
import RadioRelayTestSupport

#if !FUZZING
    import Foundation
#endif

/// Runs every check on one input in every mode; returns the violations (empty: passed).
func checkParser(_ input: UnsafeRawBufferPointer) -> [String] {
    Mode.all.flatMap { checkParser(input, mode: $0) }
}

/// Runs every check on one input in one Parser configuration.
func checkParser(_ input: UnsafeRawBufferPointer, mode: Mode) -> [String] {
    var checker = Checker(mode: mode)
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
                \(mode.name), \(label): \(run.events.count) events, one chunk gave \(whole.events.count); \
                first difference at event \(firstDifference)
                """)
        }
        if run.statistics != whole.statistics {
            checker.failures.append(
                "\(mode.name), \(label): statistics \(run.statistics), one chunk gave \(whole.statistics)")
        }
        if run.gapless != whole.gapless {
            let gapless = [run.gapless, whole.gapless].map { String(describing: $0) }
            checker.failures.append("\(mode.name), \(label): gapless \(gapless[0]), one chunk gave \(gapless[1])")
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
            \(mode.name), reset at \(split): \(afterReset.count) packets after the reset, a new Parser gave \(fresh.count) for the \
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
    /// Replays a corpus (default Tests/FuzzCorpus/Parser): see `FuzzReplay`.
    @main
    struct ParserFuzzReplay {
        static func main() {
            FuzzReplay.run(
                target: "ParserFuzz", arguments: Array(CommandLine.arguments.dropFirst()),
                defaultRoot: "Tests/FuzzCorpus/Parser",
                check: { bytes in bytes.withUnsafeBytes { checkParser($0) } })
        }
    }
#endif
