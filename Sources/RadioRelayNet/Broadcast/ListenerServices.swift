import RadioRelayMedia
import RadioRelaySystem

/// What a server hands every output it makes (`Broadcaster`): the network loops that serve listeners, the listener
/// places all its outputs share (the open-files budget), the access log and the admission point. Nothing here is global: two servers in
/// one process each hand out their own. An output made without a server (a unit test's) runs a pool of one loop of
/// its own, has no limit but its own, and writes no access log.
package struct ListenerServices: Sendable {
    /// The loops that serve the output; nil: a pool of its own with one loop.
    package var pool: NetworkPool?
    package var budget: ListenerBudget
    /// Where a line per listener goes when it leaves; nil: nowhere.
    package var accessLog: AccessLog?
    /// The one admission point, and the roster of admitted listeners.
    package var admission: ListenerAdmission
    /// A station's listeners across its outputs — raw, HTTP, HLS sessions — which `max_listeners` caps (the station
    /// sets it for its outputs); nil: each output counts its own.
    package var audience: StationAudience?

    package init(
        pool: NetworkPool? = nil, budget: ListenerBudget = ListenerBudget(), accessLog: AccessLog? = nil,
        admission: ListenerAdmission = ListenerAdmission()
    ) {
        self.pool = pool
        self.budget = budget
        self.accessLog = accessLog
        self.admission = admission
    }
}
