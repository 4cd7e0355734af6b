/// What a reload (SIGHUP) does when one option's value changes: each option of the table says (`OptionSpecification
/// .reload`), and the plan carries it out.
package enum ReloadRule: String, Sendable, Equatable, CaseIterable {
    /// Applied to what runs: listeners, pipeline and Ogg stream go on.
    case inPlace = "in place"
    /// In place while the station's page rings hold what it asks for (a lag or burst they were sized for); beyond
    /// that, the station restarts.
    case inPlaceWithinRing = "in place within the page ring, else a station restart"
    /// In place while the station stays what it is, a transcoding station (MP3 inputs decoded) or an edge (an Ogg
    /// Opus root relayed); a change from one to the other restarts the station (its chain is another).
    case inPlaceWithinKind = "in place, else a station restart when it changes between transcoding and relaying"
    /// The station restarts on its listening sockets (its listeners are closed; new ones wait in the backlog).
    case restartsStation = "a station restart"
    /// Only a restart of the process applies it: a reload logs the key by name, and the running value stays.
    case restartsProcess = "a process restart"
}
