import COpus
import RadioRelaySystem

/// Owns one `OpusEncoder` (`opus_encoder_create`/`opus_encoder_destroy`): 48 kHz, stereo or mono, 20 ms frames.
package final class OpusEncoderHandle {
    /// A 20 ms frame: the frame of every encoder but a low-latency one, and of an edge's silence.
    package static let frameSize = 960
    /// This encoder's frames, in samples at 48 kHz.
    package let frameSamples: Int
    /// RFC 6716 caps a packet at 1275 bytes per frame; a little more room costs nothing.
    package static let maxPacket = 1500

    private let encoder: OpaquePointer
    /// `OPUS_GET_LOOKAHEAD`: the pre-skip to announce in OpusHead.
    package let lookahead: Int

    /// - Parameter channels: 1 or 2 (`EncoderConfiguration.validate` checked it); a frame holds that many
    ///   interleaved samples per instant.
    /// - Parameters: `frameSamples`: 960 (20 ms) or 480 (10 ms); `lowDelay`: the restricted low-delay application.
    package init(
        channels: Int, bitrate: Int, complexity: Int, constrainedVBR: Bool, frameSamples: Int = frameSize,
        lowDelay: Bool = false
    ) throws {
        var error: Int32 = 0
        let count: Int32 = channels == 1 ? 1 : 2
        let application = lowDelay ? OPUS_APPLICATION_RESTRICTED_LOWDELAY : OPUS_APPLICATION_AUDIO
        self.frameSamples = frameSamples == 480 ? 480 : Self.frameSize
        guard let encoder = opus_encoder_create(Int32(OpusClock.rate), count, application, &error),
            error == OPUS_OK
        else { throw OpusError(code: error, call: "opus_encoder_create") }
        self.encoder = encoder
        func check(_ code: Int32, _ call: String) throws {
            guard code == OPUS_OK else { throw OpusError(code: code, call: call) }
        }
        do {
            try check(rr_opus_set_bitrate(encoder, Int32(bitrate)), "OPUS_SET_BITRATE(\(bitrate))")
            try check(rr_opus_set_vbr(encoder, 1), "OPUS_SET_VBR")
            try check(rr_opus_set_vbr_constraint(encoder, constrainedVBR ? 1 : 0), "OPUS_SET_VBR_CONSTRAINT")
            try check(rr_opus_set_complexity(encoder, Int32(complexity)), "OPUS_SET_COMPLEXITY(\(complexity))")
            try check(rr_opus_set_signal(encoder, OPUS_SIGNAL_MUSIC), "OPUS_SET_SIGNAL")
            var lookahead: Int32 = 0
            try check(rr_opus_get_lookahead(encoder, &lookahead), "OPUS_GET_LOOKAHEAD")
            self.lookahead = Int(lookahead)
        } catch {
            opus_encoder_destroy(encoder)
            throw error
        }
    }

    deinit { opus_encoder_destroy(encoder) }

    /// `OPUS_SET_BITRATE`, `OPUS_SET_COMPLEXITY` and `OPUS_SET_VBR_CONSTRAINT` on the running encoder: libopus takes
    /// them between any two frames, and OpusHead carries none of them, so the Ogg stream goes on unchanged.
    package func retune(bitrate: Int, complexity: Int, constrainedVBR: Bool) throws {
        func check(_ code: Int32, _ call: String) throws {
            guard code == OPUS_OK else { throw OpusError(code: code, call: call) }
        }
        try check(rr_opus_set_bitrate(encoder, Int32(clamping: bitrate)), "OPUS_SET_BITRATE(\(bitrate))")
        try check(rr_opus_set_vbr_constraint(encoder, constrainedVBR ? 1 : 0), "OPUS_SET_VBR_CONSTRAINT")
        try check(rr_opus_set_complexity(encoder, Int32(clamping: complexity)), "OPUS_SET_COMPLEXITY(\(complexity))")
    }

    /// `opus_encode_float` of one frame (interleaved when stereo) into `output`; returns the packet length.
    package func encode(_ frame: UnsafePointer<Float>, into output: UnsafeMutablePointer<UInt8>) throws -> Int {
        let length = opus_encode_float(encoder, frame, Int32(frameSamples), output, Int32(Self.maxPacket))
        guard length > 0 else { throw OpusError(code: length, call: "opus_encode_float") }
        return Int(length)
    }

    /// `OPUS_SET_PREDICTION_DISABLED`: while set, a packet does not depend on the ones before it (no inter-frame
    /// prediction), so a decoder that starts at it, from a reset state, decodes it as one that ran all along would.
    package func setPredictionDisabled(_ disabled: Bool) throws {
        let code = rr_opus_set_prediction_disabled(encoder, disabled ? 1 : 0)
        guard code == OPUS_OK else { throw OpusError(code: code, call: "OPUS_SET_PREDICTION_DISABLED") }
    }

    package static var libraryVersion: String { String(cString: opus_get_version_string()) }
}

@available(*, unavailable) extension OpusEncoderHandle: Sendable {}
