import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// One time-shifted listener, confined to its service's thread: its socket, the archive file it reads and its place
/// in it (`ArchivePlayhead`), and the bytes queued for its socket. It is sent audio as far as `lead` seconds ahead
/// of the real time since it started (its burst, then real time), so it stays as far behind live as it started.
final class TimeShiftListener {
    /// Seconds of audio it is sent ahead of real time: the burst a player starts with.
    static let lead = 2.0
    /// Bytes queued for its socket beyond which nothing more is read, and bytes read from the disk at once.
    static let readAhead = 64 << 10
    static let readChunk = 32 << 10

    let socket: FileDescriptor
    let peer: String
    let hostKey: HostKey
    let entry: ListenerEntry
    let session: ListenerSession?
    let request: ListenerRequest?
    let startedAt: Double
    let headLength: Int
    var playhead: ArchivePlayhead
    /// The file it reads (nil between files).
    var file: FileDescriptor?
    var out: [UInt8]
    var outSent = 0
    var bytesSent = 0
    var lastProgress: Double
    /// Bytes it sent us (it has nothing to say: they are read and dropped, within a bound).
    var drained = 0
    /// The time it must leave by (`max_listener_duration`, its backend's time limit).
    var endsAt = Double.infinity
    /// Its socket took less than it was given: wait for `POLLOUT`.
    var backedUp = false

    init(
        socket: consuming FileDescriptor, peer: String, hostKey: HostKey, entry: ListenerEntry,
        session: ListenerSession?, request: ListenerRequest?, head: [UInt8], playhead: ArchivePlayhead, now: Double
    ) {
        self.socket = socket
        self.peer = peer
        self.hostKey = hostKey
        self.entry = entry
        self.session = session
        self.request = request
        startedAt = now
        lastProgress = now
        headLength = head.count
        out = head
        self.playhead = playhead
    }

    var fd: Int32 { socket.rawValue }
    var unsent: Int { out.count - outSent }

    /// What reading stopped at.
    enum Halt: Equatable {
        /// Enough is queued, or sent ahead.
        case enough
        /// The archive has nothing after this yet: live is reached (it waits for the writer).
        case waiting
        /// A failure that ends the listener.
        case failed(String)
    }

    /// Reads and queues audio up to `lead` seconds ahead of real time at `now` and `readAhead` bytes queued, moving
    /// on to the next file of `index` at a file's end. `scratch` holds one read.
    func fill(now: Double, index: ArchiveIndex, directory: String, scratch: inout [UInt8], read: inout Int) -> Halt {
        while unsent < Self.readAhead && playhead.seconds < now - startedAt + Self.lead {
            switch playhead.next() {
            case .bytes(let bytes, _):
                out += bytes
            case .needsBytes:
                if file == nil {
                    let path = directory + "/" + playhead.file
                    let opened = Glibc.open(path, O_RDONLY | O_CLOEXEC)
                    guard opened >= 0 else {
                        // Removed by `archive_keep` meanwhile: on with the next one.
                        if errno == ENOENT, nextFile(index) { continue }
                        return .failed(
                            "the archive file \(playhead.file) cannot be read: \(String(cString: strerror(errno)))")
                    }
                    file = FileDescriptor(owning: opened)
                }
                guard let descriptor = file?.rawValue else { return .failed("no file") }
                let count = scratch.withUnsafeMutableBytes {
                    pread(descriptor, $0.baseAddress, Self.readChunk, off_t(playhead.readOffset))
                }
                if count < 0 {
                    if errno == EINTR { continue }
                    return .failed("reading \(playhead.file): \(String(cString: strerror(errno)))")
                }
                if count > 0 {
                    read += count
                    playhead.feed(scratch[0..<count])
                    continue
                }
                // The end of what is written: a file with a later one after it is finished (a torn end left by a
                // crash, an MP3 file, which has no end mark); the newest one grows.
                guard let indexed = index.file(named: playhead.file), playhead.readOffset >= indexed.size,
                    nextFile(index)
                else { return .waiting }
            case .endOfFile, .damaged:
                guard nextFile(index) else { return .waiting }
            }
        }
        return .enough
    }

    /// Goes on with the file after the current one in `index`; false when there is none yet.
    private func nextFile(_ index: ArchiveIndex) -> Bool {
        guard let next = index.file(after: playhead.fileStart) else { return false }
        file = nil
        playhead.enter(file: next.name, start: next.start)
        return true
    }

    /// Sends what is queued (one `send`); nil when the connection failed (with why).
    func flush(now: Double) -> String? {
        guard unsent > 0 else {
            backedUp = false
            return nil
        }
        let count = out.withUnsafeBytes {
            send(fd, $0.baseAddress.map { $0 + outSent }, unsent, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
        }
        if count < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                backedUp = true
                return nil
            }
            return "write failed: \(String(cString: strerror(errno)))"
        }
        outSent += count
        bytesSent += count
        entry.bytes.store(bytesSent, ordering: .relaxed)
        if count > 0 { lastProgress = now }
        backedUp = unsent > 0
        if outSent == out.count || outSent > Self.readAhead {
            out.removeFirst(outSent)
            outSent = 0
        }
        return nil
    }
}

@available(*, unavailable) extension TimeShiftListener: Sendable {}

extension ArchiveIndex {
    /// The first file that starts after `start` (binary search).
    package func file(after start: Int64) -> File? {
        var low = 0
        var high = files.count
        while low < high {
            let middle = (low + high) / 2
            if files[middle].start <= start { low = middle + 1 } else { high = middle }
        }
        return low < files.count ? files[low] : nil
    }
}
