import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// What a reload does to the DJ accounts (`[dj NAME]`): every change applies in place, at the next connection; the
/// bars of the accounts kept stay. A set on the air whose account no longer lets it take that station over (the
/// account removed, or the station taken out of its `stations`) ends, as does a set of user `source` on a station that
/// no longer has `source_password` (`onAirRevoked`); a set whose password or hours changed goes on.
extension ReloadPlan {
    /// The log line of the accounts' changes, or nil when none changed: `reload: DJ accounts: added bob; removed
    /// carol; changed alice (password, hours)` (no secret).
    package static func accountChanges(running: [DJAccount], new: [DJAccount]) -> String? {
        let old = Dictionary(running.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let now = Dictionary(new.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let added = new.map(\.name).filter { old[$0] == nil }
        let removed = running.map(\.name).filter { now[$0] == nil }
        var changed: [String] = []
        for account in new {
            guard let was = old[account.name], was != account else { continue }
            var keys: [String] = []
            if was.password != account.password { keys.append("password") }
            if was.stations != account.stations { keys.append("stations") }
            if was.hours?.text != account.hours?.text { keys.append("hours") }
            if was.hours?.timeZone != account.hours?.timeZone { keys.append("timezone") }
            changed.append("\(account.name) (\(keys.joined(separator: ", ")))")
        }
        let parts = [("added", added), ("removed", removed), ("changed", changed)].compactMap { label, names in
            names.isEmpty ? nil : "\(label) \(names.joined(separator: ", "))"
        }
        return parts.isEmpty ? nil : "reload: DJ accounts: \(parts.joined(separator: "; ")) (in place)"
    }

    /// Whether `user`, on the air at `station`, may no longer take it over under the new accounts and settings.
    package static func onAirRevoked(_ user: SourceUser, station: StationConfiguration, accounts: [DJAccount]) -> Bool {
        switch user {
        case .station: station.sourcePassword == nil
        case .dj(let name): !accounts.contains { $0.name == name && $0.mayTakeOver(station.name) }
        }
    }
}
