import Testing

@testable import RadioRelay
@testable import RadioRelayMedia

/// `transcode`'s command line: its defaults, every flag in both forms, and `--`.
extension CommandLineTests {
    @Test func transcodeDefaults() throws {
        let (input, output, options) = try Self.transcode(["transcode", "in.mp3", "out.opus"])
        #expect(input == "in.mp3" && output == "out.opus")
        #expect(options.encoder.bitrate == 96_000 && options.encoder.complexity == 10)
        #expect(options.encoder.pageDuration == 100 && options.commonRate == 48_000)
    }

    @Test(arguments: [false, true]) func transcodeReadsEveryFlag(joined: Bool) throws {
        let pairs = [("bitrate", "64000"), ("rate", "44100"), ("complexity", "0"), ("page-ms", "1000")]
        #expect(Set(pairs.map(\.0)) == Set(OptionSpecification.transcode.map(\.name)), "a flag is not tested")
        let flags = Self.flags(pairs, joined: joined)
        let (input, output, options) = try Self.transcode(
            ["transcode"] + flags.prefix(2) + ["in.mp3"]
                + flags.dropFirst(2) + ["-"])
        #expect(input == "in.mp3" && output == "-")
        #expect(options.encoder.bitrate == 64_000 && options.commonRate == 44_100)
        #expect(options.encoder.complexity == 0 && options.encoder.pageDuration == 1000)
    }

    @Test func aDoubleDashEndsTheOptions() throws {
        let (input, output, _) = try Self.transcode(["transcode", "--", "--odd name.mp3", "-"])
        #expect(input == "--odd name.mp3" && output == "-")
    }
}
