import RadioRelay
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// What a listener received from a station that chains a link per title, checked and decoded as a player does it:
/// each BOS page starts a link with a fresh serial, OpusHead and OpusTags first; a new libopus decoder per link, its
/// pre-skip dropped and its end trimmed to the granule of its end-of-stream page (RFC 7845 §4.4, §4.5). Problems are
/// collected as text rather than thrown, so a test can show them all.
package struct ChainedCapture {
    package struct Link {
        package var serial: UInt32
        package var preSkip = 0
        package var vendor = ""
        package var comments: [String] = []
        /// The link's last page carried the end-of-stream flag.
        package var ended = false
        package var pages: [OggPageReader.Page] = []
        /// Granule of the first page on which an audio packet ends, and of the last.
        package var firstGranule: Int64?
        package var lastGranule: Int64 = 0
        /// Samples decoded from the packets ending on the first audio page.
        fileprivate var firstPageSamples = 0
        package var left: [Float] = []
        package var right: [Float] = []

        package var title: String? {
            comments.first { $0.uppercased().hasPrefix("TITLE=") }.map { String($0.dropFirst(6)) }
        }
    }

    package var links: [Link] = []
    /// Every link's audio after its pre-skip and end trimming, one after the other.
    package var left: [Float] = []
    package var right: [Float] = []
    /// Where each link's audio starts in `left` and `right` (the first link's at 0).
    package var linkStarts: [Int] = []
    package var problems: [String] = []

    package var duration: Double { Double(left.count) / 48_000 }

    /// The bytes of `capture` up to the end of its last complete link (its last end-of-stream page): what a
    /// validator can check without "missing EOS" for the link a live capture cut short.
    package static func completeLinks(_ capture: [UInt8]) throws -> [UInt8] {
        var reader = OggPageReader()
        reader.append(capture)
        var length = 0
        var complete = 0
        while let page = try reader.next() {
            length += page.bytes.count
            if page.header.isEnd { complete = length }
        }
        return Array(capture[..<complete])
    }

    /// The capture up to its last whole page, that page flagged end-of-stream (its CRC made again), so that a
    /// validator judges the stream and not the cut a live capture ends with.
    package static func closed(_ bytes: [UInt8]) throws -> [UInt8] {
        var reader = OggPageReader()
        reader.append(bytes)
        var start = 0
        var last = 0
        var length = 0
        while let page = try reader.next() {
            start = length
            length += page.bytes.count
            last = page.bytes.count
        }
        var out = Array(bytes[..<length])
        guard last > 0 else { return out }
        out[start + 5] |= 4
        for index in 22...25 { out[start + index] = 0 }
        let crc = OggPageReader.crc(Array(out[start..<start + last]))
        for index in 0..<4 { out[start + 22 + index] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(index))) }
        return out
    }

    package init(_ bytes: [UInt8]) throws {
        var reader = OggPageReader()
        reader.append(bytes)
        var decoder = try OpusDecoderHandle()
        var packetIndex = 0
        var previousSequence: UInt32?
        while let page = try reader.next() {
            let header = page.header
            if header.isBeginning {
                if let last = links.last {
                    if last.serial == header.serial { problems.append("link \(links.count): serial reused") }
                    finishLink()
                }
                links.append(Link(serial: header.serial))
                decoder = try OpusDecoderHandle()
                packetIndex = 0
                previousSequence = nil
            }
            guard !links.isEmpty else {
                problems.append("the capture does not start with a BOS page")
                return
            }
            let index = links.count - 1
            if header.serial != links[index].serial {
                problems.append("link \(index): serial \(header.serial) without a BOS page")
            }
            if let previous = previousSequence, header.sequence != previous &+ 1 {
                // The one jump allowed: from OpusTags to the burst of a listener who joined mid-link.
                if !(index == 0 && previous == 1 && packetIndex == 2) {
                    problems.append("link \(index): page sequence \(previous) → \(header.sequence)")
                }
            }
            previousSequence = header.sequence
            links[index].pages.append(page)
            var decoded = 0
            for packet in page.packets {
                defer { packetIndex += 1 }
                switch packetIndex {
                case 0: readHead(packet, link: index)
                case 1: readTags(packet, link: index)
                default:
                    var left: [Float] = []
                    var right: [Float] = []
                    decoded += try decoder.decode(packet, left: &left, right: &right)
                    links[index].left += left
                    links[index].right += right
                }
            }
            if packetIndex > 2 && header.granulePosition >= 0 {
                if links[index].firstGranule == nil {
                    links[index].firstGranule = header.granulePosition
                    links[index].firstPageSamples = decoded
                }
                if header.granulePosition < links[index].lastGranule {
                    problems.append("link \(index): granule went back at page \(header.sequence)")
                }
                links[index].lastGranule = header.granulePosition
            }
            if header.isEnd { links[index].ended = true }
        }
        finishLink()
    }

    private mutating func readHead(_ packet: [UInt8], link: Int) {
        guard packet.starts(with: Array("OpusHead".utf8)), packet.count >= 19 else {
            problems.append("link \(link): no OpusHead first")
            return
        }
        links[link].preSkip = Int(packet[10]) | Int(packet[11]) << 8
    }

    private mutating func readTags(_ packet: [UInt8], link: Int) {
        guard packet.starts(with: Array("OpusTags".utf8)) else {
            problems.append("link \(link): no OpusTags second")
            return
        }
        var offset = 8
        func field() -> [UInt8]? {
            guard offset + 4 <= packet.count else { return nil }
            let length = packet[offset..<offset + 4].reversed().reduce(0) { $0 << 8 | Int($1) }
            offset += 4
            guard length >= 0, offset + length <= packet.count else { return nil }
            defer { offset += length }
            return Array(packet[offset..<offset + length])
        }
        guard let vendor = field(), offset + 4 <= packet.count else {
            problems.append("link \(link): OpusTags cut short")
            return
        }
        links[link].vendor = String(decoding: vendor, as: UTF8.self)
        let count = packet[offset..<offset + 4].reversed().reduce(0) { $0 << 8 | Int($1) }
        offset += 4
        for _ in 0..<min(count, 1000) {
            guard let comment = field() else {
                problems.append("link \(link): OpusTags comment cut short")
                return
            }
            links[link].comments.append(String(decoding: comment, as: UTF8.self))
        }
    }

    /// Trims the last link's audio as a player does and appends it: its decoded samples start at the first audio
    /// page's granule minus what that page decoded to; those before the pre-skip and, after an end-of-stream page,
    /// those past its granule are dropped.
    private mutating func finishLink() {
        guard let link = links.last, let first = link.firstGranule else { return }
        let start = Int(first) - link.firstPageSamples
        var from = max(0, link.preSkip - start)
        var to = link.left.count
        if link.ended { to = min(to, max(0, Int(link.lastGranule) - start)) }
        from = min(from, to)
        linkStarts.append(left.count)
        left += link.left[from..<to]
        right += link.right[from..<to]
    }
}
