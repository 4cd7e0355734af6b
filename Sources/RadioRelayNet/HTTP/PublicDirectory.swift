import RadioRelayMedia
import RadioRelaySystem

/// What the public HTTP address offers, as plain values: one entry per mount (a station's output), with what its
/// response and the index page show. Built from the running stations for each request (`HTTPFront`), so a reload's
/// stations are served at once; tests build it by hand.
package struct PublicDirectory: Sendable, Equatable {
    /// What a mount streams.
    package enum Format: String, Sendable, Equatable {
        /// The station's Opus encoding (or an edge's relayed Opus), in Ogg.
        case oggOpus
        /// The upstream's own MP3 frames, passed through (`mp3 = yes`).
        case mp3

        package var contentType: String { self == .mp3 ? "audio/mpeg" : "audio/ogg" }
    }

    package struct Mount: Sendable, Equatable {
        /// `/main.opus`.
        package var path: String
        /// `/main/events`: the mount without `.opus`, then `/events`.
        package var eventsPath: String
        package var station: String
        /// The rendition's name; nil for the station's main output.
        package var rendition: String?
        package var format = Format.oggOpus
        package var info = StationInfo()
        /// The current title, if the upstream sent one.
        package var title: String?
        package var bitrate = 0
        package var channels = 2
        /// Opus decodes at 48 kHz; an MP3 output's rate is the upstream's.
        package var sampleRate = 48_000
        /// Where raw TCP listeners connect, `ADDR:PORT`.
        package var rawAddress = ""
        /// Its live HLS stream, if the station makes one (under `hlsDirectory`).
        package var hls: HLSStream?
        /// Listeners now (raw and HTTP), the most there have been at once, and when the station's stream began
        /// (wall-clock seconds): Icecast's status.
        package var listeners = 0
        package var listenerPeak = 0
        package var streamStart = 0.0
        /// When its station's live source connected (wall-clock seconds); nil: none is on the air.
        package var sourceConnected: Double?
        /// The DJ on the air (a live source with a DJ account); nil: none, or the station's own user `source`.
        package var dj: String?
        /// What the admin's `stats` adds (Icecast's names): the live source's address and user agent, bytes the
        /// station read from its inputs and this output sent, `max_listeners` (0: none), listeners that fell behind.
        package var admin = AdminFigures()

        package struct AdminFigures: Sendable, Equatable {
            package var sourceAddress: String?
            package var sourceAgent: String?
            package var bytesRead = 0
            package var bytesSent = 0
            package var maxListeners = 0
            package var slowListeners = 0

            package init() {}
        }

        package init(
            path: String, eventsPath: String, station: String, rendition: String? = nil,
            info: StationInfo = StationInfo(),
            title: String? = nil, bitrate: Int = 0, channels: Int = 2, rawAddress: String = "",
            hls: HLSStream? = nil
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
            self.hls = hls
        }

        /// `/main/`: where its HLS playlists and segments are, the directory of its events path.
        package var hlsDirectory: String { String(eventsPath.dropLast("events".utf8.count)) }
    }

    package var mounts: [Mount] = []
    /// When the HTTP address began serving (wall-clock seconds): Icecast's `server_start`.
    package var serverStart = 0.0
    /// A station takes live sources here: `OPTIONS` says `PUT` and `SOURCE` are allowed (libshout asks).
    package var takesSources = false
    /// Where listeners reach the HTTP address (`[server] public_url`), for the URLs in playlists and
    /// `/status-json.xsl`; nil: the request's `Host`.
    package var publicURL: PublicURL?
    /// Each station's last titles, by station name (`/NAME/history.json`).
    package var histories: [String: SongHistory] = [:]
    /// Each archived station's main mount and its archive's time-shift service, by station name
    /// (`/NAME/archive.json`, the page's "listen again" links).
    package var archives: [String: ArchiveShelf] = [:]

    package init(mounts: [Mount] = [], serverStart: Double = 0) {
        self.mounts = mounts
        self.serverStart = serverStart
    }

    /// The mount (its index) at `path`.
    package func mount(at path: String) -> Int? {
        mounts.firstIndex { $0.path == path }
    }

    /// The mount (its index) whose events are at `path`.
    package func events(at path: String) -> Int? {
        mounts.firstIndex { $0.eventsPath == path }
    }

    /// The station whose history `path` asks for (`/NAME/history.json`), and that history.
    package func history(at path: String) -> (station: String, history: SongHistory)? {
        guard path.hasPrefix("/"), path.hasSuffix("/history.json") else { return nil }
        let name = String(path.dropFirst().dropLast("/history.json".utf8.count))
        guard !name.contains("/"), let history = histories[name] else { return nil }
        return (name, history)
    }

    /// The mount with an HLS stream whose directory `path` is in, and the name asked for there.
    package func hls(at path: String) -> (mount: Int, name: Substring)? {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return nil }
        let directory = path[...slash]
        guard let index = mounts.firstIndex(where: { $0.hls != nil && $0.hlsDirectory == directory }) else {
            return nil
        }
        return (index, path[path.index(after: slash)...])
    }

    /// `/NAME.opus` → `/NAME/events`.
    package static func eventsPath(forMount path: String) -> String {
        directory(forMount: path) + "events"
    }

    /// Where a mount's events and HLS stream are: the mount without a final `.opus`, as a directory (`/NAME.opus`
    /// → `/NAME/`; `/NAME.ogg` → `/NAME.ogg/`; `/NAME.hq.opus` → `/NAME.hq/`).
    package static func directory(forMount path: String) -> String {
        (path.hasSuffix(".opus") ? String(path.dropLast(5)) : path) + "/"
    }
}

/// A station's archive as the public address shows it: the mount that plays it and its time-shift service (which
/// has the writer's index and titles).
package struct ArchiveShelf: Sendable, Equatable {
    package let mount: String
    package let service: TimeShiftService

    package init(mount: String, service: TimeShiftService) {
        self.mount = mount
        self.service = service
    }

    package static func == (left: ArchiveShelf, right: ArchiveShelf) -> Bool {
        left.mount == right.mount && left.service === right.service
    }
}
