import Glibc
import RadioRelayMedia
import RadioRelaySystem

/// Reads a non-blocking socket in bounded chunks for an input (`TCPSource`, `LiveSource`): what is there, or a wait
/// of at most the caller's timeout for more. A peer that sends nothing is the `Downloader`'s `StallWatch`'s to judge.
package final class SocketChunkReader {
    private var buffer: [UInt8]

    package init(chunkSize: Int) {
        buffer = [UInt8](repeating: 0, count: max(1, chunkSize))
    }

    /// Reads what is there, waiting up to `timeout` ms; nil when the peer closed, an empty slice when nothing came.
    package func read(_ fd: Int32, timeout: Int, url: String) throws(DownloadError) -> ArraySlice<UInt8>? {
        let count = buffer.count
        let result: IOResult<Int>
        do {
            result = try buffer.withUnsafeMutableBytes { raw throws(SystemError) in
                try nonblockingSyscall("read") { Glibc.read(fd, raw.baseAddress, count) }
            }
        } catch {
            throw DownloadError(.transfer, url: url, "read failed: \(error)")
        }
        switch result {
        case .done(0):
            return nil
        case .done(let n):
            return buffer[0..<n]
        case .wouldBlock:
            var waiting = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = Glibc.poll(&waiting, 1, Int32(clamping: timeout))
            return []
        }
    }
}

@available(*, unavailable) extension SocketChunkReader: Sendable {}
