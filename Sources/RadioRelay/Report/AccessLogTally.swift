import RadioRelaySystem

/// What the lines of a report's files hold, line by line, in any order: each listener's line kept once — the same
/// line in two files (rotated logs that overlap, a copy) is counted once — and every other line counted by kind. A
/// pure value: no files, no clock (`AccessLogReader` feeds it).
///
/// Memory is bounded: at most `limit` listener lines are kept (each ~80 bytes, and its key against duplicates ~50);
/// lines beyond are counted (`overLimit`) and the report says so. Duplicates are found by key, not by keeping lines:
/// a line with an ID by its run, ID, time it left and request (the same listener leaves one mount once), any other
/// line by a 128-bit hash of its bytes.
package struct AccessLogTally: Sendable {
    package struct Counts: Sendable, Equatable {
        /// Lines read, duplicates and comments included.
        package var lines = 0
        /// Lines already read from another file (or earlier in the same one): counted once.
        package var duplicates = 0
        package var unreadable = 0
        /// `#` lines other than the server's markers, and empty lines.
        package var comments = 0
        /// Lines the server's access log dropped, from its markers: sessions missing from the files.
        package var dropped: Int64 = 0
        /// Title-event subscribers (`/NAME/events`): connected, but not listening.
        package var titleEvents = 0
        /// Lines whose status is not 2xx: not a stream that played.
        package var notServed = 0
        /// Listener lines beyond `limit`, not counted in the figures.
        package var overLimit = 0

        package init() {}
    }

    package static let defaultLimit = 4_000_000
    /// Mounts kept apart; lines of any further mount count under `otherMounts` (a hostile log cannot make a report
    /// of a million rows).
    package static let mountLimit = 1_000
    package static let otherMounts = "(other mounts)"
    /// The unreadable lines whose place and reason are kept for the report.
    package static let exampleLimit = 5

    package let limit: Int
    package private(set) var counts = Counts()
    package private(set) var lines: [ListenedLine] = []
    /// The first unreadable lines: `FILE:LINE: reason`.
    package private(set) var examples: [String] = []
    private var seen = Set<LineKey>()
    private var mounts: [String: String] = [:]

    package init(limit: Int = defaultLimit) {
        self.limit = max(0, limit)
    }

    /// Counts one line of `file` (its `number`, for the report's examples), without its LF.
    package mutating func add(_ bytes: ArraySlice<UInt8>, file: String, number: Int) {
        counts.lines += 1
        switch AccessLogLine.parse(bytes) {
        case .comment:
            counts.comments += 1
        case .dropped(let count):
            guard isNew(.hashing(bytes)) else { return }
            counts.dropped = counts.dropped.saturatingAdding(count)
        case .unreadable(let reason):
            guard isNew(.hashing(bytes)) else { return }
            note(reason, file: file, number: number)
        case .listener(let line):
            add(line, bytes: bytes, file: file, number: number)
        }
    }

    /// A line that cannot be read at all (too long, cut short), which `add` never saw.
    package mutating func unreadable(_ reason: String, file: String, number: Int) {
        counts.lines += 1
        note(reason, file: file, number: number)
    }

    private mutating func note(_ reason: String, file: String, number: Int) {
        counts.unreadable += 1
        if examples.count < Self.exampleLimit { examples.append("\(file):\(number): \(reason)") }
    }

    private mutating func add(_ line: AccessLogLine, bytes: ArraySlice<UInt8>, file: String, number: Int) {
        let key = line.session.map { LineKey.listener($0, leave: line.leave, request: line.request) } ?? .hashing(bytes)
        guard isNew(key) else { return }
        guard let place = ListenedLine.place(ofRequest: line.request) else {
            return note("a request without a /PATH", file: file, number: number)
        }
        guard case .mount(let mount) = place else {
            counts.titleEvents += 1
            return
        }
        guard (200..<300).contains(line.status) else {
            counts.notServed += 1
            return
        }
        guard lines.count < limit else {
            counts.overLimit += 1
            return
        }
        lines.append(
            ListenedLine(
                mount: interned(mount), listener: ListenerKey(address: line.address, userAgent: line.userAgent),
                session: line.session, leave: line.leave, seconds: line.seconds,
                isEdge: line.userAgent.hasPrefix("radio-relay/")))
    }

    /// Whether `key` is new; remembered while fewer than `limit` keys are (beyond, every line is new: over the limit
    /// a listener line is not counted anyway).
    private mutating func isNew(_ key: LineKey) -> Bool {
        guard seen.count < limit else { return true }
        guard seen.insert(key).inserted else {
            counts.duplicates += 1
            return false
        }
        return true
    }

    /// One copy of each mount's text, shared by its lines.
    private mutating func interned(_ mount: String) -> String {
        if let known = mounts[mount] { return known }
        guard mounts.count < Self.mountLimit else { return Self.otherMounts }
        mounts[mount] = mount
        return mount
    }
}

/// What tells two lines apart for the dedup of overlapping files.
struct LineKey: Hashable {
    let first: UInt64
    let second: UInt64
    let third: UInt64
    let fourth: UInt64

    /// A listener's line: its run and ID, when it left and its request (a listener moved between mounts has a line
    /// per mount).
    static func listener(_ session: SessionKey, leave: Int64, request: String) -> LineKey {
        var hasher = Hasher()
        hasher.combine(request)
        return LineKey(
            first: UInt64(session.run) | 1 << 32, second: session.id, third: UInt64(bitPattern: leave),
            fourth: UInt64(bitPattern: Int64(hasher.finalize())))
    }

    /// Any other line: its bytes, hashed twice (128 bits; seeded at random per process).
    static func hashing(_ bytes: ArraySlice<UInt8>) -> LineKey {
        func hash(_ salt: UInt8) -> UInt64 {
            var hasher = Hasher()
            hasher.combine(salt)
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
            return UInt64(bitPattern: Int64(hasher.finalize()))
        }
        return LineKey(first: 0, second: hash(1), third: hash(2), fourth: 0)
    }
}
