import Foundation
import RadioRelayTestSupport
import Testing

/// A throwaway certificate authority and one server certificate it signed, made with the `openssl` CLI in a
/// temporary directory: the CA's certificate (`caFile`, what `push_ca` or a browser's trust store takes) and the
/// server's certificate with its key in one file (`serverPEM`, what HAProxy's `bind … ssl crt` takes). Nothing is
/// trusted anywhere until a test says so.
final class TestCertificates: @unchecked Sendable {
    let directory = temporaryPath("tls")
    var caFile: String { directory + "/ca.pem" }
    var serverPEM: String { directory + "/server.pem" }

    /// - Parameter names: the server certificate's subjectAltName entries (`IP:…`, `DNS:…`).
    init(names: [String] = ["IP:127.0.0.1", "DNS:localhost"]) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let extensions = """
            subjectAltName = \(names.joined(separator: ","))
            basicConstraints = critical, CA:FALSE
            keyUsage = critical, digitalSignature, keyEncipherment
            extendedKeyUsage = serverAuth

            """
        try extensions.write(toFile: directory + "/server.ext", atomically: false, encoding: .utf8)
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try openssl(
            ["req", "-x509"] + key + [
                "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=radio-relay test CA \(UUID())",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ])
        try openssl(["req"] + key + ["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"])
        try openssl([
            "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
            "-extfile", "server.ext", "-out", "server.crt",
        ])
        let pem =
            try String(contentsOfFile: directory + "/server.crt", encoding: .utf8)
            + String(contentsOfFile: directory + "/server.key", encoding: .utf8)
        try pem.write(toFile: serverPEM, atomically: false, encoding: .utf8)
    }

    private func openssl(_ arguments: [String]) throws {
        let result = try run(
            "/bin/sh", ["-c", "cd \"$0\" && exec \"$@\"", directory, try #require(tool("openssl"))] + arguments)
        try #require(result.status == 0, "openssl \(arguments.first ?? ""): \(result.stderr)")
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}
