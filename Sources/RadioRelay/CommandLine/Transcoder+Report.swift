import Foundation
import Glibc
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

extension Transcoder.Summary {
    /// The line `transcode` prints when it is done: what was written, from what, how fast, and what was skipped.
    package func report(input: String, output: String, elapsed: Double) -> String {
        let formatText = format.map { "\($0)" } ?? "?"
        var line = String(
            format: "%@ → %@: %.3f s of Opus (%d pages, %lld bytes) from %@ in %.2f s",
            input, output, secondsOut, pages, bytesOut, formatText, elapsed)
        if parser.bytesSkipped > 0 || reader.decodeErrors > 0 {
            line += "; skipped \(parser.bytesSkipped) bytes of non-audio"
            if parser.syncLosses > 0 { line += ", lost sync \(parser.syncLosses)×" }
            if reader.decodeErrors > 0 { line += ", \(reader.decodeErrors) undecodable frames" }
        }
        return line
    }
}

extension Transcoder.Progress {
    /// The progress line `transcode` redraws on a terminal.
    package var report: String {
        String(format: "%8.1f s of audio, %.1f MB read", secondsOut, Double(bytesIn) / 1e6)
    }
}

extension Transcoder {
    /// `radio-relay transcode INPUT OUTPUT`: runs it, redrawing a progress line on a terminal, and prints the
    /// summary (or the error) on stderr; returns the exit status.
    package static func runCommand(input: String, output: String, options: Options) -> ExitCode {
        let interactive = isatty(STDERR_FILENO) == 1
        var lastShown = Date.distantPast
        let started = Date()
        do {
            let summary = try Transcoder(options: options).run(input: input, output: output) { progress in
                guard interactive, Date().timeIntervalSince(lastShown) > 0.2 else { return }
                lastShown = Date()
                StandardError.write("\r" + progress.report)
            }
            if interactive { StandardError.write("\r\u{1B}[K") }
            StandardError.write(
                summary.report(input: input, output: output, elapsed: Date().timeIntervalSince(started)) + "\n")
            return .ok
        } catch {
            if interactive { StandardError.write("\r\u{1B}[K") }
            StandardError.write("radio-relay: \(error)\n")
            return ExitCode(for: error)
        }
    }
}
