import RadioRelayMedia

/// A station as the HTTP front end sees it: its outputs' mounts, each with what its answers show and the broadcaster
/// that takes its listeners. `Station` (a layer up) is one; the front end asks for each request, so a reload's
/// stations and a new title are served at once.
package protocol HTTPMounts: AnyObject, Sendable {
    var httpMounts: [(mount: PublicDirectory.Mount, broadcaster: Broadcaster)] { get }
    /// Where it takes a live source (nil: it takes none).
    var sourceDesk: SourceDesk? { get }
    /// Its name and last titles (`/NAME/history.json`).
    var songHistory: (station: String, history: SongHistory) { get }
}
