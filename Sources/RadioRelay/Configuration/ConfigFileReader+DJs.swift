import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// `[dj NAME]`: a presenter's account for live sources, checked here as a whole, every problem at its line: a name by
/// `DJAccount.nameRule` that is neither another DJ's nor the admin's user (`admin_user`), a `password` (a credential
/// allowed), `stations` that the file has (an edge cannot take a live source: its station's own check says so),
/// `hours` and `timezone` as `AirHours` reads them.
extension ConfigFileReader {
    /// The accounts of the file's `[dj NAME]` sections that passed every check, and every station a section names
    /// (whether or not its account passed: a station is not also reported "without upstream" for a broken account).
    /// - Parameters:
    ///   - stationNames: the file's station sections with valid names.
    ///   - adminUser: `[server] admin_user`, which no DJ may share.
    mutating func readAccounts(_ lines: ConfigFileLines, stationNames: Set<String>, adminUser: String)
        -> (accounts: [DJAccount], stations: Set<String>)
    {
        let options = OptionSpecification.accountOptions
        var accounts: [DJAccount] = []
        var named: Set<String> = []
        var firstLines: [String: Int] = [:]
        for section in lines.sections {
            guard case .dj(let name, let validName) = section.header else { continue }
            let label = "[dj \(name)]"
            var settings = DJSettings()
            var seen: [String: Int] = [:]
            var clean = validName
            for entry in section.entries where firstTime(entry, &seen) {
                guard let option = options.first(where: { $0.key == entry.key }), let setting = option.accountSetting
                else {
                    problems.add(entry.line, Self.unknownKey(entry.key, in: label, keys: options.map(\.key)))
                    clean = false
                    continue
                }
                guard let value = entry.value,
                    set(entry.key, value, line: entry.line, option, among: options, { setting($0, &settings) }) != nil
                else {
                    clean = false
                    continue
                }
            }
            if seen.count < section.entries.count { clean = false }  // a key given twice
            named.formUnion(settings.stations)
            // A section whose name is refused is not also told what it lacks.
            for (key, accepts) in [("password", SourcePassword.accepts), ("stations", "the stations' names")]
            where validName && seen[key] == nil {
                problems.add(section.line, "\(label) has no \(key): add \(key) = \(accepts)")
                clean = false
            }
            for station in settings.stations where !stationNames.contains(station) {
                problems.add(
                    seen["stations"] ?? section.line,
                    "dj \(name): no [station \(station)] in the file: add it, or take it out of stations")
                clean = false
            }
            guard validName else { continue }
            if let first = firstLines[name] {
                problems.add(section.line, "duplicate dj \(name) (the first is at line \(first)): rename one")
                continue
            }
            firstLines[name] = section.line
            if name == adminUser {
                problems.add(
                    section.line, "dj \(name): the admin's user name (admin_user): give the DJ another name")
                continue
            }
            guard clean, let account = settings.account(name: name) else { continue }
            accounts.append(account)
        }
        return (accounts, named)
    }
}
