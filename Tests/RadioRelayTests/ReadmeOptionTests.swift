import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay

/// The README says what the option table holds: every `serve` flag is a row of its option table (and no row names
/// a flag that does not exist), and its lists of the `[server]` keys a reload applies in place and at a process
/// restart are the table's rules. A new option without its README line fails here.
@Suite struct ReadmeOptionTests {
    static func readme() throws -> String {
        let url = Fixture.directory.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("README.md")
        return try String(contentsOf: url, encoding: .utf8)
    }

    /// The `--name`s of the rows of the first `| option | meaning | default |` table (the serve options).
    static func tableFlags(_ text: String) -> Set<String> {
        var names: Set<String> = []
        var inTable = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("| option | meaning | default |") {
                if !names.isEmpty { break }
                inTable = true
                continue
            }
            guard inTable else { continue }
            guard line.hasPrefix("|") else { break }
            if line.hasPrefix("|---") { continue }
            let first = line.split(separator: "|").first ?? ""
            for word in first.split(separator: "`") where word.hasPrefix("--") {
                names.insert(String(word.dropFirst(2).prefix { $0.isLetter || $0.isNumber || $0 == "-" }))
            }
        }
        return names
    }

    /// The backticked keys after `marker` up to the next `;` or `.` that ends the list.
    static func listedKeys(_ text: String, after marker: String) -> Set<String>? {
        let flat = text.replacingOccurrences(of: "\n  ", with: " ")
        guard let range = flat.range(of: marker) else { return nil }
        let rest = flat[range.upperBound...]
        let end = rest.firstIndex { $0 == ";" || $0 == "." } ?? rest.endIndex
        let list = rest[..<end].replacingOccurrences(of: #"\([^)]*\)"#, with: "", options: .regularExpression)
        return Set(list.split(separator: "`").enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) })
    }

    @Test func everyServeFlagHasItsRow() throws {
        let listed = Self.tableFlags(try Self.readme())
        let flags = Set(OptionSpecification.serve.map(\.name))
        #expect(flags.count > 40)
        #expect(flags.subtracting(listed).isEmpty, "options missing from README's table: \(flags.subtracting(listed))")
        let unknown = listed.subtracting(flags).subtracting(["config"])
        #expect(unknown.isEmpty, "README's table names options that do not exist: \(unknown)")
    }

    @Test func theServerKeysReloadRulesAreTheTables() throws {
        let text = try Self.readme()
        let inPlace = try #require(Self.listedKeys(text, after: "A reload applies these `[server]` keys in place:"))
        let restart = try #require(Self.listedKeys(text, after: "these only at a restart of the process"))
        let server = OptionSpecification.serverOptions
        #expect(inPlace == Set(server.filter { $0.reload == .inPlace }.map(\.key)), "\(inPlace)")
        #expect(restart == Set(server.filter { $0.reload == .restartsProcess }.map(\.key)), "\(restart)")
        #expect(inPlace.contains("public_url"))
    }
}
