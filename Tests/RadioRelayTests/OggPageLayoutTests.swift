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
}
