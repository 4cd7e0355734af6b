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
    /// Replays a corpus: every file in the directories (or the files) given as arguments.
    @main
    struct ICYFuzzReplay {
        static func main() {
            let arguments = Array(CommandLine.arguments.dropFirst())
            let roots = arguments.isEmpty ? ["Tests/FuzzCorpus/ICY"] : arguments
            var files: [String] = []
            for root in roots {
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory) else {
                    StandardError.write("ICYFuzz: no such file or directory: \(root)\n")
                    exit(2)
                }
                guard isDirectory.boolValue else {
                    files.append(root)
                    continue
                }
                let names = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
                files += names.sorted().filter { !$0.hasPrefix(".") }.map { root + "/" + $0 }
            }
            guard !files.isEmpty else {
                StandardError.write("ICYFuzz: no inputs in \(roots.joined(separator: " "))\n")
                exit(2)
            }
            var failed = 0
            for path in files {
                guard let data = FileManager.default.contents(atPath: path) else {
                    StandardError.write("ICYFuzz: cannot read \(path)\n")
                    failed += 1
                    continue
                }
                let failures = checkICY(Array(data))
                if !failures.isEmpty {
                    failed += 1
                    StandardError.write("FAIL \(path) (\(data.count) bytes)\n")
                    for failure in failures { StandardError.write("  \(failure)\n") }
                }
            }
            print("\(files.count) inputs replayed, \(failed) failures")
            exit(failed == 0 ? 0 : 1)
        }
    }
#endif
