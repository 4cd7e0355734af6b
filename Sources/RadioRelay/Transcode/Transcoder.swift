import Glibc
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// `transcode`: the same stages a station runs (Downloader → Parser → Reader → Encoder), wired to a file instead of a
/// Broadcaster, reading as fast as the input allows.
///
/// The output is written to a temporary file beside the target and renamed into place only when the stream ended
/// well, so a failure never leaves a truncated file that looks complete.
public struct Transcoder {
    public struct Options: Sendable {
        public var encoder = EncoderConfiguration()
        /// The common rate the Reader produces (48 000 or 44 100 Hz).
        public var commonRate = OpusClock.rate
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

    private func pump(
        _ downloader: Downloader, into sink: OutputFile, input: String,
        progress: ((Progress) -> Void)?
    ) throws -> Summary {
        var settings = StageChain.Configuration()
        settings.encoder = options.encoder
        settings.commonRate = options.commonRate
        let chain = StageChain(settings)
        var pages = 0
        var bytesIn = 0

        func write() throws {
            let out = chain.takePages()
            for page in out { try sink.write(page.bytes) }
            pages += out.count
        }

        while try downloader.poll(
            timeout: 1000,
            { chunk in
                bytesIn += chunk.count
                try chain.feedAudio(chunk)
                try write()
            })
        {
            if chain.encoder == nil && bytesIn >= options.giveUpWithoutAudioAfter {
                throw TranscodeError.notMP3(input: input, bytes: bytesIn)
            }
            if let progress, chain.encoder != nil {
                progress(Progress(bytesIn: bytesIn, secondsOut: chain.secondsEncoded))
            }
        }
        guard try chain.finish(), let encoder = chain.encoder, let reader = chain.reader else {
            throw TranscodeError.notMP3(input: input, bytes: bytesIn)
        }
        try write()
        return Summary(
            format: chain.parser.dataFormat, parser: chain.parser.statistics, reader: reader.statistics,
            secondsOut: chain.secondsEncoded, bytesOut: encoder.bytesOut, pages: pages)
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
