import RadioRelaySystem

/// A station's recordings of live shows (`record_live`, `record_live_source`, `record_live_max`): where they go,
/// whether the source's own bytes are kept beside them, and how long one file may run before the show goes on in a
/// new one. A pure value; its rules (`splits`, `RecordingName`, `LiveShowSpan`) are functions of what they are given.
public struct RecordingSettings: Sendable, Equatable {
    /// The recordings' root; the station's files go in `DIRECTORY/<station>/` (nil: no recordings).
    public var directory: String?
    /// Whether the source's own bytes (its MP3 or Ogg Opus, untouched) are kept beside each recording.
    public var keepsSource = false
    /// Seconds of one file: a show that runs longer goes on in a new file.
    public var maxSeconds = 14_400

    /// A minute to a day.
    public static let maxRange = 60...86_400

    public init() {}

    /// Whether a file that holds `samples` (48 kHz) so far ends before the next page, `continued` when that page
    /// goes on with a packet begun on the one before: a file ends once it holds `maxSeconds`, at the first page that
    /// starts clean.
    package func splits(samples: Int64, continued: Bool) -> Bool {
        !continued && samples >= Int64(max(1, maxSeconds)) * 48_000
    }
}

/// A recording's name: its UTC start and the show's name made safe for any file system and shell,
/// `2026-12-06T08-00-00Z_Morning-Show.opus`.
package enum RecordingName {
    /// The longest show part of a name.
    package static let maxShowLength = 64

    /// The show's name from what the source said (its `ice-name`, else the DJ's account, else the title), each
    /// made safe, the first that leaves something; `live` when none does.
    package static func show(_ candidates: [String?]) -> String {
        for candidate in candidates {
            if let candidate, case let cleaned = safe(candidate), !cleaned.isEmpty { return cleaned }
        }
        return "live"
    }

    /// `text` in ASCII letters, digits, `-` and `_` only: every other scalar (a space, a slash, a dot, a control,
    /// a letter of another script) is a `-`, runs of them one, none at either end, at most `maxShowLength`.
    package static func safe(_ text: String) -> String {
        var out: [UInt8] = []
        for scalar in text.unicodeScalars.prefix(4 * maxShowLength) {
            let value = scalar.value
            let kept =
                (0x30...0x39).contains(value) || (0x41...0x5A).contains(value) || (0x61...0x7A).contains(value)
                || value == 0x5F
            if kept {
                out.append(UInt8(value))
            } else if out.last != UInt8(ascii: "-") {
                out.append(UInt8(ascii: "-"))
            }
        }
        var trimmed = out.prefix(maxShowLength)
        while let first = trimmed.first, first == UInt8(ascii: "-") { trimmed.removeFirst() }
        while let last = trimmed.last, last == UInt8(ascii: "-") { trimmed.removeLast() }
        return String(decoding: trimmed, as: UTF8.self)
    }

    /// The file name of a recording that starts at `millis` (ms since the epoch), of show `show` (already safe),
    /// with extension `ext`.
    package static func name(start millis: Int64, show: String, ext: String) -> String {
        ArchiveName.stamp(start: millis) + "_" + show + "." + ext
    }

    /// The extension of a source's own bytes: `ogg` for an Ogg stream, `mp3` for anything else.
    package static func sourceExtension(_ first: some Collection<UInt8>) -> String {
        first.starts(with: Array("OggS".utf8)) ? "ogg" : "mp3"
    }
}

/// Which of the main output's pages belong to a live show: from the takeover on, every page; after the hand-back,
/// the pages that still carry the source's audio — what waited in the stream clock's queue at the hand-back and
/// the page the encoder had begun — and no more. A pure value over granules (48 kHz samples).
package struct LiveShowSpan: Sendable, Equatable {
    /// The granule from which the show's audio is over; nil while it is on the air.
    package private(set) var end: Int64?

    package init() {}

    /// The station handed back with the newest page published at `granule` and `tail` seconds of the source's
    /// audio (a page's worth included) still to come out of the encoder.
    package mutating func handBack(granule: Int64, tail: Double) {
        let samples = tail.isFinite ? Int64((min(max(tail, 0), 60) * 48_000).rounded(.up)) : 0
        end = granule + samples
    }

    /// Whether the page whose granule is `granule` is the show's last (it reaches the end); a page on which no
    /// packet ends (granule -1) never is.
    package func isLast(granule: Int64) -> Bool {
        guard let end, granule >= 0 else { return false }
        return granule >= end
    }
}
