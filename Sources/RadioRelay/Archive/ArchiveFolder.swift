import RadioRelayMedia
import RadioRelaySystem

/// An archive's folder read without changing it: its index file where it agrees with the files (a file it lists
/// with the size the disk has), and a scan (`ArchiveScanner`) of every other file of the format, so that a missing
/// or damaged index, or one a crash left behind, is rebuilt from the files alone. What a reader of the archive starts
/// from (`index`), and what the writer's restart starts from before it repairs what the scans found
/// (`ArchiveSession+Recovery.swift`). Blocking reads: call it off the network loops.
package enum ArchiveFolder {
    /// The largest index read back: a year of 10 s files.
    static let indexLimit = 64 << 20

    /// What a read found.
    package struct Reading {
        /// The index of the files there are (for a scanned file, its whole pages).
        package var index = ArchiveIndex()
        /// The index file as it was, nil when missing or damaged.
        package var stored: ArchiveIndex?
        /// The files that were scanned, with the size the disk has (more than the scan's `validSize` when the end is
        /// torn).
        package var scanned: [(scanner: ArchiveScanner, size: Int64)] = []
    }

    /// The index of the archive of `format` in `directory` (empty when there is none).
    package static func index(_ directory: String, format: ArchiveName.Format) -> ArchiveIndex {
        read(directory, format: format).index
    }

    package static func read(_ directory: String, format: ArchiveName.Format) -> Reading {
        var reading = Reading()
        reading.stored = ArchiveDisk.read(directory + "/" + ArchiveDisk.indexName, limit: indexLimit).flatMap {
            ArchiveIndex(text: String(decoding: $0, as: UTF8.self))
        }
        for name in (try? ArchiveDisk.list(directory)) ?? [] {
            guard let parsed = ArchiveName.parse(name), parsed.format == format else { continue }
            let path = directory + "/" + name
            let size = ArchiveDisk.size(path) ?? 0
            if let known = reading.stored?.file(named: name), known.size == size {
                reading.index.insert(known)
                continue
            }
            let scanner = ArchiveDisk.scan(path, name: name, start: parsed.start, format: format)
            reading.scanned.append((scanner, size))
            if scanner.file.end > scanner.file.start { reading.index.insert(scanner.file) }
        }
        return reading
    }
}
