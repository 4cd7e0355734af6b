import CSoxr
import RadioRelaySystem

/// A libsoxr resampler (`soxr_create`/`soxr_process`/`soxr_delete`) from `channels` at `inputRate` to the same
/// channels at `outputRate`. Input is interleaved or split Float32; output is split (non-interleaved) Float32,
/// which is the common format's layout.
package final class Resampler {
    package struct Failure: Error, CustomStringConvertible {
        package let message: String
        package var description: String { "soxr: \(message)" }
    }

    package let inputRate: Int
    package let outputRate: Int
    package let channels: Int
    package let interleavedInput: Bool
    private let handle: soxr_t
    /// Output scratch, one buffer per channel, owned here and reused across calls.
    private var outputs: [UnsafeMutablePointer<Float>] = []
    private var outputCapacity = 0

    /// libsoxr's recipe: `high` (SOXR_HQ, 20-bit, linear phase: about 12 ms of audio held after each MP3 frame, 21 at
    /// most) or `low` (SOXR_LQ, 16-bit with a wider roll-off: half a millisecond held), for low-latency mode.
    package enum Quality: Sendable { case high, low }

    package init(
        inputRate: Int, outputRate: Int, channels: Int, interleavedInput: Bool, quality recipe: Quality = .high
    ) throws {
        var io = soxr_io_spec(interleavedInput ? SOXR_FLOAT32_I : SOXR_FLOAT32_S, SOXR_FLOAT32_S)
        var quality = soxr_quality_spec(UInt(recipe == .low ? SOXR_LQ : SOXR_HQ), 0)
        // Smaller DFT blocks (2^8 instead of 2^10): soxr then holds back about 6 ms instead of up to 21 ms after each
        // MP3 frame, which listeners would otherwise wait for. Same filter, same quality.
        var runtime = soxr_runtime_spec(1)
        runtime.log2_min_dft_size = 8
        var error: soxr_error_t?
        guard
            let handle = soxr_create(
                Double(inputRate), Double(outputRate), UInt32(channels), &error, &io,
                &quality, &runtime), error == nil
        else { throw Failure(message: error.map { String(cString: $0) } ?? "soxr_create failed") }
        self.inputRate = inputRate
        self.outputRate = outputRate
        self.channels = channels
        self.interleavedInput = interleavedInput
        self.handle = handle
    }

    deinit {
        soxr_delete(handle)
        for buffer in outputs { buffer.deallocate() }
    }

    /// Resamples `frames` interleaved frames.
    package func process(interleaved input: UnsafePointer<Float>, frames: Int) throws -> [[Float]] {
        precondition(interleavedInput)
        return try run(UnsafeRawPointer(input), frames: frames)
    }

    /// Resamples split stereo input.
    package func process(left: [Float], right: [Float]) throws -> [[Float]] {
        precondition(!interleavedInput && channels == 2 && left.count == right.count)
        return try left.withUnsafeBufferPointer { l in
            try right.withUnsafeBufferPointer { r in
                let pointers: [UnsafePointer<Float>?] = [l.baseAddress, r.baseAddress]
                return try pointers.withUnsafeBufferPointer {
                    try run(UnsafeRawPointer($0.baseAddress!), frames: l.count)
                }
            }
        }
    }

    /// Drains what soxr holds back (its filter delay): at the end of a stream or before a change of rate.
    /// `soxr_process` flushes on a NULL input, which an empty Swift array would not give, hence a separate call.
    package func flush() throws -> [[Float]] {
        try run(nil, frames: 0)
    }

    private func reserve(_ frames: Int) {
        guard frames > outputCapacity else { return }
        for buffer in outputs { buffer.deallocate() }
        outputs = (0..<channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: frames) }
        outputCapacity = frames
    }

    private func run(_ input: UnsafeRawPointer?, frames: Int) throws -> [[Float]] {
        // With room for every output frame, soxr consumes all the input in one call; the flush may take several.
        let room = input == nil ? 4096 : frames * outputRate / inputRate + 128
        reserve(room)
        var result = Array(repeating: [Float](), count: channels)
        while true {
            var consumed = 0
            var produced = 0
            let error: soxr_error_t? = outputs.map { Optional($0) }.withUnsafeBufferPointer { out in
                soxr_process(
                    handle, input, frames, &consumed, UnsafeMutableRawPointer(mutating: out.baseAddress!),
                    room, &produced)
            }
            if let error { throw Failure(message: String(cString: error)) }
            for c in 0..<channels {
                result[c].append(contentsOf: UnsafeBufferPointer(start: outputs[c], count: produced))
            }
            if input != nil {
                guard consumed == frames else { throw Failure(message: "consumed \(consumed) of \(frames) frames") }
                return result
            }
            if produced == 0 { return result }
        }
    }
}

@available(*, unavailable) extension Resampler: Sendable {}
