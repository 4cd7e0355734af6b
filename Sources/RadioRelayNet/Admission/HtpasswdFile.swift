import CCrypt
import RadioRelaySystem

/// A station's `htpasswd` file: `user:hash` lines as Apache's `htpasswd` writes them, checked with libcrypt.
///
/// Taken: bcrypt (`htpasswd -B`: `$2y$`, also `$2b$`, `$2a$`), SHA-256-crypt (`-2`: `$5$`) and SHA-512-crypt
/// (`-5`: `$6$`), and yescrypt (`$y$`, today's `mkpasswd` default) — the salted, slow hashes libcrypt verifies.
/// Refused with an error naming the line, because each is a fast hash an attacker who gets the file reverses
/// quickly and libcrypt does not compute it (a second library only to accept weak hashes is not worth it): Apache's
/// MD5 (`$apr1$`, `htpasswd`'s default `-m`), unsalted SHA-1 (`{SHA}`, `-s`), DES crypt (`-d`), plain text (`-p`),
/// and Icecast's own `user:md5hex` files. The operator re-creates those entries with `htpasswd -B` (the users must
/// set their password again: a hash cannot be converted).
///
/// A check costs one hash (a bcrypt of cost 12 takes about 0.25 s): it runs on the authenticator's hashing queue,
/// never on a network loop (`Authenticator.check`).
package struct HtpasswdFile: Sendable, Equatable {
    /// Hashes by user.
    private let hashes: [[UInt8]: String]
    /// Where it was read from (for messages).
    package let path: String

    package var count: Int { hashes.count }

    /// Why a line cannot be used.
    package struct LineError: Error, Equatable, CustomStringConvertible {
        package let description: String
    }

    /// Reads `lines` (each with where it came from, `FILE:LINE`).
    package init(path: String, lines: [(text: String, place: String)]) throws(LineError) {
        var hashes: [[UInt8]: String] = [:]
        for (text, place) in lines {
            guard let colon = text.firstIndex(of: ":") else {
                throw LineError(description: "\(place): not user:hash")
            }
            let user = Array(text[..<colon].utf8)
            let hash = String(text[text.index(after: colon)...]).trimmingWhitespace()
            guard !user.isEmpty, user.count <= ListenerCredentials.maxBytes else {
                throw LineError(description: "\(place): the user is empty or longer than 1024 bytes")
            }
            if let problem = Self.problem(hash) { throw LineError(description: "\(place): \(problem)") }
            hashes[user] = hash
        }
        self.hashes = hashes
        self.path = path
    }

    /// Why a stored hash is refused; nil when libcrypt verifies it.
    package static func problem(_ hash: String) -> String? {
        let remake = "re-create the entry with htpasswd -B (bcrypt)"
        if hash.hasPrefix("$apr1$") {
            return "Apache MD5 ($apr1$, htpasswd's default -m) is a fast hash libcrypt does not compute: \(remake)"
        }
        if hash.hasPrefix("{SHA}") { return "unsalted SHA-1 ({SHA}, htpasswd -s) is not accepted: \(remake)" }
        if hash.utf8.count == 32, hash.utf8.allSatisfy({ PercentEncoding.hexValue($0) != nil }) {
            return "an unsalted MD5 in hex (an Icecast htpasswd file) is not accepted: \(remake)"
        }
        let known = ["$2y$", "$2b$", "$2a$", "$5$", "$6$", "$y$"]
        guard known.contains(where: { hash.hasPrefix($0) }) else {
            return "not a bcrypt, SHA-crypt or yescrypt hash (DES crypt and plain text are not accepted): \(remake)"
        }
        // libcrypt calls SHA-256-crypt legacy (htpasswd -2 writes it): taken, like every method it still computes.
        let verdict = rr_crypt_checksalt(hash)
        let computes = [rr_crypt_salt_ok, rr_crypt_salt_too_cheap, rr_crypt_salt_legacy].contains(verdict)
        // A whole hash, not just a valid start: hashing with it gives a hash of its own length.
        var output = [CChar](repeating: 0, count: 512)
        guard computes, rr_crypt("", hash, &output, output.count) == 0,
            output.prefix(while: { $0 != 0 }).count == hash.utf8.count
        else {
            return "libcrypt does not take this hash (malformed or cut short): \(remake)"
        }
        return nil
    }

    /// Whether `credentials` match their user's hash (a user not in the file: false, after the same work as a
    /// known one, so the time does not tell which users exist).
    package func verifies(_ credentials: ListenerCredentials) -> Bool {
        let known = hashes[credentials.user]
        let stored = known ?? Self.decoy
        guard !credentials.password.bytes.contains(0) else { return false }
        let phrase = credentials.password.bytes.map { CChar(bitPattern: $0) } + [0]
        var output = [CChar](repeating: 0, count: 512)
        let result = rr_crypt(phrase, stored, &output, output.count)
        guard result == 0, known != nil else { return false }
        let computed = output.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return secretMatches(Array(stored.utf8), computed)
    }

    /// A bcrypt of cost 5 (htpasswd -B's default) of nothing anyone knows: the work done for an unknown user.
    private static let decoy = "$2y$05$abcdefghijklmnopqrstuu5s2v8.iXieOjg/.AySBTTZIIVFJeBui"

    package static func == (lhs: HtpasswdFile, rhs: HtpasswdFile) -> Bool {
        lhs.path == rhs.path && lhs.hashes == rhs.hashes
    }
}
