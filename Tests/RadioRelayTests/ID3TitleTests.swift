import Testing

@testable import RadioRelayMedia

/// A file input's title from its ID3v2 tag: each version's frame layout and each text encoding, and tags that lie
/// about their sizes read as no title rather than past the bytes given.
@Suite struct ID3TitleTests {
    static func synchsafe(_ value: Int) -> [UInt8] {
        [UInt8(value >> 21 & 0x7F), UInt8(value >> 14 & 0x7F), UInt8(value >> 7 & 0x7F), UInt8(value & 0x7F)]
    }

    static func bigEndian(_ value: Int, bytes: Int) -> [UInt8] {
        (0..<bytes).reversed().map { UInt8(value >> ($0 * 8) & 0xFF) }
    }

    /// A tag of `version` with the frames given (id, payload).
    static func tag(version: UInt8, flags: UInt8 = 0, _ frames: [(String, [UInt8])]) -> [UInt8] {
        var body: [UInt8] = []
        for (id, payload) in frames {
            body += Array(id.utf8)
            switch version {
            case 2: body += bigEndian(payload.count, bytes: 3)
            case 3: body += bigEndian(payload.count, bytes: 4) + [0, 0]
            default: body += synchsafe(payload.count) + [0, 0]
            }
            body += payload
        }
        body += [UInt8](repeating: 0, count: 16)  // padding
        return Array("ID3".utf8) + [version, 0, flags] + synchsafe(body.count) + body + [0xFF, 0xFB, 0x90, 0x64]
    }

    @Test func eachVersionAndEncoding() {
        let latin1: [UInt8] = [0] + Array("Caf".utf8) + [0xE9]
        #expect(
            ID3Title.read(Self.tag(version: 3, [("TPE1", [0] + Array("Artist".utf8)), ("TIT2", latin1)])) == "Café")
        #expect(
            ID3Title.read(Self.tag(version: 4, [("TIT2", [3] + Array("Station ID ✓".utf8) + [0])])) == "Station ID ✓")
        let utf16LE: [UInt8] = [1, 0xFF, 0xFE] + Array("Jingle".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
        #expect(ID3Title.read(Self.tag(version: 3, [("TIT2", utf16LE)])) == "Jingle")
        let utf16BE: [UInt8] = [2] + Array("Loop".utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] })
        #expect(ID3Title.read(Self.tag(version: 4, [("TIT2", utf16BE)])) == "Loop")
        #expect(ID3Title.read(Self.tag(version: 2, [("TT2", [0] + Array("Old".utf8))])) == "Old")
        // Control characters never reach a title.
        #expect(ID3Title.read(Self.tag(version: 4, [("TIT2", [3] + Array("a\u{1B}[2Jb".utf8))])) == "a[2Jb")
    }

    @Test func noTitleWhereThereIsNoneOrTheTagLies() {
        #expect(ID3Title.read([0xFF, 0xFB, 0x90, 0x64] + [UInt8](repeating: 0, count: 400)) == nil, "no tag")
        #expect(ID3Title.read(Self.tag(version: 3, [("TPE1", [0] + Array("Artist".utf8))])) == nil, "no TIT2")
        // A frame that claims more than the tag holds, and a tag cut short: nothing read past the bytes given.
        var lying = Self.tag(version: 3, [("TIT2", [0] + Array("Title".utf8))])
        lying[14...17] = [0x7F, 0xFF, 0xFF, 0xFF]
        #expect(ID3Title.read(lying) == nil)
        let whole = Self.tag(version: 4, [("TPE1", [UInt8](repeating: 0x41, count: 300)), ("TIT2", [3, 0x41])])
        #expect(ID3Title.read(Array(whole.prefix(200))) == nil)
        #expect(ID3Title.read(whole) == "A")
        // Every prefix of a tag reads without trapping.
        for length in 0..<whole.count { _ = ID3Title.read(Array(whole.prefix(length))) }
    }
}
