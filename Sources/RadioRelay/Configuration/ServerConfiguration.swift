import Glibc
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// Everything a server runs from, as one value: its own settings (`ServerSettings`) and its stations (each with its
/// renditions). The command line (`ServeOptions.configuration`) and a config file (`load`, `parse`) both produce it,
/// every key and flag read through the one option table (`OptionSpecification`); `Server` is built from it, and a
/// reload compares two of them (`ReloadPlan`).
///
/// A config file (`config/radio-relay.conf` is the commented example; the syntax is in `ConfigFileLines`) has a
/// `[server]` section — the server keys of the table, and the station keys marked as server defaults, which every
/// station inherits unless it sets its own — and one `[station NAME]` per station, whose keys are `serve`'s station
/// flags with `_` for `-`, read by the same value readers, so a key accepts what its flag accepts. `upstream` is
/// required, and may be `@credential:NAME` (see `Credentials`).
///
/// Reading does no network I/O: it reads the file and any credentials, nothing else.
package struct ServerConfiguration: Sendable, Equatable {
    package var server = ServerSettings()
    /// In the order of the file, each valid (`StationConfiguration.validate()`), no two on overlapping addresses.
    package var stations: [StationConfiguration] = []
    /// The DJ accounts (`[dj NAME]`), each checked against the stations (`ConfigFileReader.readAccounts`).
    package var accounts: [DJAccount] = []

    package init(server: ServerSettings = ServerSettings(), stations: [StationConfiguration] = []) {
        self.server = server
        self.stations = stations
    }

    /// Reads and checks the config file at `path`.
    /// - Parameter credentialsDirectory: where `@credential:NAME` values are read; systemd's
    ///   `$CREDENTIALS_DIRECTORY` by default.
    /// - Throws: `ConfigFileError` with every problem found, each naming `path` and the line.
    package static func load(path: String, credentialsDirectory: String? = environmentCredentialsDirectory)
        throws(ConfigFileError) -> ServerConfiguration
    {
        let bytes: [UInt8]
        do {
            bytes = try SmallFile.read(path, limit: 1 << 20)
        } catch {
            switch error {
            case .tooLarge: throw ConfigFileError(["\(path): larger than 1 MiB: is this the config file?"])
            case .system(let error):
                throw ConfigFileError(["\(path): cannot read: \(String(cString: strerror(error.errno)))"])
            }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ConfigFileError(["\(path): not UTF-8 text"])
        }
        return try parse(text, file: path, credentialsDirectory: credentialsDirectory)
    }

    /// `$CREDENTIALS_DIRECTORY`, set by systemd when the unit has `LoadCredential=`.
    package static var environmentCredentialsDirectory: String? {
        getenv("CREDENTIALS_DIRECTORY").map { String(cString: $0) }
    }

    /// Checks `text` as the content of config file `file` (the name only appears in messages).
    package static func parse(_ text: String, file: String, credentialsDirectory: String?) throws(ConfigFileError)
        -> ServerConfiguration
    {
        var reader = ConfigFileReader(file: file, credentialsDirectory: credentialsDirectory)
        return try reader.read(text)
    }

    /// Every output's listener limit, station by station, rendition by rendition (0: no limit).
    package var listenerLimits: [Int] {
        stations.flatMap { $0.outputSettings.map(\.broadcaster.maxListeners) }
    }
}

/// The server's own settings: a config file's `[server]` section, or the command line's server flags. Each is an
/// option of the table (`OptionSpecification.serverOptions`) with its reader, its default here, and its reload rule.
package struct ServerSettings: Sendable, Equatable {
    /// Where the status endpoint listens; nil when `status = off`. A config file has one by default; a server run
    /// from flags only with `--status` (`commandLine`).
    package var status: ListenAddress? = Self.defaultStatus
    /// Where the status endpoint listens unless the configuration says otherwise (and where `radio-relay status`
    /// looks first).
    package static let defaultStatus = ListenAddress(host: "127.0.0.1", port: 8080)
    package var logLevel = Log.Priority.info
    /// Where HTTP listeners connect (every station's mount, `/`, events); nil (the default, or `http = off`):
    /// raw TCP only.
    package var http: ListenAddress?
    /// HTTP connections start with a PROXY header from a load balancer (`http_proxy_protocol = yes`).
    package var httpProxyProtocol = false
    /// The balancers whose PROXY header the HTTP address believes (`http_proxy_from`); nil: loopback only.
    package var httpProxyFrom: TrustedProxies?
    /// The reverse proxies in HTTP mode whose `forwarded_header` names the client (`forwarded_from`); nil: none, the
    /// header is never believed.
    package var forwardedFrom: TrustedProxies?
    /// The header those proxies write (`forwarded_header`): `X-Forwarded-For` or `Forwarded`.
    package var forwardedHeader = ForwardedFor.Header.xForwardedFor
    /// How the HTTP address finds a request's client behind them; nil without `forwarded_from`.
    package var forwarding: ForwardedFor? {
        forwardedFrom.map { ForwardedFor(proxies: $0, header: forwardedHeader) }
    }
    /// Where listeners reach the HTTP address (`public_url`); nil: the request's `Host`.
    package var publicURL: PublicURL?
    /// Who may read the status endpoint: its bearer token (`status_token`) and host names (`status_hosts`).
    package var statusAccess = StatusAccess()
    /// The admin API's user (`admin_user`) and password (`admin_password`; nil: no admin).
    package var adminUser = AdminCredentials.defaultUser
    package var adminPassword: AdminPassword?
    /// The network loops shared by every output (`network_threads`); nil: auto (the CPUs it may use).
    package var networkThreads: Int?
    /// Where a line per listener goes when it leaves (`access_log`, `AccessLog`); nil: nowhere.
    package var accessLog: String?
    /// What each station starts from before its own keys: the server-wide defaults (listener limits, balancers).
    package var stationDefaults = StationConfiguration()

    package init() {}

    /// A server run from flags: no status endpoint unless `--status` asks for one.
    package static var commandLine: ServerSettings {
        var settings = ServerSettings()
        settings.status = nil
        return settings
    }
}

/// An IP literal and a port: `127.0.0.1:8080`, `[::1]:8080`.
package struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    package var host: String
    package var port: Int

    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `ADDR:PORT`, with brackets around an IPv6 address; nil unless the host is an IP literal and the port is
    /// 1 to 65535.
    package init?(parsing text: String) {
        guard let parsed = HostPort(parsing: text), Values.address(parsed.host) != nil else { return nil }
        self.init(host: parsed.host, port: parsed.port)
    }

    /// `PORT` alone (every address: `0.0.0.0`) or `ADDR:PORT` as above.
    package init?(parsingPortOrAddress text: String) {
        if let port = Port.parse(text) {
            self.init(host: "0.0.0.0", port: port)
        } else {
            self.init(parsing: text)
        }
    }

    package var description: String { HostPort(host: host, port: port).description }

    /// The socket address to bind; nil unless the host is an IP literal.
    package var socketAddress: SocketAddress? { SocketAddress(host: host, port: UInt16(clamping: port)) }
}
