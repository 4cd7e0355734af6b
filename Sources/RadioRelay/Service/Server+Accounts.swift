import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// A reload's DJ accounts (`ReloadPlan+Accounts`): the HTTP front end takes the new ones at once (the bars of those
/// kept stay), and a set on the air whose credentials were revoked ends, through the station's `killsource`.
extension Server {
    func applyAccounts(_ accounts: [DJAccount]) {
        if let line = ReloadPlan.accountChanges(running: configuration.accounts, new: accounts) { Log.notice(line) }
        http?.setAccounts(accounts)
        configuration.accounts = accounts
        for station in stations {
            guard let user = station.desk.onAir,
                ReloadPlan.onAirRevoked(user, station: station.configuration, accounts: accounts)
            else { continue }
            Log.notice("reload: \(station.name): \(user) may no longer take the station over: the live source is ended")
            if station.desk.commands.submit(.killSource) == nil {
                Log.warning("reload: \(station.name): the station's commands are full: the live source goes on")
            }
        }
    }
}
