import Foundation
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// The keys of a `[dj NAME]` section: a presenter's account for live sources (`DJAccount`). Each applies in place on a
/// reload: the next connection is checked against the new account (`ReloadPlan.accountChanges`; a set on the air
/// whose account no longer lets it take that station over ends, `Server+Accounts`).
extension OptionSpecification {
    static let accountOptions: [OptionSpecification] = [djPassword, djStations, djHours, djTimeZone]

    /// `password`: what the DJ's source client sends with user NAME.
    static let djPassword = OptionSpecification(
        name: "password", placeholder: "PASSWORD", summary: "the DJ's password (user: the section's NAME)",
        accepts: SourcePassword.accepts,
        target: .account({ text, settings in
            guard let password = SourcePassword(text) else { return false }
            settings.password = password
            return true
        }), isFlag: false, acceptsCredential: true, reload: .inPlace, quoted: { _ in Redaction.mask })

    /// `stations`: the stations the DJ may take over.
    static let djStations = OptionSpecification(
        name: "stations", placeholder: "NAME, …", summary: "the stations the DJ may take over, comma-separated",
        accepts: "station names (\(StationNames.rule)), comma-separated, each once",
        target: .account({ text, settings in
            guard let names = DJSettings.stations(text) else { return false }
            settings.stations = names
            return true
        }), isFlag: false, reload: .inPlace)

    /// `hours`: when the DJ may connect (default: at any time).
    static let djHours = OptionSpecification(
        name: "hours", placeholder: "DAYS HH:MM-HH:MM, …", summary: "when the DJ may connect (default: at any time)",
        accepts: AirHours.accepts,
        target: .account({ text, settings in
            guard case .success(let hours) = AirHours.windows(text) else { return false }
            settings.hours = hours
            return true
        }), isFlag: false, reload: .inPlace,
        refusal: { text in
            if case .failure(let problem) = AirHours.windows(text) {
                return "\(problem.message): use \(AirHours.accepts)"
            }
            return nil
        })

    /// `timezone`: the zone `hours` are in.
    static let djTimeZone = OptionSpecification(
        name: "timezone", placeholder: "ZONE", summary: "the time zone of hours (default UTC)",
        accepts: AirHours.zoneAccepts,
        target: .account({ text, settings in
            guard let zone = AirHours.zone(text) else { return false }
            settings.timeZone = zone
            return true
        }), isFlag: false, reload: .inPlace)
}

/// A `[dj NAME]` section's values as read, before they are checked as a whole into a `DJAccount`.
struct DJSettings: Sendable {
    var password: SourcePassword?
    var stations: [String] = []
    var hours: (windows: [AirHours.Window], text: String)?
    var timeZone = TimeZone(identifier: "UTC") ?? TimeZone.gmt

    /// At most this many stations in one account.
    static let maxStations = 256

    /// `a, b, c`: station names, each once.
    static func stations(_ text: String) -> [String]? {
        let names = text.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self).trimmingWhitespace()
        }
        guard (1...maxStations).contains(names.count), names.allSatisfy(StationNames.isValid),
            Set(names).count == names.count
        else { return nil }
        return names
    }

    /// The account, when the section gave a password and stations.
    func account(name: String) -> DJAccount? {
        guard let password, !stations.isEmpty else { return nil }
        let hours = hours.map { AirHours(windows: $0.windows, timeZone: timeZone, text: $0.text) }
        return DJAccount(name: name, password: password, stations: stations, hours: hours)
    }
}
