import Foundation

/// `transcode`: the same stages a station runs (Downloader → Parser → Reader → Encoder), wired to a file instead of a
/// Broadcaster, reading as fast as the input allows.
///
/// The output is written to a temporary file beside the target and renamed into place only when the stream ended
/// well, so a failure never leaves a truncated file that looks complete.
public struct Transcoder {
    public struct Options: Sendable {
        public var encoder = EncoderConfiguration()
        /// The common rate the Reader produces (48 000 or 44 100 Hz).
        public var commonRate = 48_000
        /// Bytes of input without a single MP3 frame after which the input is declared not MP3.
        public var giveUpWithoutAudioAfter = 1 << 20
        public init() {}
    }

    public struct Progress: Sendable {
        public var bytesIn: Int
        public var secondsOut: Double
    }

    public struct Summary: Sendable {
        public var format: DataFormat?
        public var parser: Parser.Statistics
        public var reader: Reader.Statistics
        /// Seconds of audio in the output (end-trimmed).
        public var secondsOut: Double
        public var bytesOut: Int64
        public var pages: Int
    }

    public var options: Options

    public init(options: Options = Options()) { self.options = options }

    /// Transcodes `input` (path or URL) to `output` (a path, or "-" for standard output).
    public func run(input: String, output: String, progress: ((Progress) -> Void)? = nil) throws -> Summary {
        try options.encoder.validate()
        let downloader = try Downloader(url: input)
        let sink = try OutputFile(path: output)
        do {
            let summary = try pump(downloader, into: sink, input: input, progress: progress)
            try sink.commit()
            return summary
        } catch {
            sink.discard()
            throw error
        }
    }

    private func pump(_ downloader: Downloader, into sink: OutputFile, input: String,
                      progress: ((Progress) -> Void)?) throws -> Summary {
        let parser = Parser()
        var reader: Reader?
        var encoder: Encoder?
        var pages = 0
        var bytesIn = 0
        var failure: Error?

        func write(_ out: [OggPage]) throws {
            for page in out { try sink.write(page.bytes) }
            pages += out.count
        }
        func handle(_ event: Parser.Event) {
            guard failure == nil else { return }
            do {
                switch event {
                case .format(let format):
                    if encoder == nil {
                        var configuration = options.encoder
                        configuration.inputRate = options.commonRate
                        configuration.originalRate = format.sampleRate
                        let created = try Encoder(configuration)
                        try write(created.headerPages)
                        encoder = created
                    }
                case .packet(let packet):
                    if reader == nil { reader = try Reader(commonRate: options.commonRate, gapless: parser.gapless) }
                    let pcm = try reader!.read(packet)
                    if !pcm.isEmpty { try write(try encoder!.encode(pcm)) }
                }
            } catch {
                failure = error
            }
        }

        while try downloader.poll(timeout: 1000, { chunk in
            bytesIn += chunk.count
            parser.parse(chunk, handle)
        }) {
            if let failure { throw failure }
            if encoder == nil && bytesIn >= options.giveUpWithoutAudioAfter {
                throw TranscodeError.notMP3(input: input, bytes: bytesIn)
            }
            if let progress, let encoder {
                progress(Progress(bytesIn: bytesIn, secondsOut: Double(encoder.samplesIn) / 48_000))
            }
        }
        parser.finish(handle)
        if let failure { throw failure }
        guard let reader, let encoder else { throw TranscodeError.notMP3(input: input, bytes: bytesIn) }
        let tail = try reader.finish()
        if !tail.isEmpty { try write(try encoder.encode(tail)) }
        try write(try encoder.finish())
        return Summary(format: parser.dataFormat, parser: parser.statistics, reader: reader.statistics,
                       secondsOut: Double(encoder.samplesIn) / 48_000, bytesOut: encoder.bytesOut, pages: pages)
    }
}

public enum TranscodeError: Error, CustomStringConvertible {
    case notMP3(input: String, bytes: Int)

    public var description: String {
        switch self {
        case .notMP3(let input, let bytes):
            return "\(input): no MPEG audio frames in \(bytes) bytes: not an MP3 stream"
        }
    }
}
