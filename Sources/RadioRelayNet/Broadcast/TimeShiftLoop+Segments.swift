import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// The archive HLS segments (`ArchiveSegment`), read and answered on the archive's thread: at most `maxReplies`
/// being sent at once, each within `replyDeadline` seconds, its connection closed once it is out.
extension TimeShiftLoop {
    static let maxReplies = 64
    static let replyDeadline = 30.0
    /// Bytes read for one segment at most: 10 s of audio and the 10 s before it to the page the index points at,
    /// at up to 512 kbit/s, with room.
    static let segmentReadLimit = 4 << 20

    /// A segment's answer being sent.
    final class Reply {
        let socket: FileDescriptor
        let bytes: [UInt8]
        var sent = 0
        let deadline: Double

        init(socket: consuming FileDescriptor, bytes: [UInt8], deadline: Double) {
            self.socket = socket
            self.bytes = bytes
            self.deadline = deadline
        }
    }

    /// Reads the segment that starts at `start` and queues its answer (or a 404, a 503).
    func answerSegment(
        _ start: Int64, container: ArchivePlaylist.Container, on socket: consuming FileDescriptor,
        arrival: TimeShiftService.Arrival, index: ArchiveIndex, now: Double
    ) {
        let sequence = UInt32(clamping: start / (ArchiveSegment.seconds * 1000))
        guard replies.count < Self.maxReplies else {
            sendBestEffort(arrival.answer(503, "", Array("archive busy\n".utf8), []), on: socket.rawValue)
            return
        }
        // MPEG-TS names the channels (the live stream's, until the file's OpusHead is read); fMP4's init segment does.
        let channels =
            container == .ts ? broadcaster.ring.headers.first.flatMap { OggSplice.head(of: $0.bytes) }?.channels : nil
        var segment = ArchiveSegment(
            from: start, to: start + ArchiveSegment.seconds * 1000, channels: channels ?? 2)
        if let range = index.range, let location = index.locate(max(start, range.lowerBound)),
            let file = index.file(named: location.file)
        {
            read(&segment, from: file, offset: location.offset, index: index)
        }
        let end = index.range?.upperBound ?? 0
        let packed =
            container == .fmp4 ? segment.segment(sequence: sequence) : segment.transportStream(sequence: sequence)
        guard let body = packed else {
            let text = Array("no audio archived for that segment\n".utf8)
            sendBestEffort(arrival.answer(404, "", text, []), on: socket.rawValue)
            return
        }
        let whole = segment.isComplete || start + ArchiveSegment.seconds * 1000 <= end
        let cache = whole ? "public, max-age=86400, immutable" : "no-cache"
        let answer = arrival.answer(200, container.contentType, body, [("Cache-Control", cache)])
        do {
            try setNonblocking(socket.rawValue)
        } catch {
            return
        }
        replies.append(Reply(socket: socket, bytes: answer, deadline: now + Self.replyDeadline))
    }

    /// Feeds `segment` the pages of `file` from `offset` on, and of the files after it, until it is complete, the
    /// archive ends, or `segmentReadLimit` bytes were read.
    private func read(_ segment: inout ArchiveSegment, from file: ArchiveIndex.File, offset: Int64, index: ArchiveIndex)
    {
        var current = file
        var position = offset
        var pending: [UInt8] = []
        var total = 0
        segment.enter(fileStart: current.start)
        var descriptor = openArchive(current.name)
        while total < Self.segmentReadLimit && !segment.isComplete {
            guard let fd = descriptor?.rawValue else { return }
            let count = scratch.withUnsafeMutableBytes {
                pread(fd, $0.baseAddress, $0.count, off_t(position))
            }
            if count < 0 && errno == EINTR { continue }
            if count > 0 {
                total += count
                position += Int64(count)
                pending += scratch[0..<count]
                var used = 0
                while case .ogg(let length, _, _) = ArchiveUnit.find(in: pending, at: used, format: .opus) {
                    segment.page(Array(pending[used..<used + length]))
                    used += length
                    if segment.isComplete { break }
                }
                pending.removeFirst(used)
                continue
            }
            // The end of this file: on with the next one.
            guard let next = index.file(after: current.start) else { break }
            current = next
            position = 0
            pending = []
            segment.enter(fileStart: current.start)
            descriptor = openArchive(current.name)
        }
        service.counters.bytesRead.add(total, ordering: .relaxed)
    }

    private func openArchive(_ name: String) -> FileDescriptor? {
        let path = service.directory + "/" + name
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        return fd >= 0 ? FileDescriptor(owning: fd) : nil
    }

    /// Sends what the answers being sent have left; those sent, failed or past their deadline close.
    func flushReplies(now: Double) {
        replies.removeAll { reply in
            if now > reply.deadline { return true }
            let count = reply.bytes.withUnsafeBytes {
                send(
                    reply.socket.rawValue, $0.baseAddress.map { $0 + reply.sent }, reply.bytes.count - reply.sent,
                    Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if count < 0 { return !(errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) }
            reply.sent += count
            return reply.sent >= reply.bytes.count
        }
    }
}
