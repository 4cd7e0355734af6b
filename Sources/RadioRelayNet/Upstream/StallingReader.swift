import Glibc
import RadioRelayMedia
import RadioRelaySystem

/// Reads a non-blocking socket in bounded chunks for an input (`TCPSource`, `LiveSource`): what is there, or a wait
/// of at most the caller's timeout for more; a `DownloadError` once nothing came for `stallTimeout` seconds.
package final class StallingReader {
    private var buffer: [UInt8]
    package let stallTimeout: Double
    /// Monotonic seconds of the last byte (or of the start).
    package var lastData = monotonicNow()
    /// What the stall's error adds after "no data for N s".
    private let stallNote: String

    package init(chunkSize: Int, stallTimeout: Double, stallNote: String = "") {
        buffer = [UInt8](repeating: 0, count: max(1, chunkSize))
        self.stallTimeout = max(1, stallTimeout)
        self.stallNote = stallNote
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
            lastData = monotonicNow()
            return buffer[0..<n]
        case .wouldBlock:
            if monotonicNow() - lastData >= stallTimeout {
                throw DownloadError(.transfer, url: url, "no data for \(Int(stallTimeout)) s\(stallNote)")
            }
            var waiting = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = Glibc.poll(&waiting, 1, Int32(clamping: timeout))
            return []
        }
    }
}

@available(*, unavailable) extension StallingReader: Sendable {}
