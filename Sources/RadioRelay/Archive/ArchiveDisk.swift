import Glibc
import RadioRelayMedia
import RadioRelaySystem

/// The file system calls of an archive, each a blocking call made only on its writer thread (or once at a station's
/// start, `prepare`): every failure is a `SystemError` naming the call and the path.
enum ArchiveDisk {
    /// The index file beside the audio files, and its temporary twin (written, synced, then renamed over it).
    static let indexName = "index.txt"
    static let temporaryIndexName = "index.txt.tmp"

    /// Makes `path` and its missing parents, then proves it is writable (a file made and removed): what a station
    /// checks before it starts.
    static func prepare(_ path: String) throws(SystemError) {
        var made = ""
        for part in path.split(separator: "/") {
            made += "/" + part
            if mkdir(made, 0o755) != 0 && errno != EEXIST { throw SystemError("mkdir \(made)") }
        }
        var status = stat()
        guard stat(path, &status) == 0 else { throw SystemError("stat \(path)") }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw SystemError("mkdir \(path)", errno: ENOTDIR) }
        let probe = path + "/.probe-\(getpid())"
        _ = try FileDescriptor.opening("open \(probe)") { open(probe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
        guard unlink(probe) == 0 else { throw SystemError("unlink \(probe)") }
    }

    /// A new file (never an existing one: `O_EXCL`).
    static func create(_ path: String) throws(SystemError) -> FileDescriptor {
        try FileDescriptor.opening("open \(path)") { open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644) }
    }

    /// Writes all of `bytes`; on a failure, how many were written before it is lost to the caller, who truncates.
    static func write(_ bytes: [UInt8], to fd: borrowing FileDescriptor, path: String) throws(SystemError) {
        var done = 0
        let raw = fd.rawValue
        while done < bytes.count {
            let count = try syscall("write \(path)") {
                bytes.withUnsafeBytes { buffer in
                    guard let base = buffer.baseAddress else { return 0 }
                    return Glibc.write(raw, base + done, buffer.count - done)
                }
            }
            guard count > 0 else { throw SystemError("write \(path)", errno: EIO) }
            done += count
        }
    }

    static func sync(_ fd: borrowing FileDescriptor, path: String) throws(SystemError) {
        let raw = fd.rawValue
        _ = try syscall("fsync \(path)") { fsync(raw) }
    }

    static func truncate(_ path: String, to size: Int64) throws(SystemError) {
        _ = try syscall("truncate \(path)") { Glibc.truncate(path, off_t(size)) }
    }

    /// Makes the directory's entries (a new or renamed file) durable.
    static func syncDirectory(_ path: String) throws(SystemError) {
        let fd = try FileDescriptor.opening("open \(path)") { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        try sync(fd, path: path)
    }

    /// The names in a directory (without `.` and `..`).
    static func list(_ path: String) throws(SystemError) -> [String] {
        guard let directory = opendir(path) else { throw SystemError("opendir \(path)") }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Size of a file, nil when it is not there.
    static func size(_ path: String) -> Int64? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return Int64(status.st_size)
    }

    /// The whole of a small file (at most `limit` bytes; nil when missing, unreadable or larger).
    static func read(_ path: String, limit: Int) -> [UInt8]? {
        guard let fd = try? FileDescriptor.opening("open \(path)", { open(path, O_RDONLY | O_CLOEXEC) }) else {
            return nil
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let raw = fd.rawValue
            let count = chunk.withUnsafeMutableBytes { buffer in
                (try? syscall("read \(path)") { Glibc.read(raw, buffer.baseAddress, buffer.count) }) ?? -1
            }
            if count < 0 { return nil }
            if count == 0 { return bytes }
            bytes += chunk[0..<count]
            if bytes.count > limit { return nil }
        }
    }

    /// Reads a whole audio file through a scanner (1 MiB at a time) and returns it: the file's index entry.
    static func scan(_ path: String, name: String, start: Int64, format: ArchiveName.Format) -> ArchiveScanner {
        var scanner = ArchiveScanner(name: name, start: start, format: format)
        guard let fd = try? FileDescriptor.opening("open \(path)", { open(path, O_RDONLY | O_CLOEXEC) }) else {
            return scanner
        }
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while !scanner.isDamaged {
            let raw = fd.rawValue
            let count = chunk.withUnsafeMutableBytes { buffer in
                (try? syscall("read \(path)") { Glibc.read(raw, buffer.baseAddress, buffer.count) }) ?? -1
            }
            guard count > 0 else { break }
            scanner.feed(chunk[0..<count])
        }
        return scanner
    }

    /// Replaces `name` in `directory` with `contents` (written to `name.tmp`, synced, renamed over it), so that a crash
    /// leaves the old file or the new one, whole.
    static func replace(_ name: String, in directory: String, with contents: [UInt8]) throws(SystemError) {
        let temporary = directory + "/" + name + ".tmp"
        do {
            let fd = try FileDescriptor.opening("open \(temporary)") {
                open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            }
            try write(contents, to: fd, path: temporary)
            try sync(fd, path: temporary)
        }
        let path = directory + "/" + name
        _ = try syscall("rename \(temporary)") { rename(temporary, path) }
        try syncDirectory(directory)
    }

    static func remove(_ path: String) throws(SystemError) {
        _ = try syscall("unlink \(path)") { unlink(path) }
    }

    /// Bytes an unprivileged writer may still use on the volume, and the volume's size (`statvfs`).
    static func space(_ path: String) throws(SystemError) -> (available: Int64, total: Int64) {
        var status = statvfs()
        _ = try syscall("statvfs \(path)") { statvfs(path, &status) }
        let unit = Int64(clamping: status.f_frsize)
        let available = Int64(clamping: status.f_bavail).multipliedReportingOverflow(by: unit)
        let total = Int64(clamping: status.f_blocks).multipliedReportingOverflow(by: unit)
        return (available.overflow ? .max : available.partialValue, total.overflow ? .max : total.partialValue)
    }
}
