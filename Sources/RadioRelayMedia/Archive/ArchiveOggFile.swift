import RadioRelaySystem

/// The bytes of one archive file of Ogg Opus: its link's header pages (OpusHead, OpusTags) as the listeners get
/// them, then the stream's pages re-stamped by an `OggSplice` so that the file is a clean stream of its own: page
/// sequence numbers on from the headers', granules from 0 (the first audio page's granule is the samples it
/// carries, and the decoder drops OpusHead's pre-skip from them as at the start of any stream, RFC 7845 §4.2), and
/// the last page flagged end-of-stream. One page is held back for that flag: `carry` hands on the page before the
/// one it is given, `finish` the held one, flagged.
///
/// A pure value over bytes (tests: `ArchiveOggFileTests`).
package struct ArchiveOggFile: Sendable {
    /// The header pages, written first.
    package let headerBytes: [UInt8]
    private var splice: OggSplice
    private var held: [UInt8]?

    /// A file that starts after the incoming page whose granule is `base`, with `headers` (OpusHead's page first);
    /// nil when the headers are not an Opus stream's.
    package init?(headers: [[UInt8]], base: Int64) {
        guard let first = headers.first, let last = headers.last else { return nil }
        let made = first.withUnsafeBytes { head in
            last.withUnsafeBytes { tags in OggSplice(lastPage: tags, headPage: head, base: base) }
        }
        guard let made, OggSplice.granule(of: last) == 0 else { return nil }
        splice = made
        headerBytes = headers.flatMap { $0 }
    }

    /// The bytes to write for the stream's next page (`page`): the page before it, re-stamped; nothing the first
    /// time.
    package mutating func carry(_ page: [UInt8]) -> [UInt8] {
        defer { held = page }
        guard let previous = held else { return [] }
        return previous.withUnsafeBytes { splice.carry($0, isHeader: false) }
    }

    /// The bytes that end the file: the page held back, re-stamped with the end-of-stream flag; nothing when no
    /// page came.
    package mutating func finish() -> [UInt8] {
        defer { held = nil }
        guard let previous = held else { return [] }
        return previous.withUnsafeBytes { splice.carry($0, isHeader: false, ends: true) }
    }
}

extension OggSplice {
    /// The granule position of the page in `bytes` (-1 when none ends on it, or it is not a page).
    package static func granule(of bytes: [UInt8]) -> Int64 {
        bytes.withUnsafeBytes { granule(of: $0) }
    }
}
