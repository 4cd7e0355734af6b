import RadioRelaySystem
import Synchronization

/// How a listener reached its station.
package enum ListenerProtocol: String, Sendable, Codable, CaseIterable {
    /// Raw TCP on the station's own port: the stream from the first byte.
    case tcp
    /// An HTTP request for the station's mount on the shared HTTP address: a response head, then the stream.
    case http
    /// An HLS player: playlists and segments, one request after another, known as a session (`HLSSessions`).
    case hls
    /// A title-event subscriber (`/NAME/events`, `/events`).
    case events
}

/// A station, one of its mounts and how listeners reach it there, shared by the entries of every such listener (one
/// reference each rather than two strings and a kind: the roster holds one entry per listener, 19 000 of them on one
/// output).
package final class ListenerMount: Sendable {
    package let station: String
    /// `/jazz.opus`.
    package let mount: String
    package let kind: ListenerProtocol

    package init(station: String, mount: String, kind: ListenerProtocol) {
        self.station = station
        self.mount = mount
        self.kind = kind
    }

    /// The same place for listeners of `kind`: itself when it is theirs.
    package func of(_ kind: ListenerProtocol) -> ListenerMount {
        kind == self.kind ? self : ListenerMount(station: station, mount: mount, kind: kind)
    }
}

/// What an HTTP listener said of itself: its user agent, and the user it authenticated as. Nil for a raw TCP listener,
/// which says nothing, so that its entry carries one reference and not two optional strings.
package final class ListenerSaid: Sendable {
    package let userAgent: String?
    package let username: String?

    init(userAgent: String?, username: String?) {
        self.userAgent = userAgent
        self.username = username
    }
}

/// One admitted listener as the operator sees it (the listener list of `/status.json`): who, where, since when, and
/// how many bytes it was sent — the only field that changes, written by the thread that serves it. 72 bytes with its
/// object header (an allocation of 80; the roster holds one per listener), what varies by listener inline and the
/// rest shared or left out when there is none.
package final class ListenerEntry: Sendable {
    package let id: ListenerID
    /// Its station, the mount it listens to (`/jazz.opus`; a raw TCP listener's is its output's HTTP mount) and how.
    package let place: ListenerMount
    package var kind: ListenerProtocol { place.kind }
    package var station: String { place.station }
    package var mount: String { place.mount }
    /// The client's address (after a PROXY header), as the access log shows it.
    package let address: String
    private let said: ListenerSaid?
    package var userAgent: String? { said?.userAgent }
    /// The user it authenticated as (a protected station's listener that sent one).
    package var username: String? { said?.username }
    /// When it was admitted (monotonic seconds).
    package let connectedAt: Double
    /// Bytes of stream (or answers) sent to it so far.
    package let bytes = Atomic<Int>(0)

    /// - Parameter place: where and how it listens; its kind is the listener's.
    package init(
        id: ListenerID, place: ListenerMount, address: String, userAgent: String?, username: String? = nil,
        connectedAt: Double
    ) {
        self.id = id
        self.place = place
        self.address = address
        said = userAgent == nil && username == nil ? nil : ListenerSaid(userAgent: userAgent, username: username)
        self.connectedAt = connectedAt
    }
}

/// Every listener admitted and not yet gone, by ID, across the server's stations and loops: filled by the places
/// that admit (`NetworkLoop`, the HTTP front end's subscribers and HLS sessions), read by the status endpoint. One
/// lock taken per join and leave, never per byte; bounded by what it holds (every entry is a listener holding a
/// place, or an HLS session, which `HLSSessions` bounds).
package final class ListenerRoster: Sendable {
    private let entries = LockedBox<[ListenerID: ListenerEntry]>([:])

    package init() {}

    package func add(_ entry: ListenerEntry) { entries.withLock { $0[entry.id] = entry } }

    package func remove(_ id: ListenerID) { entries.withLock { $0[id] = nil } }

    package var count: Int { entries.withLock { $0.count } }

    package func entry(_ id: ListenerID) -> ListenerEntry? { entries.withLock { $0[id] } }

    /// The entries of `mount`, the oldest first (by ID), at most `limit`: only they are sorted.
    package func list(mount: String, limit: Int) -> [ListenerEntry] {
        let matching = entries.withLock { $0.values.filter { $0.mount == mount } }
        return Array(matching.sorted { $0.id < $1.id }.prefix(max(0, limit)))
    }

    /// The stream listeners and HLS players of `mount` (not title-event subscribers), the oldest first, at most
    /// `limit`, and how many there are: the admin page's list.
    package func listeners(of mount: String, limit: Int) -> (entries: [ListenerEntry], total: Int) {
        let matching = entries.withLock { $0.values.filter { $0.mount == mount && $0.kind != .events } }
        return (Array(matching.sorted { $0.id < $1.id }.prefix(max(0, limit))), matching.count)
    }

    /// At most `limit` entries, the oldest first (by ID), and how many there are in all.
    package func list(limit: Int) -> (entries: [ListenerEntry], total: Int) {
        let all = entries.withLock { Array($0.values) }
        let sorted = all.sorted { $0.id < $1.id }
        return (Array(sorted.prefix(max(0, limit))), all.count)
    }
}
