import RadioRelaySystem

/// One unit of an archive file: an Ogg page (checked by its capture pattern and CRC) or an MP3 frame (by its
/// header), found at an offset of a file's bytes. The archive's scanner (`ArchiveScanner`) indexes files with it and
/// a time-shifted listener's reader (`ArchivePlayhead`) reads them with it, so that both see the same units.
package enum ArchiveUnit: Sendable, Equatable {
    /// A whole unit of `length` bytes: an Ogg page's granule position and flags, or an MP3 frame's samples at its
    /// sample rate.
    case ogg(length: Int, granule: Int64, flags: UInt8)
    case mp3(length: Int, samples: Int, sampleRate: Int)
    /// More bytes are needed to know.
    case needsMore
    /// Not a page (a frame): nothing from here on is the archive's.
    case damaged

    /// The unit at `offset` of `bytes`, read as `format`.
    package static func find(in bytes: [UInt8], at offset: Int, format: ArchiveName.Format) -> ArchiveUnit {
        format == .opus ? oggPage(in: bytes, at: offset) : mp3Frame(in: bytes, at: offset)
    }

    private static func oggPage(in bytes: [UInt8], at offset: Int) -> ArchiveUnit {
        guard bytes.count - offset >= OggPageHeader.length else { return .needsMore }
        guard let header = OggPageHeader.decode(bytes, at: offset) else { return .damaged }
        let bodyStart = offset + OggPageHeader.length + header.segments
        guard bytes.count >= bodyStart else { return .needsMore }
        var bodyLength = 0
        for index in offset + OggPageHeader.length..<bodyStart { bodyLength += Int(bytes[index]) }
        let length = OggPageHeader.length + header.segments + bodyLength
        guard bytes.count - offset >= length else { return .needsMore }
        guard OggCRC.page(bytes[offset..<offset + length]) == header.checksum else { return .damaged }
        return .ogg(length: length, granule: header.granulePosition, flags: header.flags)
    }

    private static func mp3Frame(in bytes: [UInt8], at offset: Int) -> ArchiveUnit {
        guard bytes.count - offset >= 4 else { return .needsMore }
        guard
            let header = MP3FrameHeader(bytes[offset], bytes[offset + 1], bytes[offset + 2], bytes[offset + 3]),
            header.frameLength > 4
        else { return .damaged }
        guard bytes.count - offset >= header.frameLength else { return .needsMore }
        return .mp3(length: header.frameLength, samples: header.samplesPerFrame, sampleRate: header.sampleRate)
    }

    /// Samples (48 kHz) of the Opus packets that end on the Ogg page `page` (its granule position less this is the
    /// granule before it); 0 for what is not a page.
    package static func samples(ofOggPage page: [UInt8]) -> Int64 {
        // A packet begun on the page before has only its end here: its TOC byte is not here to read.
        let whole = OggPageHeader.packets(of: page)?.filter { $0.isComplete && !$0.isContinuation } ?? []
        return whole.reduce(0) { $0 + Int64(OpusPacketInfo.samples(page[$1.range]) ?? 0) }
    }

    /// Its length in bytes (0 when it is not a whole unit).
    package var length: Int {
        switch self {
        case .ogg(let length, _, _), .mp3(let length, _, _): length
        case .needsMore, .damaged: 0
        }
    }
}
