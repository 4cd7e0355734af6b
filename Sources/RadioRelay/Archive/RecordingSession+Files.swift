import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// The recorder's files: a recording opened, written, finished or cut back after a failure, and the copy of the
/// source's bytes beside it.
extension RecordingSession {
    /// Opens the recording of `show` that starts at `start` (the next free second when a file of that name exists);
    /// false, the failure noted, when it cannot be made.
    mutating func open(start: Int64, show: String, ogg: ArchiveOggFile) -> Bool {
        var start = start - start % 1000
        var name = RecordingName.name(start: start, show: show, ext: "opus")
        for _ in 0..<10 where ArchiveDisk.size(path(name)) != nil {
            start += 1000
            name = RecordingName.name(start: start, show: show, ext: "opus")
        }
        do {
            try mark(name)
            let descriptor = try ArchiveDisk.create(path(name))
            let made = ArchiveOpenFile(
                descriptor: descriptor, name: name, path: path(name), boundary: .max,
                scanner: ArchiveScanner(name: name, start: start, format: .opus))
            made.ogg = ogg
            file = made
            return true
        } catch {
            fail("\(error)")
            return false
        }
    }

    func path(_ name: String) -> String { writer.directory + "/" + name }

    /// Writes `bytes` to the open recording; a failure cuts it back to its whole pages and closes it.
    mutating func write(_ bytes: [UInt8]) {
        guard let open = file, !bytes.isEmpty else { return }
        do {
            try open.append(bytes)
        } catch {
            fail("\(error)")
            return
        }
        writer.counters.bytesWritten.add(bytes.count, ordering: .relaxed)
        trouble.recovered(in: open.name)
    }

    /// A failure: logged once until the recorder writes again; the recording cut back and closed; retried later.
    mutating func fail(_ message: String) {
        writer.counters.writeErrors.add(1, ordering: .relaxed)
        trouble.failed(message, what: "the recording")
        writer.status.withLock { $0.lastError = message }
        if let open = file {
            file = nil
            open.cutBack()
            closed(open)
        }
    }

    /// Ends the open recording: its held page flagged end-of-stream, the file and its folder synced.
    mutating func finishFile() {
        guard let open = file else { return }
        if let last = open.takeLastPage() {
            write(last)
            guard file != nil else { return }  // the write failed: `fail` closed it
        }
        file = nil
        do {
            try ArchiveDisk.sync(open.descriptor, path: open.path)
            try ArchiveDisk.syncDirectory(writer.directory)
        } catch {
            fail("\(error)")
        }
        closed(open)
    }

    /// A recording closed: counted and logged, or removed when it holds no audio.
    mutating func closed(_ open: ArchiveOpenFile) {
        unmark()
        let entry = open.scanner.file
        guard entry.end > entry.start else {
            _ = try? ArchiveDisk.remove(open.path)
            return
        }
        writer.counters.files.add(1, ordering: .relaxed)
        writer.status.withLock { $0.last = open.name }
        let tenths = (entry.end - entry.start + 50) / 100
        Log.notice(
            "\(label): record_live: \(open.name) finished: \(tenths / 10).\(tenths % 10) s, "
                + "\(open.scanner.validSize) bytes")
    }

    // MARK: The source's own bytes

    /// Bytes of the source's connection: to its copy, or kept until a show starts.
    mutating func copySource(_ bytes: [UInt8]) {
        guard !source.broken else { return }
        if source.file != nil {
            writeSource(bytes)
        } else if source.pending.count + bytes.count <= SourceCopy.maxPending {
            source.pending += bytes
            if let name = file?.name { openSource(beside: name) }
        } else {
            breakSource("more than \(SourceCopy.maxPending >> 20) MiB came before the source took over")
        }
    }

    /// Opens the copy beside the recording `recording`, named as it is with the source's extension, and writes
    /// what the source sent so far.
    mutating func openSource(beside recording: String) {
        let stem = recording.hasSuffix(".opus") ? String(recording.dropLast(5)) : recording
        let name = stem + "." + RecordingName.sourceExtension(source.pending.prefix(4))
        do {
            let descriptor = try ArchiveDisk.create(path(name))
            source.file = ArchiveOpenFile(
                descriptor: descriptor, name: name, path: path(name), boundary: .max,
                scanner: ArchiveScanner(name: name, start: 0, format: .mp3))
        } catch {
            writer.counters.writeErrors.add(1, ordering: .relaxed)
            return breakSource("\(error)")
        }
        let pending = source.pending
        source.pending = []
        writeSource(pending)
    }

    mutating func writeSource(_ bytes: [UInt8]) {
        guard let copy = source.file, !bytes.isEmpty else { return }
        do {
            try ArchiveDisk.write(bytes, to: copy.descriptor, path: copy.path)
            writer.counters.bytesWritten.add(bytes.count, ordering: .relaxed)
        } catch {
            writer.counters.writeErrors.add(1, ordering: .relaxed)
            breakSource("\(error)")
        }
    }

    /// The copy cannot be whole any more: what it has is kept (synced), nothing more of this connection is copied.
    mutating func breakSource(_ why: String) {
        trouble.note("source", "the source's copy: \(why): it ends here")
        closeSource()
        source.pending = []
        source.broken = true
    }

    /// Closes the copy, synced.
    mutating func closeSource() {
        guard let copy = source.file else { return }
        source.file = nil
        do {
            try ArchiveDisk.sync(copy.descriptor, path: copy.path)
            try ArchiveDisk.syncDirectory(writer.directory)
            writer.counters.sourceFiles.add(1, ordering: .relaxed)
        } catch {
            writer.counters.writeErrors.add(1, ordering: .relaxed)
            trouble.note("source", "the source's copy: \(error)")
        }
    }
}
