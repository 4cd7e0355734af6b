import Glibc
import RadioRelayMedia
import RadioRelaySystem

/// The archive as a restart finds it: the index on disk is trusted for each file whose size it has; any other file
/// (the one a crash left open, one the index does not list) is scanned, a torn page at its end cut off, and an Ogg
/// file's last page flagged end-of-stream, so that it plays as a whole file too. A missing or damaged index is
/// rebuilt from the files alone. Files the index lists and the disk has no more are forgotten.
extension ArchiveSession {
    mutating func recover() {
        let directory = writer.directory
        _ = try? ArchiveDisk.remove(directory + "/" + ArchiveDisk.temporaryIndexName)
        let reading = ArchiveFolder.read(directory, format: writer.format)
        for (scanner, size) in reading.scanned {
            let entry = scanner.file
            guard entry.end > entry.start else {
                _ = try? ArchiveDisk.remove(path(entry.name))  // no audio in it: nothing to keep
                continue
            }
            if scanner.validSize < size {
                Log.notice("\(label): archive: \(entry.name): \(size - scanner.validSize) bytes of a torn end cut off")
                _ = try? ArchiveDisk.truncate(path(entry.name), to: scanner.validSize)
            }
            if writer.format == .opus {
                Self.markEnd(path(entry.name), page: scanner.lastUnitOffset, end: scanner.validSize)
            }
        }
        index = reading.index
        let kept = ArchiveDisk.read(directory + "/" + ArchiveTitles.fileName, limit: ArchiveTitles.readLimit)
        titles = ArchiveTitles(text: Substring(decoding: kept ?? [], as: UTF8.self))
        let scanned = reading.scanned.count
        if reading.stored == nil || scanned > 0 || reading.stored != index {
            saveIndex()
            guard !index.files.isEmpty || scanned > 0 else { return }  // a new archive: nothing to say
            let how = reading.stored == nil ? "rebuilt" : "brought up to date"
            Log.notice("\(label): archive: index \(how): \(scanned) of \(index.files.count) files scanned")
        }
    }

    /// Flags the Ogg page at `page`…`end` of the file end-of-stream (its CRC made again), if it is not already.
    static func markEnd(_ path: String, page: Int64, end: Int64) {
        let length = Int(clamping: end - page)
        guard length >= OggPageHeader.length, length <= 65_307,
            let fd = try? FileDescriptor.opening("open \(path)", { Glibc.open(path, O_RDWR | O_CLOEXEC) })
        else { return }
        var bytes = [UInt8](repeating: 0, count: length)
        let raw = fd.rawValue
        let read = bytes.withUnsafeMutableBytes { pread(raw, $0.baseAddress, length, off_t(page)) }
        guard read == length, let header = OggPageHeader.decode(bytes), !header.isEnd else { return }
        OggSplice.stamp(
            &bytes, flags: header.flags | 4, granule: header.granulePosition, serial: header.serial,
            sequence: header.sequence)
        let written = bytes.withUnsafeBytes { pwrite(raw, $0.baseAddress, length, off_t(page)) }
        if written == length { _ = fsync(raw) }
    }
}
