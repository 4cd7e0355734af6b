import RadioRelaySystem

/// What an edge relay needs to know of an Opus packet and of the Ogg Opus header packets without decoding anything:
/// a packet's duration from its TOC byte (RFC 6716 §3.1), and the fields of OpusHead (RFC 7845 §5.1) and OpusTags
/// (§5.2). Pure functions over untrusted bytes: they never trap and return nil for what they cannot read.
package enum OpusPacketInfo {
    /// Samples at 48 kHz the packet decodes to; nil for an empty or malformed packet (code 3 without its count
    /// byte, or more than 120 ms).
    package static func samples(_ packet: some Collection<UInt8>) -> Int? {
        frames(packet).map { $0.count * $0.samples }
    }

    /// The packet's frame count and samples per frame (48 kHz), from its TOC byte; nil as for `samples`.
    package static func frames(_ packet: some Collection<UInt8>) -> (count: Int, samples: Int)? {
        guard let toc = packet.first else { return nil }
        let configuration = Int(toc >> 3)
        let frameSamples: Int
        switch configuration {
        case 0...11:  // SILK: 10, 20, 40, 60 ms
            frameSamples = [480, 960, 1920, 2880][configuration & 3]
        case 12...15:  // hybrid: 10, 20 ms
            frameSamples = [480, 960][configuration & 1]
        default:  // CELT: 2.5, 5, 10, 20 ms
            frameSamples = [120, 240, 480, 960][configuration & 3]
        }
        let frames: Int
        switch toc & 3 {
        case 0: frames = 1
        case 1, 2: frames = 2
        default:
            guard packet.count >= 2 else { return nil }
            frames = Int(packet[packet.index(after: packet.startIndex)] & 0x3F)
        }
        guard frames > 0, frames * frameSamples <= 5760 else { return nil }
        return (frames, frameSamples)
    }

    /// The most bytes a packet of `frames` frames may hold in a stream of `streams` Opus streams: 1275 bytes a
    /// frame (RFC 6716 §3.2.1) and its length bytes per stream, plus room for code 3 padding. A larger packet claims
    /// less audio than its size allows: it is no Opus packet, and relaying it would let a few pages hold megabytes.
    package static func maxBytes(frames: Int, streams: Int) -> Int {
        max(1, streams) * (frames * (1275 + 2) + 2) + 255
    }

    /// Whether `packet`'s size fits its duration (`maxBytes`) in a stream of `streams` streams.
    package static func sizeFits(_ packet: [UInt8], streams: Int) -> Bool {
        guard let frames = frames(packet) else { return false }
        return packet.count <= maxBytes(frames: frames.count, streams: streams)
    }

    /// OpusHead's fields (RFC 7845 §5.1).
    package struct Head: Equatable, Sendable {
        package var channels: Int
        package var preSkip: Int
        package var inputRate: Int
        package var gain: Int
        package var mappingFamily: Int
        /// Stream count, coupled count and channel mapping, for families other than 0 (empty for family 0).
        package var mapping: [UInt8]

        /// Whether packets of a stream with `other` as its head decode with a decoder set up for this one: the
        /// channel count and the mapping are the same (pre-skip, rate and gain only concern the start).
        package func carriesPackets(of other: Head) -> Bool {
            channels == other.channels && mappingFamily == other.mappingFamily && mapping == other.mapping
        }

        /// Opus streams in each packet: 1 for family 0, else the stream count of the mapping table.
        package var streams: Int { mapping.first.map { max(1, Int($0)) } ?? 1 }
    }

    package static func head(_ packet: [UInt8]) -> Head? {
        guard packet.count >= 19, packet.starts(with: Array("OpusHead".utf8)), packet[8] & 0xF0 == 0 else {
            return nil
        }
        let channels = Int(packet[9])
        guard channels >= 1 else { return nil }
        let family = Int(packet[18])
        var mapping: [UInt8] = []
        if family != 0 {
            guard packet.count >= 21 + channels else { return nil }
            mapping = Array(packet[19..<21 + channels])
        } else if channels > 2 {
            return nil
        }
        return Head(
            channels: channels, preSkip: Int(packet[10]) | Int(packet[11]) << 8,
            inputRate: Int(packet[12]) | Int(packet[13]) << 8 | Int(packet[14]) << 16 | Int(packet[15]) << 24,
            gain: Int(Int16(bitPattern: UInt16(packet[16]) | UInt16(packet[17]) << 8)), mappingFamily: family,
            mapping: mapping)
    }

    /// OpusTags' vendor string and comments (`KEY=value`); nil when malformed (lengths past the end).
    package static func tags(_ packet: [UInt8]) -> (vendor: String, comments: [String])? {
        guard packet.count >= 16, packet.starts(with: Array("OpusTags".utf8)) else { return nil }
        var offset = 8
        func length() -> Int? {
            guard offset + 4 <= packet.count else { return nil }
            let value =
                Int(packet[offset]) | Int(packet[offset + 1]) << 8 | Int(packet[offset + 2]) << 16
                | Int(packet[offset + 3]) << 24
            offset += 4
            return value
        }
        guard let vendorLength = length(), vendorLength <= packet.count - offset else { return nil }
        let vendor = String(decoding: packet[offset..<offset + vendorLength], as: UTF8.self)
        offset += vendorLength
        guard let count = length(), count <= (packet.count - offset) / 4 else { return nil }
        var comments: [String] = []
        for _ in 0..<count {
            guard let size = length(), size <= packet.count - offset else { return nil }
            comments.append(String(decoding: packet[offset..<offset + size], as: UTF8.self))
            offset += size
        }
        return (vendor, comments)
    }

    /// The `TITLE` comment (the key is case-insensitive), if any.
    package static func title(in comments: [String]) -> String? {
        for comment in comments {
            guard let equals = comment.firstIndex(of: "=") else { continue }
            if comment[..<equals].uppercased() == "TITLE" { return String(comment[comment.index(after: equals)...]) }
        }
        return nil
    }
}
