import Glibc
import RadioRelayMedia
import RadioRelaySystem

/// What a file input has of its own (`StationInput.Origin.file`): its passes (a looping file's next pass starts
/// once the last one played out), its ID3 title, and whether its file can be read while it waits unconnected.
final class FileInput {
    /// The file's path.
    let path: String
    /// A pass ended: the next one starts once this one played out, and only if it had audio.
    var passEnded = false
    /// Its ID3 title was looked for (once).
    private(set) var titleRead = false
    /// Its file cannot be read now (why), found while it waits unconnected (`Pipeline.checkFiles`): shown as
    /// failed, so the fallback's absence is seen before the emergency.
    var unreadable: String?
    var checkedAt = -Double.infinity

    init(path: String) {
        self.path = path
    }

    /// Why its file cannot be read (nil: it can).
    var problem: String? {
        guard access(path, R_OK) != 0 else { return nil }
        return "cannot read \(path): \(String(cString: strerror(errno)))"
    }

    /// Its ID3 title, read once from its first bytes (a local file: a bounded read on the pipeline thread); nil
    /// when it was read before, or the file has none.
    func readTitle() -> String? {
        guard !titleRead else { return nil }
        titleRead = true
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: ID3Title.readLimit)
        var filled = 0
        while filled < bytes.count {
            let n = bytes.withUnsafeMutableBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return -1 }
                return read(fd, base + filled, buffer.count - filled)
            }
            if n <= 0 { break }
            filled += n
        }
        return ID3Title.read(Array(bytes[..<filled]))
    }
}

@available(*, unavailable) extension FileInput: Sendable {}

/// What the live source's input has of its own (`StationInput.Origin.live`): the source connected last.
final class LiveInput {
    /// The source closed its connection: what it sent is played out, then the station hands back (why).
    var ending: String?
    /// How logs name the source connected last (`live source ADDR:PORT`).
    var label = "live source"
    /// The `ice-name` of the source connected last (a title when it sends none).
    var name: String?
    /// The DJ account the source connected last authenticated as; nil: the station's own `source`.
    var dj: String?
    /// Whether its connection's bytes go to the recorder as they come (`record_live_source`).
    var copiesSource = false
}

@available(*, unavailable) extension LiveInput: Sendable {}
