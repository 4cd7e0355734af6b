import RadioRelaySystem

/// What the admin page shows of a station beyond its mounts: its inputs and their states, the force, the live
/// source on the air and the last switches, as plain values (`HTTPMounts.adminView`: the station's status, read
/// once per page).
package struct AdminStationView: Sendable, Equatable {
    package struct Input: Sendable, Equatable {
        package var name: String
        /// `http`, `file`, `live`, … (`InputKind`).
        package var kind: String
        /// `playing`, `standby`, … (`InputState.Phase`).
        package var state: String
        package var reason: String?
        /// Wall-clock seconds since it is in this state.
        package var since: Double
        package var title: String?

        package init(
            name: String, kind: String, state: String, reason: String? = nil, since: Double = 0, title: String? = nil
        ) {
            (self.name, self.kind, self.state) = (name, kind, state)
            (self.reason, self.since, self.title) = (reason, since, title)
        }
    }

    /// The live source client on the air.
    package struct Source: Sendable, Equatable {
        package var address: String
        package var userAgent: String?
        /// Wall-clock seconds when it connected.
        package var since: Double

        package init(address: String, userAgent: String?, since: Double) {
            (self.address, self.userAgent, self.since) = (address, userAgent, since)
        }
    }

    /// One change of the input that plays.
    package struct Switch: Sendable, Equatable {
        /// Wall-clock seconds.
        package var at: Double
        package var from: String
        package var to: String
        package var reason: String

        package init(at: Double, from: String, to: String, reason: String) {
            (self.at, self.from, self.to, self.reason) = (at, from, to, reason)
        }
    }

    package var name: String
    /// In priority order.
    package var inputs: [Input] = []
    package var playing: String?
    package var forced: String?
    /// Whether it takes live sources (then it has a live input and a source may be on the air).
    package var takesSources = false
    package var source: Source?
    /// The newest last.
    package var switches: [Switch] = []

    package init(name: String) { self.name = name }
}
