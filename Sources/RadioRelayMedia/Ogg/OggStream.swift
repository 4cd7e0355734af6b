import COgg
import RadioRelaySystem

/// Owns one libogg `ogg_stream_state` (`ogg_stream_init`/`ogg_stream_clear`): packets in, serialized pages out.
package final class OggStream {
    private var state = ogg_stream_state()
    package let serial: UInt32
    private var packetNumber: Int64 = 0

    package init(serial: UInt32) throws {
        self.serial = serial
        guard ogg_stream_init(&state, Int32(bitPattern: serial)) == 0 else {
            throw ConfigurationError("libogg: ogg_stream_init failed")
        }
    }

    deinit { ogg_stream_clear(&state) }

    /// `ogg_stream_packetin`.
    package func append(_ packet: UnsafeRawBufferPointer, granule: Int64, beginning: Bool = false, end: Bool = false) {
        var p = ogg_packet()
        p.packet = UnsafeMutablePointer(mutating: packet.baseAddress?.assumingMemoryBound(to: UInt8.self))
        p.bytes = packet.count
        p.b_o_s = beginning ? 1 : 0
        p.e_o_s = end ? 1 : 0
        p.granulepos = granule
        p.packetno = packetNumber
        packetNumber += 1
        let result = ogg_stream_packetin(&state, &p)
        precondition(result == 0, "ogg_stream_packetin on a cleared stream")
    }

    package func append(_ packet: [UInt8], granule: Int64, beginning: Bool = false, end: Bool = false) {
        packet.withUnsafeBytes { append($0, granule: granule, beginning: beginning, end: end) }
    }

    /// `ogg_stream_flush_fill`: every queued packet onto pages now. The fill limit is set high so that only the
    /// 255-segment limit splits a page: a page holds exactly the packets of one flush interval.
    package func flush() -> [OggPage] {
        var pages: [OggPage] = []
        var page = ogg_page()
        while ogg_stream_flush_fill(&state, &page, Int32.max) != 0 {
            var bytes = [UInt8](repeating: 0, count: page.header_len + page.body_len)
            bytes.withUnsafeMutableBytes { out in
                out.baseAddress!.copyMemory(from: page.header, byteCount: page.header_len)
                (out.baseAddress! + page.header_len).copyMemory(from: page.body, byteCount: page.body_len)
            }
            pages.append(OggPage(bytes: bytes))
        }
        return pages
    }
}

@available(*, unavailable) extension OggStream: Sendable {}
