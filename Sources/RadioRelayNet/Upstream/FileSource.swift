import Glibc
import RadioRelayMedia
import RadioRelaySystem

/// A local upstream file (or a FIFO) read in bounded chunks without ever blocking the pipeline: opened
/// `O_NONBLOCK`, and a FIFO that has nothing yet is waited on with `poll` for at most the caller's timeout.
package final class FileSource {
    package let path: String
    private let descriptor: FileDescriptor
    private var buffer: [UInt8]

    package init(path: String, url: String, chunkSize: Int) throws(DownloadError) {
        self.path = path
        let opened: Int32 = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard opened >= 0 else {
            throw DownloadError(.file, url: url, "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        descriptor = FileDescriptor(owning: opened)
        var status = stat()
        guard fstat(descriptor.rawValue, &status) == 0 else {
            throw DownloadError(.file, url: url, "cannot stat \(path): \(String(cString: strerror(errno)))")
        }
        guard status.st_mode & S_IFMT != S_IFDIR else {
            throw DownloadError(.file, url: url, "\(path) is a directory, not an MP3 file")
        }
        buffer = [UInt8](repeating: 0, count: max(1, chunkSize))
    }

    /// Reads what is there (waiting up to `timeout` ms when nothing is); nil at the end, an empty buffer when a
    /// FIFO has nothing yet.
    package func read(timeout: Int, url: String) throws(DownloadError) -> ArraySlice<UInt8>? {
        let fd = descriptor.rawValue
        let count = buffer.count
        let result: IOResult<Int>
        do {
            result = try buffer.withUnsafeMutableBytes { raw throws(SystemError) in
                try nonblockingSyscall("read \(path)") { Glibc.read(fd, raw.baseAddress, count) }
            }
        } catch {
            throw DownloadError(.file, url: url, "read failed: \(error)")
        }
        switch result {
        case .done(0): return nil
        case .done(let n): return buffer[0..<n]
        case .wouldBlock:
            var waiting = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = Glibc.poll(&waiting, 1, Int32(clamping: timeout))
            return []
        }
    }
}

@available(*, unavailable) extension FileSource: Sendable {}
