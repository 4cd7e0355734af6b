import Testing

@testable import RadioRelayMedia

/// The one Ogg page layout every reader shares: the fixed header (`OggPageHeader`) and the CRC (`OggCRC`), checked
/// against a plain bit-by-bit CRC written here and against pages the Encoder (libogg) made.
@Suite struct OggPageLayoutTests {
    /// Ogg's CRC-32 one bit at a time: polynomial 0x04C11DB7, initial 0, not reflected, no final XOR.
    static func reference(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0
        for byte in bytes {
            crc ^= UInt32(byte) << 24
            for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? (crc << 1) ^ 0x04C1_1DB7 : crc << 1 }
        }
        return crc
    }

    @Test func theCRCIsOggsWhateverTheSplit() {
        var generator = SystemRandomNumberGenerator()
        for length in [0, 1, 7, 8, 9, 27, 255, 4096, 65_307] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let whole = bytes.withUnsafeBytes { OggCRC.update(0, $0) }
            #expect(whole == Self.reference(bytes), "\(length) bytes")
            // Streaming: any split gives the same.
            let cut = length / 3
            let split = bytes.withUnsafeBytes { raw in
                OggCRC.update(
                    OggCRC.update(0, UnsafeRawBufferPointer(rebasing: raw[..<cut])),
                    UnsafeRawBufferPointer(rebasing: raw[cut...]))
            }
            #expect(split == whole)
        }
    }

    /// A page libogg made: its header decodes to the page's own fields, its CRC is the one it carries (the field
    /// taken as zero), in an array and in a slice of a larger buffer; a wrong capture pattern or version is told.
    @Test func theEncodersPagesDecodeAndCheck() throws {
        let encoder = try Encoder(EncoderConfiguration())
        let pages = encoder.headerPages
        for page in pages {
            let header = try #require(OggPageHeader.decode(page.bytes))
            #expect(header.serial == page.serial && header.sequence == page.sequence)
            #expect(header.granulePosition == page.granulePosition && header.isBeginning == page.isBeginning)
            #expect(OggCRC.page(page.bytes) == header.checksum)
            var zeroed = page.bytes
            zeroed[22...25] = [0, 0, 0, 0]
            #expect(OggCRC.page(page.bytes) == Self.reference(zeroed))
            let padded = [1, 2, 3] + page.bytes + [4]
            #expect(OggCRC.page(padded[3..<(3 + page.bytes.count)]) == header.checksum)
            #expect(OggPageHeader.decode(padded, at: 3) == header)
        }
        var bad = pages[0].bytes
        bad[4] = 1
        #expect(bad.withUnsafeBytes { OggPageHeader.decode($0) } == .failure(.version))
        bad[0] = 0x6F
        #expect(bad.withUnsafeBytes { OggPageHeader.decode($0) } == .failure(.capturePattern))
        #expect(OggPageHeader.decode([UInt8](repeating: 0, count: 26)) == nil)
        #expect(OggPageHeader.decode(pages[0].bytes, at: pages[0].bytes.count) == nil)
    }

    /// A page made by hand: `laces` as its lacing values, a body of as many bytes as they sum to (less `short`).
    static func page(laces: [UInt8], continued: Bool, short: Int = 0) -> [UInt8] {
        var bytes = Array("OggS".utf8) + [0, continued ? 1 : 0] + [UInt8](repeating: 0, count: 20)
        bytes += [UInt8(laces.count)] + laces
        return bytes + [UInt8](repeating: 7, count: laces.reduce(0) { $0 + Int($1) } - short)
    }

    /// Packets as the lacing values place them: a 255 goes on, a 0 ends an empty packet, a page's first packet
    /// continues the page before's when the page says so, and its last one goes on to the next page after a 255; a
    /// page whose lacing values reach past its end is torn.
    @Test func packetsFollowTheLacingValues() throws {
        let body = OggPageHeader.length
        let plain = try #require(OggPageHeader.packets(of: Self.page(laces: [10, 255, 5, 0], continued: false)))
        #expect(
            plain == [
                .init(range: body + 4..<body + 14, isContinuation: false, isComplete: true),
                .init(range: body + 14..<body + 274, isContinuation: false, isComplete: true),
                .init(range: body + 274..<body + 274, isContinuation: false, isComplete: true),
            ])
        let both = try #require(OggPageHeader.packets(of: Self.page(laces: [20, 255], continued: true)))
        #expect(
            both == [
                .init(range: body + 2..<body + 22, isContinuation: true, isComplete: true),
                .init(range: body + 22..<body + 277, isContinuation: false, isComplete: false),
            ])
        let middle = try #require(OggPageHeader.packets(of: Self.page(laces: [255, 255], continued: true)))
        #expect(middle == [.init(range: body + 2..<body + 512, isContinuation: true, isComplete: false)])
        #expect(OggPageHeader.packets(of: Self.page(laces: [], continued: false)) == [])
        #expect(OggPageHeader.packets(of: Self.page(laces: [100], continued: false, short: 50)) == nil)
        #expect(OggPageHeader.packets(of: Array(Self.page(laces: [100], continued: false).prefix(20))) == nil)
    }
}
