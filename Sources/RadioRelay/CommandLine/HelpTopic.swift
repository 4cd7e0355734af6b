/// What `--help` explains: the whole program, or one command with only its own options.
package enum HelpTopic: Sendable, Equatable, CaseIterable {
    case overall
    case serve
    case transcode

    /// The command line that shows this help.
    package var invocation: String {
        switch self {
        case .overall: return "radio-relay --help"
        case .serve: return "radio-relay serve --help"
        case .transcode: return "radio-relay transcode --help"
        }
    }

    /// The help text, printed to standard output.
    package var text: String {
        switch self {
        case .overall: return Self.overallText
        case .serve: return Self.serveText
        case .transcode: return Self.transcodeText
        }
    }

    private static let serveSynopsis = "radio-relay serve [options]"
    private static let transcodeSynopsis = "radio-relay transcode [options] INPUT OUTPUT"

    private static var overallText: String {
        """
        radio-relay \(RadioRelayVersion.string): relays an MP3 stream as Ogg Opus.

        usage:
          radio-relay [--log-level LEVEL]  serve the bundled demo sample in a loop on port 8000
          \(serveSynopsis)      relay one station (listeners: ffplay tcp://HOST:PORT)
          \(transcodeSynopsis)
                                           INPUT: a path or an http(s)/file URL; OUTPUT: a .opus path or - (stdout)
          radio-relay --version | --help
          radio-relay serve --help | transcode --help   a command's options

        exit status: 0 done, 64 usage, 65 input is not MP3, 66 input missing, 69 unavailable (port in use, upstream
        server failing), 70 internal error, 71 system resources, 73 cannot create output, 77 no permission,
        78 bad configuration
        """
    }

    private static var serveText: String {
        """
        usage: \(serveSynopsis)
        Relays one station: listeners connect over raw TCP (ffplay tcp://HOST:PORT).

        options:
        \(OptionSpecification.helpLines(OptionSpecification.serve))
        """
    }

    private static var transcodeText: String {
        """
        usage: \(transcodeSynopsis)
        INPUT: a path or an http(s)/file URL; OUTPUT: a .opus path or - (stdout).

        options:
        \(OptionSpecification.helpLines(OptionSpecification.transcode))
        """
    }
}
