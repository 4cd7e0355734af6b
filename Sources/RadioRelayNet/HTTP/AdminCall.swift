import RadioRelaySystem

/// One call of Icecast 2.4's admin API (`/admin/COMMAND?…`), as a value: what it asks and of which mount. Parsed from
/// the request's path and query alone (`AdminCall.parse`); who may make it is `AdminGate`'s decision.
package struct AdminCall: Sendable, Equatable {
    package enum Command: String, Sendable, CaseIterable {
        /// The `icestats` document: global counters and a `source` per mount.
        case stats
        /// The mounts, with their listeners and connected time.
        case listmounts
        /// A mount's listeners (`mount=`).
        case listclients
        /// Closes one listener (`mount=`, `id=`).
        case killclient
        /// Moves a mount's listeners (`mount=`, `destination=`; `id=` for one, our addition).
        case moveclients
        /// Sets the title (`mount=`, `mode=updinfo`, `song=` or `artist=`/`title=`).
        case metadata
        /// Ends the live source (`mount=`; `ban=SECONDS`, our addition).
        case killsource

        /// Whether the call changes what runs: refused from another site's page (`AdminGate`).
        package var changesState: Bool {
            switch self {
            case .stats, .listmounts, .listclients: false
            case .killclient, .moveclients, .metadata, .killsource: true
            }
        }

        /// Whether a live source's own credentials may make it, for its own mount (a deliberate restriction:
        /// Icecast lets a source pass every mount-level command).
        package var sourceMayCall: Bool { self == .metadata || self == .killsource }

        /// Whether it names a mount (`mount=` is needed).
        package var needsMount: Bool { self != .stats && self != .listmounts }
    }

    /// How the answer is written: Icecast's XML, or the same fields as JSON (`format=json`, our addition).
    package enum Format: Sendable, Equatable {
        case xml
        case json
    }

    package var command: Command
    package var format = Format.xml
    /// `mount=`, with a leading `/` added when it lacks one.
    package var mount: String?
    package var destination: String?
    /// `id=`: nil when absent; `.invalid` when present and not a listener number.
    package var id: Parameter<ListenerID>?
    /// The longest bar `killsource` sets: a week.
    package static let maxBan = 7 * 86_400
    /// `ban=` seconds, for `killsource`.
    package var ban: Parameter<Int>?
    /// Every parameter, percent-decoded (for `metadata`'s fields).
    package var parameters: [String: [UInt8]]

    /// A parameter that was sent: its value, or that it was not one.
    package enum Parameter<Value: Sendable & Equatable>: Sendable, Equatable {
        case value(Value)
        case invalid
    }

    /// The call a request makes, or nil when its path names no command this server knows.
    package static func parse(path: String, query: String?) -> AdminCall? {
        parse(path: path, parameters: SourceRules.parameters(query))
    }

    /// The call of `path` with these parameters: a query's, or the admin page's form (`AdminForm`), which are the
    /// same fields in a request body.
    package static func parse(path: String, parameters: [String: [UInt8]]) -> AdminCall? {
        guard path.hasPrefix("/admin/") else { return nil }
        var name = path.dropFirst("/admin/".utf8.count)
        // `/admin/stats.xml` is Icecast's other spelling of `stats`.
        if name.hasSuffix(".xml") { name = name.dropLast(4) }
        guard let command = Command(rawValue: String(name)) else { return nil }
        func text(_ key: String) -> String? {
            guard let bytes = parameters[key], !bytes.isEmpty else { return nil }
            return String(decoding: bytes, as: UTF8.self)
        }
        func mount(_ key: String) -> String? { text(key).map { $0.hasPrefix("/") ? $0 : "/" + $0 } }
        var call = AdminCall(command: command, parameters: parameters)
        call.format = text("format")?.lowercased() == "json" ? .json : .xml
        call.mount = mount("mount")
        call.destination = mount("destination")
        call.id = parameters["id"].map {
            ListenerID(Substring(decoding: $0, as: UTF8.self)).map { .value($0) } ?? .invalid
        }
        call.ban = parameters["ban"].map { bytes in
            let text = String(decoding: bytes, as: UTF8.self)
            guard text.utf8.count <= 9, let seconds = Int(text), seconds >= 0 else { return .invalid }
            return .value(seconds)
        }
        return call
    }
}
