import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem
import Synchronization

/// A station's recorder of live shows (`record_live`) in `/status.json` (`recordings`) and in `/metrics`: its
/// folder, whether it records, the recording being written (and the source's copy beside it), the last one
/// finished, and its counters (files, bytes written, pages dropped, write errors).
package struct RecordingFigures: Sendable, Equatable, Codable {
    package var directory = ""
    /// `idle` (no show on the air), `recording`, `failing` (the disk failed: pages dropped) or `stopped`.
    package var state = "idle"
    package var current: String?
    package var currentSource: String?
    package var last: String?
    /// Recordings finished, and copies of the source's bytes (`record_live_source`).
    package var files = 0
    package var sourceFiles = 0
    package var bytesWritten = 0
    package var pagesDropped = 0
    package var writeErrors = 0
    package var lastError: String?

    enum CodingKeys: String, CodingKey {
        case directory, state, current, last, files
        case currentSource = "current_source"
        case sourceFiles = "source_files"
        case bytesWritten = "bytes_written"
        case pagesDropped = "pages_dropped"
        case writeErrors = "write_errors"
        case lastError = "last_error"
    }

    package init() {}

    init(_ writer: RecordingWriter) {
        let status = writer.status.snapshot
        directory = writer.directory
        state = status.state.rawValue
        current = status.current
        currentSource = status.currentSource
        last = status.last
        files = writer.counters.files.load(ordering: .relaxed)
        sourceFiles = writer.counters.sourceFiles.load(ordering: .relaxed)
        bytesWritten = writer.counters.bytesWritten.load(ordering: .relaxed)
        pagesDropped = writer.counters.dropped.load(ordering: .relaxed)
        writeErrors = writer.counters.writeErrors.load(ordering: .relaxed)
        lastError = status.lastError
    }

    package func encode(to encoder: any Swift.Encoder) throws {
        var out = encoder.container(keyedBy: CodingKeys.self)
        try out.encode(directory, forKey: .directory)
        try out.encode(state, forKey: .state)
        try out.encodeOrNull(current, forKey: .current)
        try out.encodeOrNull(currentSource, forKey: .currentSource)
        try out.encodeOrNull(last, forKey: .last)
        try out.encode(files, forKey: .files)
        try out.encode(sourceFiles, forKey: .sourceFiles)
        try out.encode(bytesWritten, forKey: .bytesWritten)
        try out.encode(pagesDropped, forKey: .pagesDropped)
        try out.encode(writeErrors, forKey: .writeErrors)
        try out.encodeOrNull(lastError, forKey: .lastError)
    }
}

extension MetricsReport {
    /// Each recorder's figures, labelled `station`.
    static func recordingSamples(_ out: inout String, _ snapshot: StatusSnapshot) {
        let recorders = snapshot.stations.compactMap { station in station.recordings.map { (station.name, $0) } }
        let families: [(String, Kind, String, (RecordingFigures) -> Double)] = [
            ("recording_active", .gauge, "1 while a live show is recorded", { $0.state == "recording" ? 1 : 0 }),
            ("recording_files_total", .counter, "Recordings of live shows finished", { Double($0.files) }),
            ("recording_source_files_total", .counter, "Copies of sources' bytes finished", { Double($0.sourceFiles) }),
            ("recording_written_bytes_total", .counter, "Bytes written to recordings", { Double($0.bytesWritten) }),
            ("recording_dropped_pages_total", .counter, "Pages not recorded", { Double($0.pagesDropped) }),
            ("recording_write_errors_total", .counter, "Recording writes that failed", { Double($0.writeErrors) }),
        ]
        for (name, kind, help, value) in families {
            header(&out, name, kind, help)
            for (station, figures) in recorders {
                out += "\(prefix)\(name){station=\"\(labelValue(station))\"} \(number(value(figures)))\n"
            }
        }
    }
}
