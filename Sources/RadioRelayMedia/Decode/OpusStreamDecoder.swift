import COpus
import RadioRelaySystem

/// An Ogg Opus stream (a live source's) → buffers of the common format: the Ogg demuxer finds the Opus packets,
/// libopus (`opus_decode_float`) decodes them at 48 kHz stereo, and soxr resamples when the common rate is 44.1 kHz.
/// The Reader's job for a source that is not MP3.
///
/// Each logical stream (a chained link: a source client's new track) starts afresh: a new decoder, its pre-skip
/// dropped (RFC 7845 §4.2), its OpusTags' `ARTIST`/`TITLE` handed on as a title. Mono and stereo streams (channel
/// mapping family 0, or family 1 with at most two channels) decode; a multichannel stream is refused with the
/// reason. A packet libopus refuses is dropped and counted: hostile bytes cost at most one packet's decode each,
/// and the demuxer bounds what it holds.
package final class OpusStreamDecoder {
    /// Samples of the largest packet (120 ms at 48 kHz).
    static let maxPacketSamples = 5760

    package enum Output {
        /// A new logical stream: its channels (for status).
        case stream(channels: Int)
        /// The title its OpusTags give (`ARTIST - TITLE`, or either).
        case title(String)
        case pcm(PCMBuffer)
    }

    package let commonRate: Int
    private var demuxer = OggDemuxer()
    private var decoder: OpaquePointer?
    private var preSkip = 0
    private var scratch = [Float](repeating: 0, count: maxPacketSamples * 2)
    private var resampler: Resampler?
    /// Packets libopus refused.
    package private(set) var rejectedPackets = 0
    package private(set) var packets = 0

    package init(commonRate: Int) {
        self.commonRate = commonRate
    }

    deinit {
        if let decoder { opus_decoder_destroy(decoder) }
    }

    /// Drops what a connection left (a new source starts with its header pages).
    package func reset() {
        demuxer.reset()
        if let decoder { opus_decoder_destroy(decoder) }
        decoder = nil
        preSkip = 0
    }

    package var demuxStatistics: OggDemuxer.Statistics { demuxer.statistics }

    /// Decodes what `bytes` completes, handing each output to `sink`.
    package func feed(_ bytes: UnsafeRawBufferPointer, _ sink: (Output) throws -> Void) throws {
        var demuxer = self.demuxer
        defer { self.demuxer = demuxer }
        try demuxer.demux(bytes) { event in
            switch event {
            case .head(_, let head):
                try start(head)
                try sink(.stream(channels: head.channels))
            case .tags(_, let comments):
                if let title = Self.title(in: comments) { try sink(.title(title)) }
            case .audio(_, let packet, _):
                if let pcm = try decode(packet) { try sink(.pcm(pcm)) }
            }
        }
    }

    /// `ARTIST - TITLE` from OpusTags (either alone when the other is missing); nil when neither is there.
    package static func title(in comments: [String]) -> String? {
        var fields: [String: String] = [:]
        for comment in comments {
            guard let equals = comment.firstIndex(of: "=") else { continue }
            let name = comment[..<equals].uppercased()
            guard name == "TITLE" || name == "ARTIST", fields[name] == nil else { continue }
            let value = String(comment[comment.index(after: equals)...])
            if !value.isEmpty { fields[name] = value }
        }
        switch (fields["ARTIST"], fields["TITLE"]) {
        case (let artist?, let title?): return "\(artist) - \(title)"
        case (nil, let title?): return title
        case (let artist?, nil): return artist
        case (nil, nil): return nil
        }
    }

    private func start(_ head: OpusPacketInfo.Head) throws {
        guard head.channels >= 1, head.channels <= 2, head.mappingFamily == 0 || head.mappingFamily == 1 else {
            throw UnsupportedFormat(
                "the source's Opus stream has \(head.channels) channels (mapping family \(head.mappingFamily)): "
                    + "send mono or stereo")
        }
        if let decoder { opus_decoder_destroy(decoder) }
        decoder = nil
        var error: Int32 = 0
        // Stereo out whatever the stream: libopus upmixes a mono stream itself.
        guard let made = opus_decoder_create(Int32(OpusClock.rate), 2, &error), error == OPUS_OK else {
            throw OpusError(code: error, call: "opus_decoder_create")
        }
        decoder = made
        preSkip = max(0, min(head.preSkip, 48_000))
    }

    private func decode(_ packet: [UInt8]) throws -> PCMBuffer? {
        guard let decoder else { return nil }
        let count = packet.withUnsafeBufferPointer { input in
            scratch.withUnsafeMutableBufferPointer { output -> Int32 in
                guard let out = output.baseAddress else { return OPUS_BAD_ARG }
                return opus_decode_float(
                    decoder, input.baseAddress, Int32(clamping: input.count), out, Int32(Self.maxPacketSamples), 0)
            }
        }
        guard count > 0 else {
            if count < 0 { rejectedPackets += 1 }
            return nil
        }
        packets += 1
        var frames = Int(count)
        var start = 0
        if preSkip > 0 {
            start = min(preSkip, frames)
            preSkip -= start
            frames -= start
        }
        guard frames > 0 else { return nil }
        if commonRate == OpusClock.rate {
            var left = [Float](repeating: 0, count: frames)
            var right = [Float](repeating: 0, count: frames)
            for index in 0..<frames {
                left[index] = scratch[2 * (start + index)]
                right[index] = scratch[2 * (start + index) + 1]
            }
            return PCMBuffer(left: left, right: right, sampleRate: commonRate)
        }
        let resampler = try self.resampler ?? makeResampler()
        let split = try scratch.withUnsafeBufferPointer { all -> [[Float]] in
            guard let base = all.baseAddress else { return [[], []] }
            return try resampler.process(interleaved: base + 2 * start, frames: frames)
        }
        guard split.count == 2, !split[0].isEmpty else { return nil }
        return PCMBuffer(left: split[0], right: split[1], sampleRate: commonRate)
    }

    private func makeResampler() throws -> Resampler {
        let made = try Resampler(inputRate: OpusClock.rate, outputRate: commonRate, channels: 2, interleavedInput: true)
        resampler = made
        return made
    }
}

@available(*, unavailable) extension OpusStreamDecoder: Sendable {}
