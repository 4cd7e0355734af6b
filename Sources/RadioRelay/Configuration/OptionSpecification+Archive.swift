import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// `serve`'s options for a station's archive on disk: the directory, the span of one file and what is kept. Station
/// keys that `[server]` may set for every station (each station writes in a folder of its own name).
extension OptionSpecification {
    static let archiveOptions: [OptionSpecification] = [
        .init(
            name: "archive", placeholder: "DIR",
            summary: "keep what the station plays in files under DIR/NAME/ (default: none)",
            accepts: "none, or a directory's absolute path",
            setting: station(Self.archiveDirectory, { $0.archive.directory = $1 }, compared: \.archive.directory),
            isServerDefault: true, reload: .restartsStation),
        .init(
            name: "archive-span", placeholder: "S",
            summary: "seconds of one archive file, on the UTC clock (default 600)",
            accepts: "10 to 86400 seconds that divide a day, e.g. 600 or 3600",
            setting: station(Self.archiveSpan, { $0.archive.span = $1 }, compared: \.archive.span),
            isServerDefault: true, reload: .restartsStation),
        .init(
            name: "archive-keep", placeholder: "KEEP",
            summary: "the archive keeps this much: 7d, 12h, 20G, 7d 50G (default: everything)",
            accepts: ArchiveKeep.accepts,
            setting: station({ ArchiveKeep(parsing: $0) }, { $0.archive.keep = $1 }, compared: \.archive.keep),
            isServerDefault: true, reload: .inPlace),
        .init(
            name: "record-live", placeholder: "DIR",
            summary: "record each live show in a file under DIR/NAME/ (default: none)",
            accepts: "none, or a directory's absolute path",
            setting: station(Self.archiveDirectory, { $0.recording.directory = $1 }, compared: \.recording.directory),
            isServerDefault: true, reload: .restartsStation),
        .init(
            name: "record-live-source", placeholder: "Y|N",
            summary: "keep the live source's own bytes beside each recording (default no)",
            accepts: "yes or no", setting: station(Values.yesNo, \.recording.keepsSource),
            isServerDefault: true, reload: .inPlace),
        .init(
            name: "record-live-max", placeholder: "TIME",
            summary: "a show longer than this goes on in a new file: 4h, 90m, 3600s (default 4h)",
            accepts: "a duration from 60s to 24h, e.g. 4h, 90m or 3600s",
            setting: station(Self.recordingMax, \.recording.maxSeconds), isServerDefault: true, reload: .inPlace),
    ]

    /// `none` (nil inside) or an absolute path.
    private static func archiveDirectory(_ text: String) -> String?? {
        if text.trimmingBlanks() == "none" { return .some(nil) }
        return Values.absolutePath(text).map { .some($0) }
    }

    private static func archiveSpan(_ text: String) -> Int? {
        guard let seconds = Units.integer(text, in: ArchiveSettings.spanRange), ArchiveSettings.isSpan(seconds) else {
            return nil
        }
        return seconds
    }

    /// A duration (`4h`, `90m`, `3600s`, or seconds) within `RecordingSettings.maxRange`.
    private static func recordingMax(_ text: String) -> Int? {
        let seconds =
            Units.integer(text, in: RecordingSettings.maxRange)
            ?? ArchiveKeep(parsing: text).flatMap { $0.bytes == nil ? $0.seconds.map(Int.init) : nil }
        return seconds.flatMap { RecordingSettings.maxRange.contains($0) ? $0 : nil }
    }
}
