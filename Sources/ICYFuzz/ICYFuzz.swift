// libFuzzer target for the ICY demuxer and its metadata parsing (see CONTRIBUTING.md, "Fuzz").
//
// Built with -DFUZZING (and -sanitize=fuzzer,address) this file only defines `LLVMFuzzerTestOneInput`; built plainly
// it has a `@main` that replays a corpus (default Tests/FuzzCorpus/ICY) through the same checks.
//
// An input is an interval and a stream (`ICYInput`: the first byte, or two, choose the interval). Invariants:
//   1. never traps, whatever the bytes;
//   2. the interval is in 1…65 535 and is the demuxer's;
//   3. the chunking does not matter: one chunk, byte by byte (1-7 byte chunks above 2 KiB), input-seeded random
//      chunks (with empty ones) and a two-way split give the same audio bytes and the same metadata blocks, in order;
//   4. the bytes add up: audio handed out + metadata bytes + length bytes = input bytes, and they are the ones an
//      independent walk of the ICY framing finds (audio runs of the interval, a length byte ×16, the text), with
//      each complete block's fields reported, in order, when there are any;
//   5. `ICYDemuxer.parse` of every block (and of the whole stream as one block) gives non-empty keys without
//      surrounding whitespace, and every key and value, after `Sanitized.text`, holds no C0, C1 or bidi control
//      character and respects its length cap (values: `titleLimit`, keys: `headerLimit`).

import RadioRelay
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem
import RadioRelayTestSupport

#if !FUZZING
    import Foundation
#endif

@_cdecl("LLVMFuzzerTestOneInput")
public func icyFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: size > 0 ? data : nil, count: size)
    let failures = checkICY(Array(input))
    if !failures.isEmpty {
        let shown = failures.prefix(20) + (failures.count > 20 ? ["… \(failures.count - 20) more"] : [])
        fatalError("ICY demuxer invariant failed:\n" + shown.joined(separator: "\n"))
    }
    return 0
}

#if !FUZZING
    /// Replays a corpus (default Tests/FuzzCorpus/ICY): see `FuzzReplay`.
    @main
    struct ICYFuzzReplay {
        static func main() {
            FuzzReplay.run(
                target: "ICYFuzz", arguments: Array(CommandLine.arguments.dropFirst()),
                defaultRoot: "Tests/FuzzCorpus/ICY",
                check: checkICY)
        }
    }
#endif
