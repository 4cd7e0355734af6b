import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// The admin's account for Icecast's admin API on the HTTP address (`/admin/…`, `AdminGate`).
extension OptionSpecification {
    /// `[server] admin_user`: the user name the admin's tools send (HTTP Basic).
    static let adminUser = OptionSpecification(
        name: "admin-user", placeholder: "NAME",
        summary: "the user of Icecast's admin API, /admin/ on the HTTP address (default admin)",
        accepts: AdminCredentials.userAccepts,
        target: server(AdminCredentials.user, { $0.adminUser = $1 }, value: \.adminUser, shown: { $0 }),
        isFlag: false, reload: .inPlace)

    /// `[server] admin_password`: its password; none: no admin, only live sources' own calls pass.
    static let adminPassword = OptionSpecification(
        name: "admin-password", placeholder: "PASSWORD",
        summary: "the password of Icecast's admin API (default: none, no admin calls but sources' own)",
        accepts: AdminPassword.accepts,
        target: server(
            AdminPassword.init, { $0.adminPassword = $1 }, value: \.adminPassword,
            shown: { $0 == nil ? "none" : "set" }),
        isFlag: false, acceptsCredential: true, reload: .inPlace)
}

extension ServerSettings {
    /// The admin's account, when `admin_password` is set.
    package var admin: AdminCredentials? { adminPassword.map { AdminCredentials(user: adminUser, password: $0) } }

    /// Who may read the status endpoint: `statusAccess`, and the admin's credentials where its token is asked for.
    package var statusGate: StatusAccess {
        var access = statusAccess
        access.admin = admin
        return access
    }
}
