import Foundation
import Glibc
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// Where `transcode` writes: a temporary file beside the target, renamed into place by `commit`, removed by
/// `discard`. "-" writes to standard output directly.
final class OutputFile {
    let path: String
    private let temporaryPath: String?
    private let descriptor: Int32
    private var buffer: [UInt8] = []

    init(path: String) throws {
        self.path = path
        if path == "-" {
            temporaryPath = nil
            descriptor = STDOUT_FILENO
            return
        }
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(getpid()).partial").path
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw OutputError(path: path, message: "cannot create: \(String(cString: strerror(errno)))")
        }
        temporaryPath = temporary
        descriptor = fd
    }

    deinit {
        if descriptor != STDOUT_FILENO { close(descriptor) }
    }

    func write(_ bytes: [UInt8]) throws {
        buffer.append(contentsOf: bytes)
        if buffer.count >= 1 << 16 { try drain() }
    }

    private func drain() throws {
        var offset = 0
        while offset < buffer.count {
            let n = buffer.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw OutputError(path: path, message: "write failed: \(String(cString: strerror(errno)))")
            }
            offset += n
        }
        buffer.removeAll(keepingCapacity: true)
    }

    func commit() throws {
        try drain()
        guard let temporaryPath else { return }
        guard fsync(descriptor) == 0 || errno == EINVAL else {
            throw OutputError(path: path, message: "fsync failed: \(String(cString: strerror(errno)))")
        }
        guard rename(temporaryPath, path) == 0 else {
            throw OutputError(path: path, message: "cannot rename into place: \(String(cString: strerror(errno)))")
        }
    }

    func discard() {
        if let temporaryPath { unlink(temporaryPath) }
    }
}

public struct OutputError: Error, CustomStringConvertible {
    public let path: String
    public let message: String
    public var description: String { "\(path): \(message)" }
}

@available(*, unavailable) extension OutputFile: Sendable {}
