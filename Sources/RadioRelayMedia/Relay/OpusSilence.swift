import RadioRelaySystem

/// One 20 ms Opus packet of digital silence for `channels`, made once by libopus, relayed as often as an outage
/// needs (an edge relay has no PCM to encode).
package enum OpusSilence {
    package static func packet(channels: Int) throws -> [UInt8] {
        let opus = try OpusEncoderHandle(channels: channels, bitrate: 32_000, complexity: 0, constrainedVBR: true)
        let frame = [Float](repeating: 0, count: OpusEncoderHandle.frameSize * max(1, channels))
        var out = [UInt8](repeating: 0, count: OpusEncoderHandle.maxPacket)
        let length = try frame.withUnsafeBufferPointer { input in
            try out.withUnsafeMutableBufferPointer { output in
                guard let source = input.baseAddress, let target = output.baseAddress else { return 0 }
                return try opus.encode(source, into: target)
            }
        }
        guard length > 0 else { throw ConfigurationError("libopus made no silence packet") }
        return Array(out.prefix(length))
    }
}
