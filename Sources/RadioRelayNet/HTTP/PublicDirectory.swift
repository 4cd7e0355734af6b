import RadioRelayMedia
import RadioRelaySystem

/// What the public HTTP address offers, as plain values: one entry per mount (a station's output), with what its
/// response and the index page show. Built from the running stations for each request (`HTTPFront`), so a reload's
/// stations are served at once; tests build it by hand.
package struct PublicDirectory: Sendable, Equatable {
    package struct Mount: Sendable, Equatable {
        /// `/main.opus`.
        package var path: String
        /// `/main/events`: the mount without `.opus`, then `/events`.
        package var eventsPath: String
        package var station: String
        /// The rendition's name; nil for the station's main output.
        package var rendition: String?
        package var info = StationInfo()
        /// The current title, if the upstream sent one.
        package var title: String?
        package var bitrate = 0
        package var channels = 2
        /// Where raw TCP listeners connect, `ADDR:PORT`.
        package var rawAddress = ""

        package init(
            path: String, eventsPath: String, station: String, rendition: String? = nil,
            info: StationInfo = StationInfo(),
            title: String? = nil, bitrate: Int = 0, channels: Int = 2, rawAddress: String = ""
        ) {
            self.path = path
            self.eventsPath = eventsPath
            self.station = station
            self.rendition = rendition
            self.info = info
            self.title = title
            self.bitrate = bitrate
            self.channels = channels
            self.rawAddress = rawAddress
        }
    }

    package var mounts: [Mount] = []

    /// The mount (its index) at `path`.
    package func mount(at path: String) -> Int? {
        mounts.firstIndex { $0.path == path }
    }

    /// The mount (its index) whose events are at `path`.
    package func events(at path: String) -> Int? {
        mounts.firstIndex { $0.eventsPath == path }
    }

    /// `/NAME.opus` → `/NAME/events`.
    package static func eventsPath(forMount path: String) -> String {
        (path.hasSuffix(".opus") ? String(path.dropLast(5)) : path) + "/events"
    }
}
