import RadioRelaySystem

/// A station's last titles, newest last: what was that song? Each with when it started (wall clock, shown in UTC) and
/// the input it came from. At most `limit`; an empty title (an input without titles) is not one, and a title
/// shown again right after itself (the same song on a backup input, after an input without titles) is not a new one. A pure value (tests: `SongHistoryTests`); the station keeps it
/// across a reload that restarts it (`Station.init(history:)`), not across a process restart: a restarted relay
/// starts its list afresh, as its listeners do.
public struct SongHistory: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var title: String
        /// Wall-clock seconds (Unix) when it started.
        public var started: Double
        /// The input's name (`1`, `live`, a section's name).
        public var input: String
        /// The DJ whose set it was in (a live source with a DJ account); nil otherwise.
        public var dj: String?

        public init(title: String, started: Double, input: String, dj: String? = nil) {
            self.title = title
            self.started = started
            self.input = input
            self.dj = dj
        }
    }

    public static let limit = 20
    public private(set) var entries: [Entry] = []

    public init() {}

    /// `title` started at `at` on `input` (in `dj`'s set).
    public mutating func record(_ title: String, at: Double, input: String, dj: String? = nil) {
        guard !title.isEmpty, entries.last?.title != title else { return }
        entries.append(Entry(title: title, started: at, input: input, dj: dj))
        if entries.count > Self.limit { entries.removeFirst(entries.count - Self.limit) }
    }

    /// The entries as JSON, newest first: `[{"title":…,"started":"2026-12-04T18:00:00.000Z","input":"1"}, …]`, with
    /// `"dj":NAME` in an entry of a DJ's set.
    package var json: String { json { _ in nil } }

    /// The same, with `"listen":URL` in each entry `listen` gives one for (the archive's URL that plays it).
    package func json(listen: (Entry) -> String?) -> String {
        JSONText.array(
            entries.reversed().map { entry in
                JSONText.object(
                    [
                        ("title", JSONText.string(entry.title)),
                        ("started", JSONText.string(UTCTime(entry.started).iso8601)),
                        ("input", JSONText.string(entry.input)),
                    ] + (entry.dj.map { [("dj", JSONText.string($0))] } ?? [])
                        + (listen(entry).map { [("listen", JSONText.string($0))] } ?? []))
            })
    }
}
