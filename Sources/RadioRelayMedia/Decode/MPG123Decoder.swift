import CMPG123
import RadioRelaySystem

/// A libmpg123 error: the C code and its text (`mpg123_plain_strerror`).
package struct DecoderError: Error, CustomStringConvertible {
    package let code: Int32
    package let call: String
    package var description: String { "mpg123 \(call): \(String(cString: mpg123_plain_strerror(code)))" }
}

/// Owns one `mpg123_handle` in feed mode with Float32 output (`mpg123_new`, `mpg123_open_feed`, `mpg123_delete`).
package final class MPG123Decoder {
    private let handle: OpaquePointer

    /// `mpg123_init`: a no-op on current libmpg123, required by old ones; once per process.
    private static let initialization: Int32 = mpg123_init()

    package init() throws {
        guard Self.initialization == MPG123_OK.rawValue else {
            throw DecoderError(code: Self.initialization, call: "mpg123_init")
        }
        var error: Int32 = 0
        guard let handle = mpg123_new(nil, &error) else { throw DecoderError(code: error, call: "mpg123_new") }
        self.handle = handle
        // Quiet (errors come back as codes), float output, and no gapless trimming of its own: the Reader trims
        // from the LAME tag the Parser found, since in feed mode mpg123 never sees that tag.
        try check(
            rr_mpg123_param(handle, MPG123_FLAGS, Int(MPG123_QUIET.rawValue | MPG123_FORCE_FLOAT.rawValue)),
            "mpg123_param(FLAGS)")
        try check(mpg123_format_none(handle), "mpg123_format_none")
        var rates: UnsafePointer<Int>?
        var count = 0
        mpg123_rates(&rates, &count)
        for i in 0..<count {
            try check(
                mpg123_format(
                    handle, rates![i], Int32(MPG123_MONO.rawValue | MPG123_STEREO.rawValue),
                    Int32(MPG123_ENC_FLOAT_32.rawValue)), "mpg123_format")
        }
        try check(mpg123_open_feed(handle), "mpg123_open_feed")
    }

    deinit { mpg123_delete(handle) }

    /// libmpg123 1.31 has no run-time version call; its API version is what the build was made against.
    package static var libraryVersion: String { "libmpg123 API \(MPG123_API_VERSION)" }

    /// Forgets all decoder state, the bit reservoir included (`mpg123_open_feed` again): after a gap in the
    /// stream, decoding on would fill the next frames from stale reservoir bytes, which is loud noise.
    package func restart() throws {
        mpg123_close(handle)
        try check(mpg123_open_feed(handle), "mpg123_open_feed")
    }

    private func check(_ code: Int32, _ call: String) throws {
        guard code == MPG123_OK.rawValue else { throw DecoderError(code: code, call: call) }
    }

    package enum Output {
        /// Interleaved float samples; valid until the next call.
        case audio(UnsafeBufferPointer<Float>)
        case newFormat(rate: Int, channels: Int)
        case needMore
        /// A frame that could not be decoded; the decoder resyncs by itself.
        case error(DecoderError)
    }

    package func feed(_ bytes: UnsafeRawBufferPointer) throws {
        try check(
            mpg123_feed(handle, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count),
            "mpg123_feed")
    }

    /// `mpg123_decode_frame`: the next decoded frame, without copying.
    package func next() -> Output {
        var number: off_t = 0
        var audio: UnsafeMutablePointer<UInt8>?
        var bytes = 0
        let code = rr_mpg123_decode_frame(handle, &number, &audio, &bytes)
        switch code {
        case MPG123_OK.rawValue:
            guard let audio, bytes > 0 else { return .audio(UnsafeBufferPointer(start: nil, count: 0)) }
            let floats = UnsafeRawPointer(audio).assumingMemoryBound(to: Float.self)
            return .audio(UnsafeBufferPointer(start: floats, count: bytes / MemoryLayout<Float>.size))
        case MPG123_NEW_FORMAT.rawValue:
            var rate = 0
            var channels: Int32 = 0
            var encoding: Int32 = 0
            mpg123_getformat(handle, &rate, &channels, &encoding)
            return .newFormat(rate: rate, channels: Int(channels))
        case MPG123_NEED_MORE.rawValue:
            return .needMore
        default:
            let error = code == MPG123_ERR.rawValue ? mpg123_errcode(handle) : code
            return .error(DecoderError(code: error, call: "mpg123_decode_frame"))
        }
    }
}

@available(*, unavailable) extension MPG123Decoder: Sendable {}
