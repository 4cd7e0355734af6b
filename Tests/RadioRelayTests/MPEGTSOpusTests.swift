import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelayMedia

/// The archive's MPEG-TS segments read back by a reader written here from ISO/IEC 13818-1 (not the writer's code):
/// 188-byte packets, each PID's continuity, the PAT and PMT with their CRC (computed bit by bit), the Opus
/// descriptors, and each PES's PTS, PCR and control header giving back the very packets put in, in order; packets
/// of 1 to 700 bytes (one TS packet or several, a control header with several 0xFF bytes); two segments in a row
/// continue each other; the clock wraps at 2^33; ffmpeg decodes a segment.
@Suite struct MPEGTSOpusTests {
    struct Read {
        var pat: [UInt8] = []
        var pmt: [UInt8] = []
        var pes: [(pts: Int64, pcr: Int64?, random: Bool, discontinuity: Bool, bytes: [UInt8])] = []
        var counters: [UInt16: [UInt8]] = [:]
    }

    /// Reads a segment: every packet, each PID's payloads, the PES of the audio PID.
    static func read(_ bytes: [UInt8]) throws -> Read {
        try #require(bytes.count % 188 == 0)
        var read = Read()
        var current: (pts: Int64, pcr: Int64?, random: Bool, discontinuity: Bool, bytes: [UInt8])?
        for start in stride(from: 0, to: bytes.count, by: 188) {
            let packet = Array(bytes[start..<start + 188])
            try #require(packet[0] == 0x47)
            let unitStart = packet[1] & 0x40 != 0
            let pid = UInt16(packet[1] & 0x1F) << 8 | UInt16(packet[2])
            let control = (packet[3] >> 4) & 3
            read.counters[pid, default: []].append(packet[3] & 0x0F)
            var offset = 4
            var pcr: Int64?
            var random = false
            var discontinuity = false
            if control & 2 != 0 {
                let length = Int(packet[4])
                if length > 0 {
                    let flags = packet[5]
                    discontinuity = flags & 0x80 != 0
                    random = flags & 0x40 != 0
                    if flags & 0x10 != 0 {
                        pcr = packet[6..<10].reduce(Int64(0)) { $0 << 8 | Int64($1) } << 1 | Int64(packet[10] >> 7)
                    }
                }
                offset = 5 + length
            }
            let payload = Array(packet[offset...])
            switch pid {
            case 0: read.pat = payload
            case 0x1000: read.pmt = payload
            case 0x0100:
                if unitStart {
                    if let current { read.pes.append(current) }
                    try #require(payload.starts(with: [0, 0, 1, 0xBD]))
                    let p = payload[9..<14].map(Int64.init)
                    let pts =
                        (p[0] >> 1 & 7) << 30 | p[1] << 22 | (p[2] >> 1) << 15 | p[3] << 7 | p[4] >> 1
                    current = (pts, pcr, random, discontinuity, Array(payload[14...]))
                } else {
                    current?.bytes += payload
                }
            default: Issue.record("PID \(pid)")
            }
        }
        if let current { read.pes.append(current) }
        return read
    }

