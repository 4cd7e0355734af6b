// libFuzzer target for `OggDemuxer`, the edge relay's reader of another relay's Ogg Opus bytes (see
// CONTRIBUTING.md, "Fuzz").
//
// Built with -DFUZZING (and -sanitize=fuzzer,address) this file only defines `LLVMFuzzerTestOneInput`; built plainly
// it has a `@main` that replays a corpus (default Tests/FuzzCorpus/Ogg) through the same checks.
//
// Invariants, for every input fed whole and in several chunkings:
//   1. never traps, whatever the bytes;
//   2. the events do not depend on the chunking;
//   3. it never claims to have skipped more bytes than it was given;
//   4. an audio packet is never empty, never longer than `maxPacket`, and has an Opus duration; heads have a
//      channel count of at least 1; tags and audio come only after a head of the same serial.

import RadioRelay
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem
import RadioRelayTestSupport

#if !FUZZING
    import Foundation
#endif

/// The events of `input` fed in pieces of `size` bytes (0: whole), and the demuxer's statistics.
func demux(_ input: [UInt8], size: Int) -> (events: [OggDemuxer.Event], statistics: OggDemuxer.Statistics) {
    var demuxer = OggDemuxer()
    var events: [OggDemuxer.Event] = []
    var offset = 0
    repeat {
        let end = size == 0 ? input.count : min(input.count, offset + size)
        demuxer.demux(Array(input[offset..<end])) { events.append($0) }
        offset = end
    } while offset < input.count
    return (events, demuxer.statistics)
}

func checkOgg(_ input: [UInt8]) -> [String] {
    var failures: [String] = []
    let (whole, statistics) = demux(input, size: 0)
    for size in [1, 7, 4096] {
        let (pieces, _) = demux(input, size: size)
        if pieces != whole { failures.append("events differ when fed in pieces of \(size) bytes") }
    }
    if statistics.bytesSkipped > input.count { failures.append("skipped \(statistics.bytesSkipped) of \(input.count)") }
    var heads = Set<UInt32>()
    for event in whole {
        switch event {
        case .head(let serial, let head):
            if head.channels < 1 { failures.append("a head with \(head.channels) channels") }
            heads.insert(serial)
        case .tags(let serial, _):
            if !heads.contains(serial) { failures.append("tags before a head for serial \(serial)") }
        case .audio(let serial, let packet, _):
            if packet.isEmpty || packet.count > OggDemuxer.maxPacket {
                failures.append("an audio packet of \(packet.count) bytes")
            }
            if OpusPacketInfo.samples(packet) == nil { failures.append("an audio packet without a duration") }
            if !heads.contains(serial) { failures.append("audio before a head for serial \(serial)") }
        }
    }
    return failures
}

@_cdecl("LLVMFuzzerTestOneInput")
public func oggFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: size > 0 ? data : nil, count: size)
    let failures = checkOgg(Array(input))
    if !failures.isEmpty {
        let shown = failures.prefix(20) + (failures.count > 20 ? ["… \(failures.count - 20) more"] : [])
        fatalError("OggDemuxer invariant failed:\n" + shown.joined(separator: "\n"))
    }
    return 0
}

#if !FUZZING
    /// Replays a corpus (default Tests/FuzzCorpus/Ogg): see `FuzzReplay`.
    @main
    struct OggFuzzReplay {
        static func main() {
            FuzzReplay.run(
                target: "OggFuzz", arguments: Array(CommandLine.arguments.dropFirst()),
                defaultRoot: "Tests/FuzzCorpus/Ogg", check: checkOgg)
        }
    }
#endif
