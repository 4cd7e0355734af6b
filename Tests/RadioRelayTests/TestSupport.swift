import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// Runs the whole Parser over `bytes` in chunks of `chunk` bytes and collects what it emits.
func parseAll(_ bytes: [UInt8], chunk: Int = 1 << 20, confirmsFrames: Bool = true)
    -> (packets: [AudioPacket], formats: [DataFormat], parser: Parser)
{
    let parser = Parser(confirmsFrames: confirmsFrames)
    var packets: [AudioPacket] = []
    var formats: [DataFormat] = []
    let handle: (Parser.Event) -> Void = { event in
        switch event {
        case .packet(let p): packets.append(p)
        case .format(let f): formats.append(f)
        }
    }
    var i = 0
    while i < bytes.count {
        let end = min(bytes.count, i + chunk)
        bytes[i..<end].withUnsafeBytes { parser.parse($0, handle) }
        i = end
    }
    parser.finish(handle)
    return (packets, formats, parser)
}

/// Decodes a fixture through Parser and Reader into one common-format buffer.
func decodeAll(_ name: String, commonRate: Int = 48_000, gapless: Bool = true) throws -> (PCMBuffer, Reader) {
    let (packets, _, parser) = parseAll(try Fixture.bytes(name))
    let reader = try Reader(commonRate: commonRate, gapless: gapless ? parser.gapless : nil)
    var out = PCMBuffer(sampleRate: commonRate)
    for packet in packets { out.append(try reader.read(packet)) }
    out.append(try reader.finish())
    return (out, reader)
}

/// The in-process suites that block their threads on real time (stations, sockets, players) for seconds each: one
/// test at a time. A blocked test holds one of the threads of Swift Testing's pool, which has as many as there are
/// cores, so `.ci/run` runs this chain in a test process of its own beside the rest of the target (`--skip`), and
/// the two overlap instead of taking turns on two threads. (The ThreadSanitizer run filters on the suites nested
/// here too.)
@Suite(.timeLimit(.minutes(2)), .serialized) struct RealTimeTests {}
