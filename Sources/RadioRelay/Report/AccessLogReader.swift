import Glibc
import RadioRelaySystem

/// Reads access log files into an `AccessLogTally`, line by line: plain text or gzip (told apart by the first two
/// bytes, 1f 8b, whatever the file is called: logrotate's `access.log.2.gz`, or a `.gz` that is plain), `-` for
/// standard input. Nothing is gathered beyond one line: a file is read in pieces of `chunk` bytes, a gzip file
/// inflated as it is read (`GzipInflater`), so memory stays bounded whatever the files hold.
///
/// Bounds: a line longer than `lineLimit` bytes is skipped, counted as unreadable; a file stops after `textLimit`
/// bytes of text (a gzip bomb inflates to that much and no more; a week's log of a busy server is a few hundred MB),
/// with a note. Corrupt or truncated gzip data ends its file where it went wrong, with a note: the lines before it
/// count. A file that cannot be opened or read is an error.
package struct AccessLogReader: Sendable {
    package static let defaultLineLimit = 16 * 1024
    package static let defaultTextLimit: Int64 = 4 << 30

    package var lineLimit = defaultLineLimit
    package var textLimit = defaultTextLimit
    package var chunk = 256 * 1024

    package init() {}

    /// Why a file could not be read at all.
    package struct Failure: Error, Equatable, CustomStringConvertible {
        package let message: String
        package var description: String { message }
    }

    /// Reads `path` into `tally`; returns the notes about it (gzip data corrupt or cut short, the text limit
    /// reached), each starting with the path.
    package func read(_ path: String, into tally: inout AccessLogTally) throws(Failure) -> [String] {
        let name = path == "-" ? "(standard input)" : path
        let fd = path == "-" ? STDIN_FILENO : Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(message: "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { if fd != STDIN_FILENO { _ = Glibc.close(fd) } }
        var state = FileState(name: name, splitter: LineSplitter(limit: lineLimit), limit: textLimit)
        var buffer = [UInt8](repeating: 0, count: max(2, chunk))
        var head: [UInt8] = []
        var inflater: GzipInflater?
        var decided = false
        while true {
            let count = buffer.withUnsafeMutableBytes { Self.readSome(fd, $0) }
            guard count >= 0 else {
                throw Failure(message: "cannot read \(path): \(String(cString: strerror(Int32(-count))))")
            }
            if !decided {
                // The first two bytes say gzip or not; a pipe may give them one at a time.
                head.append(contentsOf: buffer[0..<count])
                guard head.count >= 2 || count == 0 else { continue }
                decided = true
                if head.starts(with: [0x1F, 0x8B]) {
                    do {
                        inflater = try GzipInflater()
                    } catch {
                        throw Failure(message: "\(path): \(error)")
                    }
                }
                let more = head.withUnsafeBytes { state.take($0, inflater: inflater, into: &tally) }
                head = []
                if !more || count == 0 { break }
                continue
            }
            if count == 0 { break }
            let more = buffer.withUnsafeBytes {
                state.take(UnsafeRawBufferPointer(rebasing: $0[0..<count]), inflater: inflater, into: &tally)
            }
            if !more { break }
        }
        if let inflater, !state.stopped, !inflater.atMemberEnd {
            state.notes.append("\(name): the gzip data ends before its end (cut short); the lines before count")
        }
        state.finish(into: &tally)
        return state.notes
    }

    /// `read` once, again after EINTR; the count, 0 at the end, or −errno.
    private static func readSome(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Int {
        while true {
            let count = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if count >= 0 { return count }
            if errno != EINTR { return -Int(errno) }
        }
    }

    /// One file's reading: its lines, the text so far, what to say about it.
    private struct FileState {
        let name: String
        var splitter: LineSplitter
        let limit: Int64
        var text: Int64 = 0
        var notes: [String] = []
        /// The text limit was reached, or the gzip data is corrupt: the rest is not read.
        var stopped = false

        init(name: String, splitter: LineSplitter, limit: Int64) {
            self.name = name
            self.splitter = splitter
            self.limit = limit
        }

        /// Takes bytes of the file (inflated first when it is gzip); false when the rest is not to be read.
        mutating func take(
            _ bytes: UnsafeRawBufferPointer, inflater: GzipInflater?, into tally: inout AccessLogTally
        ) -> Bool {
            guard let inflater else { return text(bytes, into: &tally) }
            do {
                return try inflater.inflate(bytes) { text($0, into: &tally) }
            } catch {
                notes.append("\(name): \(error) after \(splitter.number) lines; the lines before count")
                stopped = true
                return false
            }
        }

        /// Text of the file, up to the limit, cut into lines for the tally.
        mutating func text(_ bytes: UnsafeRawBufferPointer, into tally: inout AccessLogTally) -> Bool {
            let room = Int(min(Int64(bytes.count), max(0, limit - text)))
            text += Int64(room)
            let name = self.name
            splitter.feed(UnsafeRawBufferPointer(rebasing: bytes[0..<room])) { piece, number in
                Self.hand(piece, number: number, file: name, into: &tally)
            }
            guard room == bytes.count else {
                notes.append("\(name): stopped after \(limit) bytes of text, the limit of a file")
                stopped = true
                return false
            }
            return true
        }

        /// The end of the file: a last line without its LF is cut short (unless the limit cut it).
        mutating func finish(into tally: inout AccessLogTally) {
            guard !stopped else { return }
            let name = self.name
            splitter.finish { piece, number in Self.hand(piece, number: number, file: name, into: &tally) }
        }

        private static func hand(
            _ piece: LineSplitter.Piece, number: Int, file: String, into tally: inout AccessLogTally
        ) {
            switch piece {
            case .line(let bytes): tally.add(bytes, file: file, number: number)
            case .tooLong: tally.unreadable("longer than the limit of a line", file: file, number: number)
            case .partial: tally.unreadable("cut short (no LF at the end of the file)", file: file, number: number)
            }
        }
    }
}
