import RadioRelayMedia
import RadioRelaySystem

/// Where a station takes its live source: the HTTP front end checks a source's credentials against it and hands an
/// accepted connection over; the station's pipeline takes it from here, and gives the desk back when the source
/// ends. One source at a time: the desk is `occupied` from the hand-over until the pipeline is done with it, so a
/// second source is refused 403 whatever the timing. The admin calls a source uses leave their requests here
/// for the pipeline: a title (`/admin/metadata`), and `killsource` on the station's `CommandQueue`. Shared between the front end's thread, the
/// pipeline's and status readers, under one lock.
package final class SourceDesk: Sendable {
    private struct State {
        var password: SourcePassword?
        /// DJ accounts may take the station over (`[dj NAME]` sections that list it).
        var accounts = false
        var paths: [String] = []
        var occupied = false
        var arrival: Handoff<LiveSource>?
        var title: String?
        /// The source on the air's `ice-*` fields (status shows the rest from the pipeline's `LiveSource`).
        var info: StationInfo?
        /// Who the source on the air is (the station's `source` or a DJ).
        var user: SourceUser?
        /// When the source on the air connected (wall-clock seconds).
        var connectedAt: Double?
        /// Until when live sources are refused (monotonic seconds): an admin's `killsource` with `ban=`.
        var barredUntil = -Double.infinity
        var timeout = 10
    }

    package let station: String
    private let state: LockedBox<State>
    /// The station's commands (its pipeline takes them): the admin calls' `killsource` goes there.
    package let commands: CommandQueue

    package init(
        station: String, password: SourcePassword?, accounts: Bool = false, paths: [String], timeout: Int,
        commands: CommandQueue = CommandQueue()
    ) {
        self.station = station
        self.commands = commands
        state = LockedBox(State(password: password, accounts: accounts, paths: paths, timeout: timeout))
    }

    /// The settings after a reload (a source on the air goes on; the new password applies to the next one).
    package func update(password: SourcePassword?, accounts: Bool, paths: [String], timeout: Int) {
        state.withLock {
            $0.password = password
            $0.accounts = accounts
            $0.paths = paths
            $0.timeout = timeout
        }
    }

    /// The station's `source_password` (nil: user `source` cannot connect).
    package var password: SourcePassword? { state.withLock { $0.password } }
    /// Whether the station takes live sources: with `source_password`, or DJ accounts that list it.
    package var takesSources: Bool { state.withLock { $0.password != nil || $0.accounts } }
    /// The station as `SourceGate` checks a source's credentials against it.
    package var gateStation: SourceGate.Station { SourceGate.Station(name: station, password: password) }
    /// Who the source on the air is; nil: none is.
    package var onAir: SourceUser? { state.withLock { $0.occupied ? $0.user : nil } }
    /// The paths a source may use: `/NAME` and the station's own mounts.
    package var paths: [String] { state.withLock { $0.paths } }
    /// Seconds without a byte before a source counts as gone (`source_timeout`).
    package var timeout: Int { state.withLock { $0.timeout } }
    package var isOccupied: Bool { state.withLock { $0.occupied } }
    /// What the source on the air says of itself (`ice-name`, …): shown where the station sets nothing.
    package var liveInfo: StationInfo? { state.withLock { $0.info } }
    /// When the source on the air connected (wall-clock seconds); nil: none is.
    package var connectedAt: Double? { state.withLock { $0.connectedAt } }

    /// Hands an accepted source to the station; false (and the source is not taken) when one is there already.
    package func deliver(_ source: Handoff<LiveSource>, info: StationInfo, user: SourceUser = .station) -> Bool {
        state.withLock {
            guard !$0.occupied else { return false }
            $0.occupied = true
            $0.user = user
            $0.arrival = source
            $0.title = nil
            $0.info = info
            $0.connectedAt = wallClockNow()
            return true
        }
    }

    // MARK: The pipeline's side

    /// The source handed over since the last call.
    package func takeArrival() -> LiveSource? {
        state.withLock { state -> Handoff<LiveSource>? in
            defer { state.arrival = nil }
            return state.arrival
        }?.value
    }

    /// The source ended (or was refused): the desk takes the next one.
    package func release() {
        state.withLock {
            $0.occupied = false
            $0.arrival = nil
            $0.info = nil
            $0.user = nil
            $0.title = nil
            $0.connectedAt = nil
        }
    }

    /// A title sent through `/admin/metadata` since the last call.
    package func takeTitle() -> String? {
        state.withLock { state -> String? in
            defer { state.title = nil }
            return state.title
        }
    }

    // MARK: The admin calls

    /// The admin's `killsource?ban=SECONDS` while the station's own `source` plays (or none does): every source of the
    /// station is refused until `now + seconds` (an encoder that reconnects at once stays off the air). A later bar
    /// replaces an earlier one; 0 lifts it. A DJ's bar is the account's (`SourceAccounts.bar`).
    package func bar(for seconds: Int, now: Double = monotonicNow()) {
        state.withLock { $0.barredUntil = seconds > 0 ? now + Double(seconds) : -Double.infinity }
    }

    /// Seconds the bar still lasts at `now`; nil: none.
    package func barred(now: Double = monotonicNow()) -> Double? {
        let until = state.withLock { $0.barredUntil }
        return until > now ? until - now : nil
    }

    /// `/admin/metadata`: the title while the source plays; false when none is on the air.
    package func setTitle(_ title: String) -> Bool {
        state.withLock {
            guard $0.occupied else { return false }
            $0.title = title
            return true
        }
    }
}
