import Glibc
import RadioRelayMedia
import RadioRelaySystem

/// The recording a crash of the server left open (a kill, a power cut): while a recording is written, a marker file
/// in its folder (`.recording`) names it; the next start scans that file alone, cuts a torn page off its end and
/// flags its last page end-of-stream, so that it plays as a whole file too, as the archive does with its own.
extension RecordingSession {
    static let markerName = ".recording"

    /// Names the recording being written (written and synced before the recording is made).
    func mark(_ name: String) throws(SystemError) {
        try ArchiveDisk.replace(Self.markerName, in: writer.directory, with: Array(name.utf8))
    }

    /// The recording is closed whole: the marker goes.
    func unmark() { _ = try? ArchiveDisk.remove(path(Self.markerName)) }

    /// Ends the recording the marker names, if a crash left it open.
    func recover() {
        let marker = path(Self.markerName)
        guard let bytes = ArchiveDisk.read(marker, limit: 4096) else { return }
        defer { unmark() }
        let name = String(decoding: bytes, as: UTF8.self)
        guard name.hasSuffix(".opus"), !name.contains("/"), let size = ArchiveDisk.size(path(name)) else { return }
        let scanner = ArchiveDisk.scan(path(name), name: name, start: 0, format: .opus)
        guard scanner.file.end > scanner.file.start else {
            _ = try? ArchiveDisk.remove(path(name))  // no audio in it: nothing to keep
            return
        }
        if scanner.validSize < size { _ = try? ArchiveDisk.truncate(path(name), to: scanner.validSize) }
        ArchiveSession.markEnd(path(name), page: scanner.lastUnitOffset, end: scanner.validSize)
        Log.notice(
            "\(label): record_live: \(name), left open by a stop of the server, ended "
                + "(\(size - scanner.validSize) bytes of a torn end cut off)")
    }
}
