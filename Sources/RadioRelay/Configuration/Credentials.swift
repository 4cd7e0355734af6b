import Glibc
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// Secrets kept out of the world-readable config file: a value written `@credential:NAME` is the content of
/// `$CREDENTIALS_DIRECTORY/NAME`, which systemd fills from `LoadCredential=NAME:PATH` (readable by the service only).
/// Messages name the credential, never its content.
package enum Credentials {
    static let prefix = "@credential:"

    /// The credential's NAME when `value` refers to one.
    static func reference(in value: String) -> String? {
        value.hasPrefix(prefix) ? String(value.dropFirst(prefix.count)) : nil
    }

    /// The content of credential `name` without its trailing line breaks, or why it cannot be had.
    static func read(_ name: String, directory: String?) -> Result<String, CredentialProblem> {
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/") else {
            return .failure(.init("credential name \"\(name)\" is not valid: use the NAME of LoadCredential=NAME:PATH"))
        }
        guard let directory, !directory.isEmpty else {
            return .failure(
                .init(
                    "credential \(name): $CREDENTIALS_DIRECTORY is not set: run under systemd with "
                        + "LoadCredential=\(name):PATH"))
        }
        let path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
        let bytes: [UInt8]
        do {
            bytes = try SmallFile.read(path, limit: 64 * 1024)
        } catch {
            switch error {
            case .tooLarge:
                return .failure(.init("credential \(name) is larger than 64 KiB"))
            case .system(let error) where error.errno == ENOENT:
                return .failure(
                    .init("credential \(name) is not in \(directory): add LoadCredential=\(name):PATH to the unit"))
            case .system(let error):
                return .failure(.init("credential \(name) cannot be read: \(String(cString: strerror(error.errno)))"))
            }
        }
        var text = Substring(decoding: bytes, as: UTF8.self)
        while text.hasSuffix("\n") || text.hasSuffix("\r") { text = text.dropLast() }
        guard !text.isEmpty else { return .failure(.init("credential \(name) is empty")) }
        return .success(String(text))
    }

    struct CredentialProblem: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }
}

/// Reads a small file whole, refusing one over `limit` bytes (a config file or a credential, not a stream).
enum SmallFile {
    enum Failure: Error {
        case system(SystemError)
        case tooLarge
    }

    static func read(_ path: String, limit: Int) throws(Failure) -> [UInt8] {
        let bytes: [UInt8]?
        do {
            bytes = try readAll(path, limit: limit)
        } catch {
            throw .system(error)
        }
        guard let bytes else { throw .tooLarge }
        return bytes
    }

    /// Nil once more than `limit` bytes have been read.
    private static func readAll(_ path: String, limit: Int) throws(SystemError) -> [UInt8]? {
        let file = try FileDescriptor.opening("open \(path)") { open(path, O_RDONLY | O_CLOEXEC) }
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 * 1024, alignment: 1)
        defer { chunk.deallocate() }
        var bytes: [UInt8] = []
        while true {
            let count = try syscall("read \(path)") { Glibc.read(file.rawValue, chunk.baseAddress, chunk.count) }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
            if bytes.count > limit { return nil }
        }
    }
}