    /// The MPEG-2 CRC-32, bit by bit.
    static func crc(_ bytes: some Collection<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            for bit in 0..<8 {
                let top = (crc >> 31) ^ UInt32((byte >> (7 - bit)) & 1)
                crc = (crc << 1) ^ (top != 0 ? 0x04C1_1DB7 : 0)
            }
        }
        return crc
    }

    /// A PSI section from its payload (after the pointer field), its CRC checked.
    static func section(_ payload: [UInt8]) throws -> [UInt8] {
        let pointer = Int(payload[0])
        let length = Int(payload[pointer + 2] & 0x0F) << 8 | Int(payload[pointer + 3])
        let whole = Array(payload[(pointer + 1)..<(pointer + 4 + length)])
        #expect(crc(whole) == 0, "a section's CRC-32 over it and its CRC is 0")
        return whole
    }

    /// An Opus packet's bytes from the control header and what follows it.
    static func opus(_ pes: [UInt8]) throws -> [UInt8] {
        try #require(pes.count >= 3 && pes[0] == 0x7F && pes[1] & 0xE0 == 0xE0)
        var offset = 2
        var size = 0
        while pes[offset] == 0xFF {
            size += 255
            offset += 1
        }
        size += Int(pes[offset])
        offset += 1
        #expect(pes.count - offset == size)
        return Array(pes[offset...])
    }

    @Test func packetsComeBackWithTheirTimesAndTheStreamIsWellFormed() throws {
        let sizes = [1, 120, 160, 176, 177, 182, 183, 184, 254, 255, 256, 510, 700]
        let start: Int64 = 1_796_457_600_000 * 48
        let packets = sizes.enumerated().map { index, size in
            ((0..<size).map { UInt8(truncatingIfNeeded: $0 &+ index) }, start + Int64(index) * 960)
        }
        let bytes = MPEGTSOpus.segment(sequence: 179_645_760, channels: 1, packets: packets)
        let read = try Self.read(bytes)
        let pat = try Self.section(read.pat)
        #expect(pat[0] == 0x00 && Array(pat[8..<12]) == [0x00, 0x01, 0xF0, 0x00], "program 1 → PID 0x1000")
        let pmt = try Self.section(read.pmt)
        #expect(pmt[0] == 0x02 && UInt16(pmt[8] & 0x1F) << 8 | UInt16(pmt[9]) == 0x0100, "the PCR's PID")
        let stream = Array(pmt[12..<(pmt.count - 4)])
        #expect(stream[0] == 0x06 && UInt16(stream[1] & 0x1F) << 8 | UInt16(stream[2]) == 0x0100)
        #expect(Array(stream[5...]) == [0x05, 4] + Array("Opus".utf8) + [0x7F, 2, 0x80, 1], "mono")
        #expect(read.pes.count == sizes.count)
        for (index, pes) in read.pes.enumerated() {
            #expect(try Self.opus(pes.bytes) == packets[index].0, "packet \(index)")
            let pts = (packets[index].1 * 15 / 8) & ((1 << 33) - 1)
            #expect(pes.pts == pts && pes.pcr == (pts - 9_000) & ((1 << 33) - 1) && pes.random)
            #expect(pes.discontinuity == (index == 0), "only the segment's first says discontinuity")
        }
        // Continuity: each PID counts by one, modulo 16.
        for (pid, counters) in read.counters {
            for (previous, next) in zip(counters, counters.dropFirst()) {
                #expect(next == (previous + 1) & 0x0F, "PID \(pid)")
            }
        }
        #expect(read.counters[0] == [UInt8(179_645_760 & 0x0F)])
        // The next segment's tables continue this one's.
        let next = try Self.read(MPEGTSOpus.segment(sequence: 179_645_761, channels: 2, packets: packets))
        #expect(next.counters[0] == [((read.counters[0]?[0] ?? 0) + 1) & 0x0F])
        // The clock wraps at 2^33 (each 26.5 hours) and never traps, whatever the samples.
        #expect(MPEGTSOpus.ticks((1 << 36) - 8) == (1 << 33) - 15 && MPEGTSOpus.ticks((1 << 36) + 8) == 15)
        for value in [Int64.max, .min, -1, 0] { #expect((0..<(1 << 33)).contains(MPEGTSOpus.ticks(value))) }
        // Nothing that is not Opus: an empty packet and one over 61 200 bytes are left out.
        let odd = MPEGTSOpus.segment(
            sequence: 0, channels: 2, packets: [([], start), ([UInt8](repeating: 1, count: 61_201), start)])
        #expect(try Self.read(odd).pes.isEmpty)
    }

    @Test(.enabled(if: tool("ffmpeg") != nil, "needs ffmpeg"))
    func ffmpegDecodesASegment() throws {
        let encoder = try Encoder(EncoderConfiguration())
        var base: Int64 = 0
        let eight = ArchiveRulesTests.eight
        let (file, _) = try ArchivePlayheadTests.file(start: eight, pages: 40, encoder: encoder, base: &base)
        var segment = ArchiveSegment(from: eight, to: eight + 10_000)
        segment.enter(fileStart: eight)
        var offset = 0
        while case .ogg(let length, _, _) = ArchiveUnit.find(in: file, at: offset, format: .opus) {
            segment.page(Array(file[offset..<offset + length]))
            offset += length
        }
        let bytes = try #require(segment.transportStream(sequence: UInt32(eight / 10_000)))
        let path = temporaryPath("segment.ts")
        defer { unlink(path) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let pcm = temporaryPath("segment.pcm")
        defer { unlink(pcm) }
        let decoded = try run(
            try #require(tool("ffmpeg")),
            ["-v", "error", "-i", path, "-f", "s16le", "-ac", "2", "-ar", "48000", "-y", pcm])
        #expect(decoded.status == 0 && decoded.stderr.isEmpty, "\(decoded.stderr)")
        // 4 s of 20 ms packets, two channels of 16 bits.
        let count = (try? Data(contentsOf: URL(fileURLWithPath: pcm)).count) ?? 0
        #expect(abs(count - 4 * 48_000 * 4) <= 2 * 960 * 4, "\(count) bytes")
    }
}
