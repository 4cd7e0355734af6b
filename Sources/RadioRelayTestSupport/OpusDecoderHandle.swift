import COpus
import RadioRelay
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// Owns one libopus `OpusDecoder` (`opus_decoder_create`/`opus_decoder_destroy`), 48 kHz stereo. It checks our own
/// output in the tests and the benches: what listeners receive is decoded by the reference decoder.
package final class OpusDecoderHandle {
    private let decoder: OpaquePointer
    private var scratch = [Float](repeating: 0, count: 5760 * 2)

    package init() throws {
        var error: Int32 = 0
        guard let decoder = opus_decoder_create(Int32(OpusClock.rate), 2, &error), error == OPUS_OK
        else { throw OpusError(code: error, call: "opus_decoder_create") }
        self.decoder = decoder
    }

    deinit { opus_decoder_destroy(decoder) }

    /// `opus_decode_float` of one packet; appends the decoded samples to `left` and `right`, returns their count.
    @discardableResult
    package func decode(_ packet: [UInt8], left: inout [Float], right: inout [Float]) throws -> Int {
        let count = packet.withUnsafeBufferPointer { p in
            scratch.withUnsafeMutableBufferPointer { out in
                opus_decode_float(decoder, p.baseAddress, Int32(p.count), out.baseAddress!, 5760, 0)
            }
        }
        guard count >= 0 else { throw OpusError(code: count, call: "opus_decode_float") }
        for i in 0..<Int(count) {
            left.append(scratch[2 * i])
            right.append(scratch[2 * i + 1])
        }
        return Int(count)
    }
}
