// libFuzzer target for the edge relay's whole chain: upstream bytes → `OggDemuxer` → `OpusRelayChain` → the
// station's own Ogg pages (see CONTRIBUTING.md, "Fuzz").
//
// Built with -DFUZZING (and -sanitize=fuzzer,address) this file only defines `LLVMFuzzerTestOneInput`; built plainly
// it has a `@main` that replays a corpus (default Tests/FuzzCorpus/Relay) through the same checks.
//
// The input is played twice the way a Pipeline drives the chain: fed in pieces, released at real time with silence
// where the queue ran dry, then a reconnect (`restart`) that sends the same bytes again (the skip-by-granule path),
// and a final release of everything. Invariants:
//   1. never traps, whatever the bytes (granules of 2^63−1 and −1 included);
//   2. every page out has a good CRC and parses; per logical stream the page sequence counts up from 0 without a
//      gap, the first page begins the stream, granule positions never go backwards, and a stream's last page ends it
//      before the next stream begins;
//   3. the timeline (the stream-wide clock) never goes backwards;
//   4. bounded: the audio bytes out are at most the bytes in (twice, for the replay) plus the silence asked for, and
//      nothing is left queued after the final release.

import RadioRelay
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem
import RadioRelayTestSupport

#if !FUZZING
    import Foundation
#endif

func checkRelay(_ input: [UInt8]) -> [String] {
    var failures: [String] = []
    var settings = OpusRelayChain.Settings()
    settings.serial = 0x5EED
    settings.pageDuration = 20
    guard let chain = try? OpusRelayChain(settings, clock: { 0 }) else { return ["the chain did not start"] }
    var pages = chain.headerPages
    var silenceFrames = 0
    let piece = 512
    func play(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + piece)
            bytes[offset..<end].withUnsafeBytes { try? chain.feed($0) }
            offset = end
            // 20 ms a piece, at real time: what the queue cannot give is silence, as the Pipeline's clock does.
            let queued = chain.queuedSeconds
            do {
                try chain.release(seconds: 0.02)
                if queued < 0.02 {
                    let frames = Int((0.02 - queued) * 48_000)
                    silenceFrames += frames
                    try chain.encodeSilence(frames: frames)
                }
                if chain.queuedSeconds > 2 { try chain.drop(seconds: chain.queuedSeconds - 1) }
            } catch {
                failures.append("the chain threw \(error)")
            }
            pages += chain.takePages()
        }
    }
    play(input)
    chain.restart()
    play(input)
    do {
        try chain.release(seconds: 1e6)
        try chain.release(seconds: .infinity)
        try chain.drop(seconds: .nan)
    } catch {
        failures.append("the chain threw \(error)")
    }
    pages += chain.takePages()
    _ = chain.takeEvents()
    if chain.queuedSeconds != 0 { failures.append("\(chain.queuedSeconds) s still queued after releasing all") }

    // 2 and 3: every page, as a listener's reader sees it.
    var reader = OggPageReader()
    var sequences: [UInt32: UInt32] = [:]
    var granules: [UInt32: Int64] = [:]
    var open: UInt32?
    var timeline = Int64.min
    var audioBytes = 0
    for page in pages {
        reader.append(page.bytes)
        do {
            guard try reader.next() != nil else {
                failures.append("page \(page.sequence) of \(page.serial) does not parse")
                continue
            }
        } catch {
            failures.append("page \(page.sequence) of \(page.serial): \(error)")
        }
        let serial = page.serial
        let expected = sequences[serial].map { $0 &+ 1 } ?? 0
        if page.sequence != expected {
            failures.append("serial \(serial): page \(page.sequence) after \(expected &- 1)")
        }
        sequences[serial] = page.sequence
        if (expected == 0) != page.isBeginning {
            failures.append("serial \(serial): beginning flag on page \(page.sequence)")
        }
        if page.isBeginning {
            if let open, open != serial { failures.append("serial \(serial) begins before \(open) ended") }
            open = serial
        }
        if page.isEnd { open = nil }
        if page.granulePosition >= 0 {
            if let last = granules[serial], page.granulePosition < last {
                failures.append("serial \(serial): granule \(page.granulePosition) after \(last)")
            }
            granules[serial] = page.granulePosition
        }
        if page.timeline < timeline { failures.append("timeline \(page.timeline) after \(timeline)") }
        timeline = max(timeline, page.timeline)
        if page.granulePosition > 0 { audioBytes += page.bytes.count - 27 - Int(page.bytes[26]) }
    }
    // 4: silence packets are a few bytes each (20 ms); 64 bytes a packet is generous.
    let allowed = 2 * input.count + (silenceFrames / 960 + 2) * 64
    if audioBytes > allowed {
        failures.append("\(audioBytes) audio bytes out of \(input.count) in (allowed \(allowed))")
    }
    return failures
}

@_cdecl("LLVMFuzzerTestOneInput")
public func relayFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: size > 0 ? data : nil, count: size)
    let failures = checkRelay(Array(input))
    if !failures.isEmpty {
        let shown = failures.prefix(20) + (failures.count > 20 ? ["… \(failures.count - 20) more"] : [])
        fatalError("relay chain invariant failed:\n" + shown.joined(separator: "\n"))
    }
    return 0
}

#if !FUZZING
    /// Replays a corpus (default Tests/FuzzCorpus/Relay): see `FuzzReplay`.
    @main
    struct RelayFuzzReplay {
        static func main() {
            FuzzReplay.run(
                target: "RelayFuzz", arguments: Array(CommandLine.arguments.dropFirst()),
                defaultRoot: "Tests/FuzzCorpus/Relay", check: checkRelay)
        }
    }
#endif
