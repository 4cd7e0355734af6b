import RadioRelaySystem

/// Opus in an MPEG-2 transport stream (ISO/IEC 13818-1, with the Opus mapping ETSI TS 102 366's draft and the
/// Xiph "OpusTS" page describe, as ffmpeg and VLC read it), for the archive's HLS in MPEG-TS
/// (`/NAME/archive-ts.m3u8`): the rendition ffmpeg's HLS demuxer, and so mpv, can seek in (it seeks in no fMP4).
///
/// One segment: a PAT and a PMT (program 1; the audio stream: type 0x06, private data, with a registration
/// descriptor `Opus` and an extension descriptor giving the channel configuration), then one PES (private stream 1)
/// per Opus packet, its PTS the packet's start on a 90 kHz clock counted from the epoch (modulo 2^33, as every
/// transport stream's clock wraps, each 26.5 hours), each packet behind its Opus control header (prefix 0x3FF, no
/// trim, its size in 0xFF bytes and a remainder). The first TS packet of each PES carries a PCR 100 ms before its
/// PTS and says random access (every Opus packet decodes alone); the first audio packet of a segment says
/// discontinuity, as a player may come from any segment; PAT and PMT count their continuity from the segment's
/// number, so that segments that follow each other follow each other. A pure function (tests: `ArchiveHLSTests`).
package enum MPEGTSOpus {
    static let packetSize = 188
    static let pmtPID: UInt16 = 0x1000
    static let audioPID: UInt16 = 0x0100
    /// The largest Opus packet (48 frames of 1 275 bytes): anything longer is not Opus and is left out.
    static let maxPacketBytes = 61_200
    /// 90 kHz ticks, modulo 2^33.
    static let clockMask: Int64 = (1 << 33) - 1

    /// A segment of `packets` (each with its start in 48 kHz samples since the epoch) of a stream with `channels`
    /// channels (1 or 2: the archive's encoder's), numbered `sequence`.
    package static func segment(sequence: UInt32, channels: Int, packets: [(bytes: [UInt8], start: Int64)]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity((packets.reduce(0) { $0 + $1.bytes.count } / 160 + 4) * packetSize)
        let tables = UInt8(truncatingIfNeeded: sequence & 0x0F)
        out += section(pid: 0, counter: tables, programAssociation())
        out += section(pid: pmtPID, counter: tables, programMap(channels: channels))
        var counter: UInt8 = 0
        var first = true
        for packet in packets where !packet.bytes.isEmpty && packet.bytes.count <= maxPacketBytes {
            let pts = ticks(packet.start)
            let pcr = (pts &- 9_000) & clockMask
            out += pes(packet.bytes, pts: pts, pcr: pcr, discontinuity: first, counter: &counter)
            first = false
        }
        return out
    }

    /// 48 kHz samples → 90 kHz ticks, modulo 2^33 (wrapping: the samples come from the archive's files).
    static func ticks(_ samples: Int64) -> Int64 {
        let whole = samples / 8
        let rest = samples % 8
        return (whole &* 15 &+ rest * 15 / 8) & clockMask
    }

    private static func programAssociation() -> [UInt8] {
        var body: [UInt8] = [0x00, 0x01, 0xC1, 0x00, 0x00]  // transport stream 1, version 0, current; section 0 of 0
        body += [0x00, 0x01, 0xE0 | UInt8(pmtPID >> 8), UInt8(pmtPID & 0xFF)]  // program 1 → its PMT
        return table(id: 0x00, body)
    }

    private static func programMap(channels: Int) -> [UInt8] {
        var body: [UInt8] = [0x00, 0x01, 0xC1, 0x00, 0x00]  // program 1, version 0, current; section 0 of 0
        body += [0xE0 | UInt8(audioPID >> 8), UInt8(audioPID & 0xFF)]  // the PCR is on the audio stream
        body += [0xF0, 0x00]  // no program descriptors
        let descriptors: [UInt8] =
            [0x05, 4] + Array("Opus".utf8)  // registration
            + [0x7F, 2, 0x80, UInt8(clamping: min(max(channels, 1), 2))]  // extension: Opus, channel configuration
        body += [0x06, 0xE0 | UInt8(audioPID >> 8), UInt8(audioPID & 0xFF)]
        body += [0xF0, UInt8(descriptors.count)] + descriptors
        return table(id: 0x02, body)
    }

    /// A PSI section: `id`, the syntax bit and length, `body`, its CRC-32 (MPEG's: Ogg's polynomial from all ones).
    private static func table(id: UInt8, _ body: [UInt8]) -> [UInt8] {
        let length = body.count + 4
        var section: [UInt8] = [id, 0xB0 | UInt8(length >> 8), UInt8(length & 0xFF)] + body
        let crc = section.withUnsafeBytes { OggCRC.update(0xFFFF_FFFF, $0) }
        section += [UInt8(crc >> 24), UInt8((crc >> 16) & 0xFF), UInt8((crc >> 8) & 0xFF), UInt8(crc & 0xFF)]
        return section
    }

    /// One TS packet holding a whole section (pointer field 0, stuffed with 0xFF).
    private static func section(pid: UInt16, counter: UInt8, _ section: [UInt8]) -> [UInt8] {
        var packet: [UInt8] = [0x47, 0x40 | UInt8(pid >> 8), UInt8(pid & 0xFF), 0x10 | (counter & 0x0F), 0x00]
        packet += section
        packet += [UInt8](repeating: 0xFF, count: max(0, packetSize - packet.count))
        return packet
    }

    /// One Opus packet as a PES in TS packets.
    private static func pes(_ opus: [UInt8], pts: Int64, pcr: Int64, discontinuity: Bool, counter: inout UInt8)
        -> [UInt8]
    {
        var payload: [UInt8] = [0x7F, 0xE0]  // control header: prefix, no trim, no extension
        payload += [UInt8](repeating: 0xFF, count: opus.count / 255)
        payload.append(UInt8(opus.count % 255))
        payload += opus
        let headerLength = 3 + 5
        var pes: [UInt8] = [0x00, 0x00, 0x01, 0xBD]
        let length = headerLength + payload.count
        pes += [UInt8(length >> 8), UInt8(length & 0xFF), 0x84, 0x80, 0x05]  // aligned; a PTS only
        pes += [
            0x21 | UInt8((pts >> 29) & 0x0E), UInt8((pts >> 22) & 0xFF), 0x01 | UInt8((pts >> 14) & 0xFE),
            UInt8((pts >> 7) & 0xFF), 0x01 | UInt8((pts << 1) & 0xFE),
        ]
        pes += payload
        var out: [UInt8] = []
        out.reserveCapacity((pes.count / 170 + 1) * packetSize)
        var offset = 0
        var start = true
        while offset < pes.count {
            let remaining = pes.count - offset
            // The adaptation field's contents (its length byte apart): on the PES's first packet its flags
            // (discontinuity, random access, PCR) and the PCR (33-bit base, 6 reserved bits, extension 0).
            var field: [UInt8]? = nil
            if start {
                field = [(discontinuity ? 0x80 : 0) | 0x40 | 0x10]
                field? += [
                    UInt8((pcr >> 25) & 0xFF), UInt8((pcr >> 17) & 0xFF), UInt8((pcr >> 9) & 0xFF),
                    UInt8((pcr >> 1) & 0xFF), UInt8((pcr & 1) << 7) | 0x7E, 0x00,
                ]
            } else if remaining < packetSize - 4 {
                // The last piece, short: an adaptation field stuffs the packet (only its length byte, for one).
                field = remaining == packetSize - 5 ? [] : [0x00]
            }
            if var contents = field {
                let room = packetSize - 5 - contents.count
                if remaining < room { contents += [UInt8](repeating: 0xFF, count: room - remaining) }
                let take = min(remaining, packetSize - 5 - contents.count)
                out += [0x47, (start ? 0x40 : 0) | UInt8(audioPID >> 8), UInt8(audioPID & 0xFF), 0x30 | counter]
                out.append(UInt8(contents.count))
                out += contents
                out += pes[offset..<offset + take]
                offset += take
            } else {
                out += [0x47, UInt8(audioPID >> 8), UInt8(audioPID & 0xFF), 0x10 | counter]
                out += pes[offset..<offset + packetSize - 4]
                offset += packetSize - 4
            }
            counter = (counter + 1) & 0x0F
            start = false
        }
        return out
    }
}
