import RadioRelaySystem

/// One call to an authentication backend, in Icecast 2.4's wire format: a `POST` of
/// `application/x-www-form-urlencoded` fields, in Icecast's order —
///
/// - `listener_add`: `action`, `server`, `port`, `client`, `mount`, `user`, `pass`, `ip`, `agent`;
/// - `listener_remove`: `action`, `server`, `port`, `client`, `mount`, `user`, `pass`, `duration`, `ip`, `agent`,
///   and, after Icecast's fields (a backend that does not know it ignores it), `reason`: why the listener left.
///
/// `server` and `port` are the public HTTP address (`public_url`'s host when set); `client` is the listener's ID
/// (`ListenerID`, the one the listener list and the access log show); `mount` is the path the listener asked for
/// with its query string (`/live.opus?token=abc`: a token in the stream URL reaches the backend); `ip` is the real
/// client address (after PROXY and `forwarded_from`). Each value is percent-encoded but for RFC 3986's unreserved
/// characters. The listener's credentials also go as HTTP Basic on the call, as Icecast sends them, unless the
/// backend's URL carries its own.
package struct AuthCall: Sendable, Equatable {
    package enum Action: Sendable, Equatable {
        case add
        /// The listener left after `duration` seconds, for `reason`.
        case remove(duration: Int, reason: SessionEnd)
    }

    package var action: Action
    package var server: String
    package var port: Int
    package var client: ListenerID
    package var mount: String
    package var credentials: ListenerCredentials?
    package var ip: String
    package var agent: String

    package init(
        action: Action, server: String, port: Int, client: ListenerID, mount: String,
        credentials: ListenerCredentials?, ip: String, agent: String
    ) {
        self.action = action
        self.server = server
        self.port = port
        self.client = client
        self.mount = mount
        self.credentials = credentials
        self.ip = ip
        self.agent = agent
    }

    /// The form's fields in order, as bytes (the password is the listener's, so the body is a secret: never logged).
    package var fields: [(String, [UInt8])] {
        var fields: [(String, [UInt8])] = [
            ("action", Array((action == .add ? "listener_add" : "listener_remove").utf8)),
            ("server", Array(server.utf8)), ("port", Array(String(port).utf8)),
            ("client", Array(client.description.utf8)), ("mount", Array(mount.utf8)),
            ("user", credentials?.user ?? []), ("pass", credentials?.password.bytes ?? []),
        ]
        if case .remove(let duration, _) = action { fields.append(("duration", Array(String(duration).utf8))) }
        fields += [("ip", Array(ip.utf8)), ("agent", Array(agent.utf8))]
        if case .remove(_, let reason) = action { fields.append(("reason", Array(reason.rawValue.utf8))) }
        return fields
    }

    /// The `POST` body.
    package var body: [UInt8] {
        var body: [UInt8] = []
        for (index, (name, value)) in fields.enumerated() {
            if index > 0 { body.append(UInt8(ascii: "&")) }
            body += Array(name.utf8)
            body.append(UInt8(ascii: "="))
            body += Self.formEncoded(value)
        }
        return body
    }

    /// Percent-encoding of every byte but RFC 3986's unreserved ones (`A–Z a–z 0–9 - . _ ~`).
    package static func formEncoded(_ bytes: [UInt8]) -> [UInt8] {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return out
    }
}

/// Why an authenticated listener's session ended (`listener_remove`'s `reason`).
package enum SessionEnd: String, Sendable, CaseIterable {
    /// It closed, or its connection failed.
    case left
    /// Dropped for reading too slowly.
    case tooSlow = "too_slow"
    /// `max_listener_duration` reached.
    case sessionLimit = "session_limit"
    /// The backend's `icecast-auth-timelimit` reached.
    case timeLimit = "time_limit"
    /// Its station or the server stopped (a reload restarting the station, a stop).
    case stopped
    /// Closed by the admin (`killclient`).
    case kicked
    /// Moved by the admin to another station (`moveclients`), which does not ask this backend.
    case moved
    /// Admitted by the backend, then refused a place (the station or the server full) or never served.
    case notServed = "not_served"
}

/// What a backend's answer to `listener_add` says, read from its status and headers (`read`).
package enum AuthVerdict: Sendable, Equatable {
    /// The admission header was there; `timeLimit`: `icecast-auth-timelimit`'s seconds, if it sent one.
    case admitted(timeLimit: Int?)
    /// An answer without the admission header; `message`: `icecast-auth-message`, shown to the listener.
    case refused(message: String?)
    /// No usable answer (the backend down, too slow, answering garbage or 5xx): `auth_failure` decides.
    case failed(String)

    /// The backend's answer: its final status (0: none came) and headers.
    package static func read(status: Int, headers: ResponseHeaders, header: AuthHeader) -> AuthVerdict {
        guard headers.responses > 0, (100...599).contains(status) else {
            return .failed("no HTTP answer")
        }
        if let value = headers[header.name], value.trimmingWhitespace() == header.value {
            // Whole seconds; anything else (a sign, a fraction, more than Int holds) is no limit, as Icecast's `%u`
            // reads a negative one as about 136 years.
            let text = headers["icecast-auth-timelimit"]?.trimmingWhitespace() ?? ""
            let digits = !text.isEmpty && text.utf8.allSatisfy { (0x30...0x39).contains($0) }
            return .admitted(timeLimit: digits ? Int(text) : nil)
        }
        guard status < 500 else { return .failed("HTTP \(status)") }
        let message = headers["icecast-auth-message"].map { Sanitized.text($0, limit: 200) }
        return .refused(message: message.flatMap { $0.isEmpty ? nil : $0 })
    }
}
