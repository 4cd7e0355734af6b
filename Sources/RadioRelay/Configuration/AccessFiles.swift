import Foundation
import RadioRelayNet
import RadioRelaySystem

/// The values of `allow`, `deny` and `deny_agents`: written in the key (`10.0.0.0/8, 2001:db8::/32`), or `@FILE`,
/// one item per line (`#` starts a comment, blank lines are skipped; `\r\n` line ends and a byte order mark are read as
/// in the configuration file, `ConfigFileLines.lines`). A file is read when the configuration is
/// read, so a reload reads it again; a problem names the file and the line. `none` is an empty list (a station
/// clearing a `[server]` default).
enum AccessFiles {
    /// The largest file read: a country's address blocks are far smaller.
    static let maxFileBytes = 32 << 20

    /// The items of `text`: its own comma-separated items, or its file's lines, each with where it came from.
    static func items(_ text: String, commas: Bool = true) -> Result<[(item: String, place: String)], AccessFileError> {
        let trimmed = text.trimmingBlanks()
        if trimmed == "none" { return .success([]) }
        guard trimmed.hasPrefix("@") else {
            guard commas else { return .failure(AccessFileError("give a file: @/path/to/list")) }
            let items = trimmed.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingBlanks() }
            return .success(items.map { ($0, "") })
        }
        let path = String(trimmed.dropFirst())
        guard path.hasPrefix("/") else { return .failure(AccessFileError("@\(path): give the file's absolute path")) }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            return .failure(AccessFileError("@\(path): cannot be read"))
        }
        defer { try? handle.close() }
        let data: Data
        do {
            data = try handle.read(upToCount: maxFileBytes + 1) ?? Data()
        } catch {
            return .failure(AccessFileError("@\(path): \(error.localizedDescription)"))
        }
        guard data.count <= maxFileBytes else {
            return .failure(AccessFileError("@\(path): larger than \(maxFileBytes >> 20) MiB"))
        }
        guard let content = String(data: data, encoding: .utf8) else {
            return .failure(AccessFileError("@\(path): not UTF-8 text"))
        }
        var items: [(String, String)] = []
        for (number, line) in ConfigFileLines.lines(content).enumerated() {
            // A comment starts at the first `#` scalar (a `#` with a combining mark after it is one Character).
            let text = Substring(line.unicodeScalars.prefix { $0 != "#" }).trimmingBlanks()
            if !text.isEmpty { items.append((text, "\(path):\(number + 1)")) }
        }
        return .success(items)
    }

    /// An address list: networks in CIDR notation (IPv4 and IPv6).
    static func addresses(_ text: String) -> Result<AddressSet, AccessFileError> {
        items(text).flatMap { items in
            guard items.count <= AddressSet.limit else {
                return .failure(AccessFileError("more than \(AddressSet.limit) networks"))
            }
            var ranges: [AddressRange] = []
            for (item, place) in items {
                guard let range = AddressRange(item) else {
                    let at = place.isEmpty ? "" : "\(place): "
                    return .failure(
                        AccessFileError("\(at)\(Sanitized.text(item, limit: 64)) is not an address or ADDR/BITS"))
                }
                ranges.append(range)
            }
            return .success(AddressSet(ranges))
        }
    }

    /// User-agent patterns, from a file only (an agent may hold a comma).
    static func agents(_ text: String) -> Result<AgentPatterns, AccessFileError> {
        items(text, commas: false).flatMap { items in
            for (_, place) in items.filter({ !(1...AgentPatterns.maxLength).contains($0.item.utf8.count) }) {
                return .failure(AccessFileError("\(place): a pattern is 1 to \(AgentPatterns.maxLength) bytes"))
            }
            guard let patterns = AgentPatterns(items.map(\.item)) else {
                return .failure(AccessFileError("more than \(AgentPatterns.limit) patterns"))
            }
            return .success(patterns)
        }
    }
}

extension AccessFiles {
    /// Country codes (`FR, DE`), uppercased; `unknown` for an address the database does not know.
    static func countries(_ text: String) -> Result<Set<String>, AccessFileError> {
        items(text).flatMap { items in
            var codes: Set<String> = []
            for (item, place) in items {
                let code =
                    item.lowercased() == AccessList.unknownCountry ? AccessList.unknownCountry : item.uppercased()
                guard
                    code == AccessList.unknownCountry
                        || (code.utf8.count == 2
                            && code.utf8.allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) })
                else {
                    let at = place.isEmpty ? "" : "\(place): "
                    return .failure(
                        AccessFileError("\(at)\(Sanitized.text(item, limit: 32)) is not a two-letter country code"))
                }
                codes.insert(code)
            }
            return .success(codes)
        }
    }

    /// A country database, opened now (`none`: no database).
    static func database(_ text: String) -> Result<CountryDatabase?, AccessFileError> {
        let path = text.trimmingBlanks()
        if path == "none" { return .success(nil) }
        guard path.hasPrefix("/") else {
            return .failure(AccessFileError("\(path): give the database's absolute path"))
        }
        do {
            return .success(try CountryDatabase(path: path))
        } catch {
            return .failure(AccessFileError("\(error)"))
        }
    }
}

extension AccessFiles {
    /// The most overflow URLs, and the longest one.
    static let maxOverflow = 16
    static let maxURLBytes = 1024

    /// The authority (`host[:port]`, with any userinfo) of an absolute `http://` or `https://` URL of printable
    /// ASCII, at most `maxURLBytes`, with a host; nil for anything else. The one check of the URLs a setting names
    /// (overflow targets, authentication backends).
    static func httpAuthority(_ url: String) -> Substring? {
        let lower = url.lowercased()
        let rest = lower.hasPrefix("http://") ? url.dropFirst(7) : lower.hasPrefix("https://") ? url.dropFirst(8) : nil
        guard let rest, (1...maxURLBytes).contains(url.utf8.count),
            url.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }),
            let authority = rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).first,
            !authority.isEmpty
        else { return nil }
        return authority
    }

    /// Overflow URLs: absolute `http://` or `https://` URLs with a host, comma-separated (`none`: none).
    static func overflowURLs(_ text: String) -> Result<[String], AccessFileError> {
        let trimmed = text.trimmingBlanks()
        if trimmed == "none" { return .success([]) }
        let urls = trimmed.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingBlanks() }
        guard urls.count <= maxOverflow else { return .failure(AccessFileError("more than \(maxOverflow) URLs")) }
        for url in urls {
            guard let host = httpAuthority(url) else {
                return .failure(
                    AccessFileError(
                        "\(Sanitized.text(url, limit: 64)) is not an absolute http:// or https:// URL with a host "
                            + "(printable ASCII, no spaces, at most \(maxURLBytes) bytes)"))
            }
            guard !host.contains("@") else {
                return .failure(
                    AccessFileError(
                        "\(Redaction.text(url)): no credentials in an overflow URL: every listener sent there sees it"))
            }
        }
        return .success(urls)
    }
}

/// Why an access list's value cannot be read.
struct AccessFileError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension Result {
    /// The failure's text, nil on success: an option's refusal.
    var failureText: String? {
        if case .failure(let error) = self { return "\(error)" }
        return nil
    }

    /// The value read, nil when the text was refused. An optional value stays one level down (`none` is
    /// `.some(nil)`), where `try? get()` would flatten it into a refusal.
    var accepted: Success? {
        if case .success(let value) = self { return value }
        return nil
    }
}
