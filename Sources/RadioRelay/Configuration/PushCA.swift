import Glibc
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// The CA certificates `icecasts://` pushes verify the server's certificate against (`push_ca = FILE`,
/// `--push-ca FILE`): a PEM file libcurl loads on every connection (`CURLOPT_CAINFO`). It is checked when the
/// configuration is read, so that a wrong path is a config error rather than a push that fails for ever. Without
/// it, libcurl uses the system's CA store (Debian: `/etc/ssl/certs/ca-certificates.crt`).
enum PushCA {
    static let accepts = "a readable PEM file of CA certificates"
    /// Larger than any CA bundle (Debian's whole store is about 200 KiB).
    static let limit = 4 * 1024 * 1024
    private static let pemMarker = Array("-----BEGIN CERTIFICATE-----".utf8)

    /// Why `path` cannot be the CA file, in words that say what to give instead; nil when it can.
    static func problem(_ path: String) -> String? {
        let bytes: [UInt8]
        do {
            bytes = try SmallFile.read(path, limit: limit)
        } catch {
            switch error {
            case .tooLarge: return "larger than 4 MiB: use \(accepts)"
            case .system(let error): return "cannot be read (\(String(cString: strerror(error.errno)))): use \(accepts)"
            }
        }
        guard bytes.indices.contains(where: { bytes[$0...].starts(with: pemMarker) }) else {
            return "holds no PEM certificate (-----BEGIN CERTIFICATE-----): use \(accepts)"
        }
        return nil
    }

    /// The option's setting: the path, when `problem` finds nothing wrong with it.
    static func path(_ text: String) -> String? { problem(text) == nil ? text : nil }
}
