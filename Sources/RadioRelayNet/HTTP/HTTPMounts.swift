import RadioRelayMedia
import RadioRelaySystem

/// A station as the HTTP front end sees it: its outputs' mounts, each with what its answers show and the broadcaster
/// that takes its listeners. `Station` (a layer up) is one; the front end asks for each request, so a reload's
/// stations and a new title are served at once.
package protocol HTTPMounts: AnyObject, Sendable {
    var httpMounts: [(mount: PublicDirectory.Mount, broadcaster: Broadcaster)] { get }
    /// Where it takes a live source (nil: it takes none).
    var sourceDesk: SourceDesk? { get }
    /// Its name and last titles (`/NAME/history.json`).
    var songHistory: (station: String, history: SongHistory) { get }
    /// Its inputs, force, live source and switches, for the admin page.
    var adminView: AdminStationView { get }
    /// Queues an operator's command for its pipeline (the status endpoint's force and release): the ticket its
    /// answer comes on. Throws, saying why, for an input it does not have or when too many commands wait.
    func submit(_ command: StationCommand) throws(ConfigurationError) -> CommandTicket
}
