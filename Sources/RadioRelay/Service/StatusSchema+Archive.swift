import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem
import Synchronization

/// A station's archive writer in `/status.json` (`archive`, and `archive_mp3` for its MP3 output's) and in
/// `/metrics`: its folder, whether it writes, its files (how many, their bytes, the oldest start and the newest
/// end, the one being written) and its counters (bytes written, pages dropped, write errors, files removed).
package struct ArchiveFigures: Sendable, Equatable, Codable {
    package var directory = ""
    package var format = "opus"
    /// `starting`, `writing`, `failing` (the disk failed or is nearly full: pages dropped), `stalled` (a write,
    /// sync or removal has not returned for `StallWatch.stallAfter` seconds: a disk that hangs) or `stopped`.
    package var state = "starting"
    /// Seconds the writer has been waiting for the disk, while `stalled`; 0 otherwise.
    package var stalledSeconds = 0.0
    package var files = 0
    package var bytes: Int64 = 0
    /// Unix seconds; nil before the first file.
    package var oldest: Double?
    package var newest: Double?
    package var current: String?
    package var bytesWritten = 0
    package var pagesDropped = 0
    package var writeErrors = 0
    package var filesRemoved = 0
    package var lastError: String?
    /// Its time-shifted listeners (`?start=`, `?offset=`): now, since start, refused, and the bytes read for them.
    package var timeShifted = 0
    package var timeShiftServed = 0
    package var timeShiftRefused = 0
    package var timeShiftReadBytes = 0

    enum CodingKeys: String, CodingKey {
        case directory, format, state, files, bytes, current
        case stalledSeconds = "stalled_seconds"
        case oldest = "oldest_start"
        case newest = "newest_end"
        case bytesWritten = "bytes_written"
        case pagesDropped = "pages_dropped"
        case writeErrors = "write_errors"
        case filesRemoved = "files_removed"
        case lastError = "last_error"
        case timeShifted = "time_shifted"
        case timeShiftServed = "time_shift_served"
        case timeShiftRefused = "time_shift_refused"
        case timeShiftReadBytes = "time_shift_read_bytes"
    }

    package init() {}

    init(_ writer: ArchiveWriter, timeShift: TimeShiftCounters?) {
        let status = writer.status.snapshot
        directory = writer.directory
        format = writer.format.rawValue
        state = status.state.rawValue
        // Its thread is held in the call that hangs, so the state it keeps cannot say so: the round's time does.
        if let round = writer.queue.stalledSeconds(), status.state != .stopped {
            state = "stalled"
            stalledSeconds = (round * 10).rounded() / 10
        }
        files = status.files
        bytes = status.bytes
        oldest = status.oldest.map { Double($0) / 1000 }
        newest = status.newest.map { Double($0) / 1000 }
        current = status.current
        bytesWritten = writer.counters.bytesWritten.load(ordering: .relaxed)
        pagesDropped = writer.counters.pagesDropped.load(ordering: .relaxed)
        writeErrors = writer.counters.writeErrors.load(ordering: .relaxed)
        filesRemoved = writer.counters.filesRemoved.load(ordering: .relaxed)
        lastError = status.lastError
        if let timeShift {
            timeShifted = timeShift.listeners.load(ordering: .relaxed)
            timeShiftServed = timeShift.served.load(ordering: .relaxed)
            timeShiftRefused = timeShift.refused.load(ordering: .relaxed)
            timeShiftReadBytes = timeShift.bytesRead.load(ordering: .relaxed)
        }
    }

    package func encode(to encoder: any Swift.Encoder) throws {
        var out = encoder.container(keyedBy: CodingKeys.self)
        try out.encode(directory, forKey: .directory)
        try out.encode(format, forKey: .format)
        try out.encode(state, forKey: .state)
        try out.encode(stalledSeconds, forKey: .stalledSeconds)
        try out.encode(files, forKey: .files)
        try out.encode(bytes, forKey: .bytes)
        try out.encodeOrNull(oldest.map { UTCTime($0).iso8601 }, forKey: .oldest)
        try out.encodeOrNull(newest.map { UTCTime($0).iso8601 }, forKey: .newest)
        try out.encodeOrNull(current, forKey: .current)
        try out.encode(bytesWritten, forKey: .bytesWritten)
        try out.encode(pagesDropped, forKey: .pagesDropped)
        try out.encode(writeErrors, forKey: .writeErrors)
        try out.encode(filesRemoved, forKey: .filesRemoved)
        try out.encodeOrNull(lastError, forKey: .lastError)
        try out.encode(timeShifted, forKey: .timeShifted)
        try out.encode(timeShiftServed, forKey: .timeShiftServed)
        try out.encode(timeShiftRefused, forKey: .timeShiftRefused)
        try out.encode(timeShiftReadBytes, forKey: .timeShiftReadBytes)
    }

    package init(from decoder: any Swift.Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        directory = try values.decodeIfPresent(String.self, forKey: .directory) ?? ""
        format = try values.decodeIfPresent(String.self, forKey: .format) ?? format
        state = try values.decodeIfPresent(String.self, forKey: .state) ?? state
        stalledSeconds = try values.decodeIfPresent(Double.self, forKey: .stalledSeconds) ?? 0
        files = try values.decodeIfPresent(Int.self, forKey: .files) ?? 0
        bytes = try values.decodeIfPresent(Int64.self, forKey: .bytes) ?? 0
        current = try values.decodeIfPresent(String.self, forKey: .current)
        func moment(_ key: CodingKeys) throws -> Double? {
            try values.decodeIfPresent(String.self, forKey: key).flatMap { TimeShiftStart.moment(Array($0.utf8)) }
                .map { Double($0) / 1000 }
        }
        oldest = try moment(.oldest)
        newest = try moment(.newest)
        bytesWritten = try values.decodeIfPresent(Int.self, forKey: .bytesWritten) ?? 0
        pagesDropped = try values.decodeIfPresent(Int.self, forKey: .pagesDropped) ?? 0
        writeErrors = try values.decodeIfPresent(Int.self, forKey: .writeErrors) ?? 0
        filesRemoved = try values.decodeIfPresent(Int.self, forKey: .filesRemoved) ?? 0
        lastError = try values.decodeIfPresent(String.self, forKey: .lastError)
        timeShifted = try values.decodeIfPresent(Int.self, forKey: .timeShifted) ?? 0
        timeShiftServed = try values.decodeIfPresent(Int.self, forKey: .timeShiftServed) ?? 0
        timeShiftRefused = try values.decodeIfPresent(Int.self, forKey: .timeShiftRefused) ?? 0
        timeShiftReadBytes = try values.decodeIfPresent(Int.self, forKey: .timeShiftReadBytes) ?? 0
    }
}

