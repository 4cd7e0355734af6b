import RadioRelayMedia
import RadioRelaySystem

/// What the public HTTP address offers, as plain values: one entry per mount (a station's output), with what its
/// response and the index page show. Built from the running stations for each request (`HTTPFront`), so a reload's
/// stations are served at once; tests build it by hand.
struct PublicDirectory: Sendable, Equatable {
    struct Mount: Sendable, Equatable {
        /// `/main.opus`.
        var path: String
        /// `/main/events`: the mount without `.opus`, then `/events`.
        var eventsPath: String
        var station: String
        /// The rendition's name; nil for the station's main output.
        var rendition: String?
        var info = StationInfo()
        /// The current title, if the upstream sent one.
        var title: String?
        var bitrate = 0
        var channels = 2
        /// Where raw TCP listeners connect, `ADDR:PORT`.
        var rawAddress = ""
    }

    var mounts: [Mount] = []

    /// The mount (its index) at `path`.
    func mount(at path: String) -> Int? {
        mounts.firstIndex { $0.path == path }
    }

    /// The mount (its index) whose events are at `path`.
    func events(at path: String) -> Int? {
        mounts.firstIndex { $0.eventsPath == path }
    }

    /// `/NAME.opus` → `/NAME/events`.
    static func eventsPath(forMount path: String) -> String {
        (path.hasSuffix(".opus") ? String(path.dropLast(5)) : path) + "/events"
    }
}
