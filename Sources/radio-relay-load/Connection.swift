/// One simulated listener: its socket, timings and Ogg checker. Stored inline in one array for all connections and
/// mutated in place by the load loop, which is the only thread.
struct Connection {
    enum State: UInt8 {
        /// Not started yet (the ramp has not reached it).
        case waiting
        case connecting
        /// Connected, HTTP request not fully written.
        case requesting
        case open
        case closed
    }

    enum Outcome: UInt8 {
        /// Still open (or closed by the tool at the end).
        case ok
        case connectFailed
        /// The server closed or reset the connection before the run ended.
        case disconnected
        /// The HTTP response was not 200 (the connection was closed by the tool).
        case refused
    }

    var state = State.waiting
    var outcome = Outcome.ok
    var slow = false
    /// A slow listener out of tokens: EPOLLIN interest removed until the timer refills it.
    var paused = false
    var fd: Int32 = -1
    /// Seconds on the monotonic clock; NaN until it happens.
    var startedAt = Double.nan
    var connectedAt = Double.nan
    var firstByteAt = Double.nan
    var firstAudioAt = Double.nan
    var lastDataAt = Double.nan
    var endedAt = Double.nan
    /// Longest gap between two reads that returned data, after the first audio page.
    var maxStall = 0.0
    var bytes = 0
    var requestSent = 0
    /// How much of "\r\n\r\n" the HTTP response headers have matched so far; 4 when they are done.
    var httpMatch: UInt8 = 0
    var httpStatusBytes = 0
    var tokens = 0.0
    var refilledAt = 0.0
    var failure: String?
    var check: OggStreamCheck

    init(slow: Bool, checkStart: Bool) {
        self.slow = slow
        check = OggStreamCheck(checkStart: checkStart)
    }
}