extension MetricsReport {
    /// Each archive writer's figures, labelled `station` and `format` (`opus`, or `mp3` for an MP3 output's).
    static func archiveSamples(_ out: inout String, _ snapshot: StatusSnapshot) {
        let writers = snapshot.stations.flatMap { station in
            [station.archive, station.archiveMP3].compactMap { $0 }.map { (station.name, $0) }
        }
        let writing: (ArchiveFigures) -> Double? = { $0.state == "writing" ? 1 : 0 }
        let families: [(String, Kind, String, (ArchiveFigures) -> Double?)] = [
            (
                "archive_writing", .gauge,
                "1 while the archive writes, 0 while it drops pages (disk failing) or waits for a disk that hangs",
                writing
            ),
            (
                "archive_stalled_seconds", .gauge, "Seconds the archive has waited for a disk that hangs",
                \.stalledSeconds
            ),
            ("archive_files", .gauge, "Files in the archive", { Double($0.files) }),
            ("archive_bytes", .gauge, "Bytes of the archive's files", { Double($0.bytes) }),
            ("archive_oldest_timestamp_seconds", .gauge, "Start of the archive's oldest file (Unix time)", \.oldest),
            ("archive_newest_timestamp_seconds", .gauge, "End of the archive's newest audio (Unix time)", \.newest),
            ("archive_written_bytes_total", .counter, "Bytes written to the archive", { Double($0.bytesWritten) }),
            ("archive_dropped_pages_total", .counter, "Pages not archived", { Double($0.pagesDropped) }),
            ("archive_write_errors_total", .counter, "Archive writes that failed", { Double($0.writeErrors) }),
            ("archive_removed_files_total", .counter, "Files archive_keep removed", { Double($0.filesRemoved) }),
            (
                "time_shifted_listeners", .gauge, "Listeners served from the archive (start=, offset=)",
                {
                    Double($0.timeShifted)
                }
            ),
            ("time_shift_listeners_total", .counter, "Time-shifted listeners served", { Double($0.timeShiftServed) }),
            ("time_shift_refused_total", .counter, "Time-shifted requests refused", { Double($0.timeShiftRefused) }),
            (
                "time_shift_read_bytes_total", .counter, "Archive bytes read for time-shifted listeners",
                {
                    Double($0.timeShiftReadBytes)
                }
            ),
        ]
        for (name, kind, help, value) in families {
            header(&out, name, kind, help)
            for (station, figures) in writers {
                guard let sample = value(figures) else { continue }
                let labels = "station=\"\(labelValue(station))\",format=\"\(labelValue(figures.format))\""
                out += "\(prefix)\(name){\(labels)} \(number(sample))\n"
            }
        }
    }
}
