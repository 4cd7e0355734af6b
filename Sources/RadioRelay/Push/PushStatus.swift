import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// What one push shows the outside (`/status.json`, tests): written by its thread, read through `IcecastPush.status`.
package struct PushStatus: Sendable, Equatable {
    package enum State: String, Sendable {
        /// Connecting, or connected and waiting for Icecast to accept the source.
        case connecting
        /// Icecast accepted the source; pages are flowing.
        case connected
        /// The last connection failed; the next attempt waits for its reconnect delay.
        case retrying
    }

    /// The target with its password replaced by `***`.
    package var target: String
    package var state = State.connecting
    /// The last failure, kept after the push is back.
    package var lastError: String?
    /// Bytes handed to Icecast connections, all connections together.
    package var bytesSent = 0
    /// Connections that failed or ended, each followed by a new attempt.
    package var reconnects = 0

    package init(target: String) { self.target = target }
}

/// What a push needs from its station, fixed for the push's life: a reload that changes any of it starts the push
/// anew (`Station.updatePushes`), one that does not leaves its connection alone.
struct PushSettings: Sendable, Equatable {
    var station: String
    var target: IcecastTarget
    var info: StationInfo
    /// Seconds behind the newest page before the connection is given up (the station's `max_lag`).
    var maxLag: Double
    /// Reconnect delays, from the first to the last (the station's, with `reconnect_max`).
    var reconnectDelay: ClosedRange<Double>
    var connectTimeout: Int
    /// The station's `push_ca` for an `icecasts://` target (nil for a plain one, which a change of it leaves alone).
    var caFile: String?
    /// Keep-alive and `TCP_USER_TIMEOUT` on the connection (the station's `peer_timeout`).
    var peerTimeout: PeerTimeout

    init(_ station: StationConfiguration, target: IcecastTarget) {
        self.station = station.name
        self.target = target
        info = station.info
        maxLag = station.broadcaster.maxLag
        reconnectDelay = station.reconnectDelay
        connectTimeout = station.connectTimeout
        caFile = target.tls ? station.pushCA : nil
        peerTimeout = PeerTimeout(seconds: station.peerTimeout)
    }

    /// The `ice-*` headers: the station's info where set (`Sanitized`, so no value can end a header line), and
    /// `ice-public: 0` (sent by `IcecastUpload` itself): listing a stream in a public directory is Icecast's
    /// operator's decision, made in its mount settings.
    var iceHeaders: [String] {
        let fields = [
            ("ice-name", info.displayName), ("ice-description", info.description), ("ice-genre", info.genre),
            ("ice-url", info.url),
        ]
        return fields.compactMap { name, value in
            guard let value else { return nil }
            let clean = Sanitized.text(value)
            return clean.isEmpty ? nil : "\(name): \(clean)"
        }
    }
}
