import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// The writer's files: opening one (the volume checked first), writing, a failure, finishing one, the index on
/// disk, and the removals `archive_keep` asks for.
extension ArchiveSession {
    /// Opens the file that starts at `start` (the next free second when a file of that name exists); false, the
    /// failure noted, when the volume is nearly full or the file cannot be made.
    mutating func open(start: Int64, first: Int64) -> Bool {
        nextStart = nil
        do {
            let space = try ArchiveDisk.space(writer.directory)
            guard !ArchiveSettings.isNearlyFull(available: space.available, total: space.total) else {
                let free = space.available >> 20
                fail(
                    "the volume is nearly full (\(free) MiB free, \(ArchiveSettings.reserve(total: space.total) >> 20) "
                        + "MiB kept back for the system)", isError: false)
                return false
            }
            var second = start - start % 1000  // the second its name says
            var name = ArchiveName.name(start: second, format: writer.format)
            for _ in 0..<10 where index.file(named: name) != nil || ArchiveDisk.size(path(name)) != nil {
                second += 1000
                name = ArchiveName.name(start: second, format: writer.format)
            }
            // The index has the file's start to the millisecond: when its first page was published (a name has
            // whole seconds, up to a second early; a time-shifted listener starts by the index).
            let precise = max(first, second)
            let descriptor = try ArchiveDisk.create(path(name))
            file = ArchiveOpenFile(
                descriptor: descriptor, name: name, path: path(name), boundary: settings.boundary(after: second),
                scanner: ArchiveScanner(name: name, start: precise, format: writer.format))
            return true
        } catch {
            fail("\(error)", isError: true)
            return false
        }
    }

    func path(_ name: String) -> String { writer.directory + "/" + name }

    /// Writes `bytes` to the open file; a failure cuts the file back to its whole pages and closes it.
    /// - Parameter published: when the unit that brought these bytes was published (ms since the epoch): a file's
    ///   start moves back to the earliest time its audio so far says it started (`ArchiveScanner.anchor`), so that
    ///   the pages a station publishes ahead of time at its start (its lead) are timed as those after them.
    mutating func write(_ bytes: [UInt8], published: Int64? = nil) {
        guard let open = file, !bytes.isEmpty else { return }
        do {
            try open.append(bytes)
        } catch {
            fail("\(error)", isError: true)
            return
        }
        if let published { open.scanner.anchor(published: published) }
        writer.counters.bytesWritten.add(bytes.count, ordering: .relaxed)
        if open.scanner.file.end > open.scanner.file.start { trouble.recovered(in: open.name) }
    }

    /// A failure: logged once until the archive writes again; the file cut back and closed; retried later.
    mutating func fail(_ message: String, isError: Bool) {
        if isError { writer.counters.writeErrors.add(1, ordering: .relaxed) }
        trouble.failed(message, what: "the archive")
        if let open = file {
            file = nil
            open.cutBack()
            keep(open)
        }
        publish()
    }

    /// Ends the open file: its held page flagged end-of-stream, synced, recorded in the index (on disk).
    mutating func finishFile() {
        guard let open = file else { return }
        if let last = open.takeLastPage() {
            write(last)
            guard file != nil else { return }  // the write failed: `fail` closed it
        }
        file = nil
        do {
            try ArchiveDisk.sync(open.descriptor, path: open.path)
        } catch {
            fail("\(error)", isError: true)
        }
        keep(open)
    }

    /// Records a closed file in the index (or removes it when it holds no audio) and saves the index.
    mutating func keep(_ closed: ArchiveOpenFile) {
        let entry = closed.scanner.file
        if entry.end > entry.start {
            index.insert(entry)
        } else {
            _ = try? ArchiveDisk.remove(closed.path)
        }
        saveIndex()
    }

    /// A title change: kept, and its line added to `titles.txt`.
    mutating func keepTitle(_ entry: ArchiveTitles.Entry) {
        let before = titles.entries.count
        titles.append(entry)
        guard titles.entries.count != before || titles.entries.count == ArchiveTitles.limit else { return }
        let path = writer.directory + "/" + ArchiveTitles.fileName
        do {
            let fd = try FileDescriptor.opening("open \(path)") {
                Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
            }
            try ArchiveDisk.write(Array(ArchiveTitles.line(entry).utf8), to: fd, path: path)
        } catch {
            writer.counters.writeErrors.add(1, ordering: .relaxed)
            trouble.note("titles", "a title could not be kept: \(error)")
        }
    }

    /// Writes `titles.txt` whole (after the oldest files went).
    func saveTitles() {
        do {
            try ArchiveDisk.replace(ArchiveTitles.fileName, in: writer.directory, with: Array(titles.text.utf8))
        } catch {
            writer.counters.writeErrors.add(1, ordering: .relaxed)
        }
    }

    mutating func saveIndex() {
        do {
            try ArchiveDisk.replace(ArchiveDisk.indexName, in: writer.directory, with: Array(index.text.utf8))
        } catch {
            writer.counters.writeErrors.add(1, ordering: .relaxed)
            trouble.note("index", "the index could not be saved: \(error)")
        }
    }

    /// Removes what `archive_keep` no longer keeps, and publishes the status.
    mutating func housekeeping(now: Double) {
        let keep = writer.keep.snapshot
        let removals = keep.removals(index.files, current: file?.name, now: Self.millis(now))
        var removed = 0
        for name in removals {
            do {
                try ArchiveDisk.remove(path(name))
            } catch let error where error.errno != ENOENT {
                trouble.note("remove", "\(error)")
                continue
            } catch {}
            index.remove(name)
            removed += 1
        }
        if removed > 0 {
            writer.counters.filesRemoved.add(removed, ordering: .relaxed)
            saveIndex()
            if let oldest = index.files.first?.start {
                titles.prune(before: oldest)
                saveTitles()
            }
            Log.info("\(label): archive: \(removed) file\(removed == 1 ? "" : "s") removed (archive_keep)")
        }
        trouble.summarize()
        publish()
    }

    /// The status the station shows: the files (the one being written too), their bytes and times.
    func publish(stopped: Bool = false) {
        var current = index
        if let file { current.insert(file.scanner.file) }
        var status = ArchiveStatus()
        status.state = stopped ? .stopped : trouble.failure == nil ? .writing : .failing
        status.files = current.files.count
        status.bytes = current.bytes
        status.oldest = current.files.first?.start
        status.newest = current.files.map(\.end).max()
        status.current = file?.name
        status.lastError = trouble.failure?.message
        status.index = current
        status.titles = titles
        writer.status.withLock { $0 = status }
    }
}
