import RadioRelaySystem

/// What the lines of a report's files hold, line by line, in any order: each listener's line kept once — the same
/// line in two files (rotated logs that overlap, a copy) is counted once — and every other line counted by kind. A
/// pure value: no files, no clock (`AccessLogReader` feeds it).
///
/// Memory is bounded: at most `limit` listener lines are kept (each 64 bytes, and its key against duplicates ~35);
/// lines beyond are counted (`overLimit`) and the report says so. Duplicates are found by key, not by keeping lines:
/// a line with an ID by its run, ID, time it left and mount (the same listener leaves one mount once), any other
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
    /// Each mount's one copy of its text, and its number.
    private var mounts: [String: (text: String, number: UInt64)] = [:]
    /// What `locate` said of each request seen, for the first `placeLimit`.
    private var places: [String: (ListenedLine.Place?, UInt64?)] = [:]
    private var runs: [UInt32: UInt64] = [:]
    private static let placeLimit = 4_096

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
        let (place, mountNumber) = locate(line.request)
        var key = LineKey.hashing(bytes)
        if let session = line.session, let mountNumber, let run = runNumber(session.run) {
            key = LineKey(session.id, run: run, mount: mountNumber, leave: line.leave)
        }
        guard isNew(key) else { return }
        guard let place else { return note("a request without a /PATH", file: file, number: number) }
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
                mount: mount, listener: ListenerKey(address: line.address, userAgent: line.userAgent),
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

    /// Where a request listened (its mount's one shared copy of the text), and the mount's number (nil for other
    /// places). Requests repeat (a few per mount): the answer is kept for the first `placeLimit` requests seen.
    private mutating func locate(_ request: String) -> (ListenedLine.Place?, UInt64?) {
        if let known = places[request] { return known }
        var answer: (ListenedLine.Place?, UInt64?)
        switch ListenedLine.place(ofRequest: request) {
        case .mount(let mount)?:
            if let known = mounts[mount] {
                answer = (.mount(known.text), known.number)
            } else if mounts.count < Self.mountLimit {
                let number = UInt64(mounts.count)
                mounts[mount] = (mount, number)
                answer = (.mount(mount), number)
            } else {
                answer = (.mount(Self.otherMounts), nil)
            }
        case let other:
            answer = (other, nil)
        }
        if places.count < Self.placeLimit { places[request] = answer }
        return answer
    }

    /// A small number for each run token, for the first 32 768 runs.
    private mutating func runNumber(_ run: UInt32) -> UInt64? {
        if let known = runs[run] { return known }
        guard runs.count < 1 << 15 else { return nil }
        let number = UInt64(runs.count)
        runs[run] = number
        return number
    }
}

/// What tells two lines apart for the dedup of overlapping files, in 16 bytes.
struct LineKey: Hashable {
    let first: UInt64
    let second: UInt64

    /// A listener's line, exactly: its ID, and packed in the second word (top bit set) its run's number (15 bits),
    /// its mount's number (10 bits) and when it left (38 bits: seconds to the year 9999). A listener moved between
    /// mounts has a line per mount.
    init(_ id: UInt64, run: UInt64, mount: UInt64, leave: Int64) {
        first = id
        second = 1 << 63 | (run & 0x7FFF) << 48 | (mount & 0x3FF) << 38 | UInt64(max(0, leave)) & (1 << 38 - 1)
    }

    private init(first: UInt64, second: UInt64) {
        self.first = first
        self.second = second
    }

    /// Any other line: its bytes, hashed twice (127 bits; seeded at random per process).
    static func hashing(_ bytes: ArraySlice<UInt8>) -> LineKey {
        func hash(_ salt: UInt8) -> UInt64 {
            var hasher = Hasher()
            hasher.combine(salt)
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
            return UInt64(bitPattern: Int64(hasher.finalize()))
        }
        return LineKey(first: hash(1), second: hash(2) & ~(1 << 63))
    }
}
