import Glibc
import RadioRelayMedia
import RadioRelaySystem

/// Settings of one station's listening side.
public struct BroadcasterConfiguration: Sendable, Equatable {
    /// Address to listen on: an IPv4 or IPv6 literal ("0.0.0.0", "127.0.0.1", "::").
    public var bind = "0.0.0.0"
    public var port = 8000
    /// Whether the output has a raw TCP port at all (`port = none`: its listeners come over HTTP only, as a protected
    /// station's must: raw TCP carries no credentials).
    public var rawListeners = true
    /// The `port` key's value: the port, or nil for `none`.
    public var rawPort: Int? {
        get { rawListeners ? port : nil }
        set {
            rawListeners = newValue != nil
            if let newValue { port = newValue }
        }
    }
    /// Seconds of recent audio a new listener gets at once, so playback starts without waiting.
    public var burst = 2.0
    /// Seconds behind the live edge after which a listener is moved to the live edge (once), then disconnected.
    public var maxLag = 10.0
    /// 0: no limit.
    public var maxListeners = 20_000
    /// Connections from one address; 0: no limit.
    public var maxPerIP = 0
    /// Seconds a listener's stream lasts at most (`max_listener_duration`): it then ends after a whole page (an MP3
    /// output's: whole frames). 0: no limit.
    public var maxListenerDuration = 0.0
    /// How often each listener is written to: several pages go out in one `sendmsg`, so a longer interval saves
    /// kernel time per listener and a shorter one lowers latency. `auto` (the default) lets each network loop choose
    /// from its listener count, within a hold budget; `fixed` is `flush_ms = N` (0 writes every page as it is
    /// published).
    public var flush = FlushPolicy.auto
    /// A fixed interval when one is set, otherwise `auto`'s hold budget (the longest interval it may choose).
    /// Setting it fixes the interval.
    public var flushInterval: Double {
        get { flush.fixed ?? flush.hold }
        set { flush.fixed = newValue }
    }
    /// Bytes a listener may send (a stray HTTP request) before it is disconnected.
    public var readCap = 8192
    /// Kernel send buffer per listener: how much the kernel queues for a slow reader beyond `maxLag`.
    public var sendBuffer = 32 * 1024
    /// Keep-alive and `TCP_USER_TIMEOUT` on each listener's connection, in seconds (`PeerTimeout`): a listener
    /// whose path died is given up by the kernel this long after its data stopped being acknowledged, whatever the
    /// lag rule says. The station's `peer_timeout`.
    public var peerTimeout = 20

    /// What a listener's connection gets: `peerTimeout`, but never less than the lag rule's span (twice `maxLag`,
    /// and a second): Linux ends a connection whose peer advertised a zero window for `TCP_USER_TIMEOUT` too, and a
    /// listener that is alive but paused is the lag rule's to move and drop, not the kernel's.
    package var listenerPeerTimeout: PeerTimeout {
        let lagSpan = maxLag.isFinite ? Int(min(max(2 * maxLag, 0), 86_400).rounded(.up)) + 1 : 0
        return PeerTimeout(seconds: max(peerTimeout, lagSpan))
    }
    /// The socket options each listener's connection gets: `TCP_NODELAY`, the send buffer, and the peer timeout.
    package var listenerSocketOptions: ListenerSocketOptions {
        ListenerSocketOptions(sendBuffer: sendBuffer, peerTimeout: listenerPeerTimeout)
    }
    /// Every connection starts with a PROXY protocol header (v2 or v1) from a load balancer, and counts as coming from
    /// the client the header names; one without a valid header within 3 s is closed. Only for a port that nothing
    /// but the balancer can reach: the header is believed.
    public var proxyProtocol = false
    /// The balancers whose PROXY header is believed (`proxy_from`); nil: loopback only (`TrustedProxies.loopback`).
    /// A connection from elsewhere on a `proxyProtocol` port is closed and counted.
    package var proxyFrom: TrustedProxies?

    /// The peers trusted to send a PROXY header: `proxyFrom`, or loopback.
    package var trustedProxies: TrustedProxies { proxyFrom ?? .loopback }

    public init() {}

    /// Seconds of recent audio a new listener may be sent at once.
    public static let burstRange = 0.0...60
    /// Seconds a listener may fall behind before it is moved, then dropped.
    public static let maxLagRange = 0.5...600
    /// A fixed flush interval, and auto's longest one, in milliseconds.
    public static let flushMillisecondsRange = 0...2000
    /// The longest session limit: 30 days (0: none).
    public static let listenerDurationRange = 0.0...2_592_000
    /// Listeners per output, and per client address (0: no limit).
    public static let listenerLimitRange = 0...1_000_000

    public func validate() throws {
        guard Port.rangeOrAnyFree.contains(port) else {
            throw ConfigurationError("port \(port) is out of range \(Port.accepts) (0: any free port)")
        }
        guard Self.burstRange.contains(burst) else {
            throw ConfigurationError("burst \(burst) s: use 0 to 60 seconds")
        }
        guard Self.maxLagRange.contains(maxLag) else {
            throw ConfigurationError("max lag \(maxLag) s: use 0.5 to 600 s")
        }
        guard Self.listenerDurationRange.contains(maxListenerDuration) else {
            throw ConfigurationError(
                "max listener duration \(maxListenerDuration) s: use 0 to 2592000 seconds (30 days)")
        }
        guard Self.listenerLimitRange.contains(maxListeners), Self.listenerLimitRange.contains(maxPerIP) else {
            throw ConfigurationError("listener limits: use 0 to 1000000")
        }
        let flushSeconds =
            Double(Self.flushMillisecondsRange.lowerBound) / 1000...Double(
                Self.flushMillisecondsRange.upperBound) / 1000
        if let interval = flush.fixed, !flushSeconds.contains(interval) {
            throw ConfigurationError("flush interval \(interval) s: use 0 to 2 seconds")
        }
        guard flushSeconds.contains(flush.hold) else {
            throw ConfigurationError("flush hold budget \(flush.hold) s: use 0 to 2 seconds")
        }
        guard SocketAddress(host: bind, port: UInt16(port)) != nil else {
            throw ConfigurationError("bind address \(bind) is not an IPv4 or IPv6 address")
        }
    }
}

/// When a network loop writes to its listeners.
///
/// Writes follow page publications: a listener is written at a publication once ¾ of the interval has passed since
/// its last write (`ListenerSchedule.due`), so with pages of duration `p` an interval `i` writes every
/// ⌈0.75·i / p⌉ pages, and a page waits at most that many pages less one before it is written. That wait is what the
/// interval adds to a listener's latency, and the number of writes (each a `sendmsg`, almost all kernel time) is what
/// it costs: a loop's write rate is its listeners divided by the interval.
public struct FlushPolicy: Sendable, Equatable, CustomStringConvertible {
    /// Every listener every `fixed` seconds, whatever the audience (`flush_ms = N`; 0: every page); nil: `auto`.
    ///
    /// `auto` (the default): the interval follows the process's listener count (every station's, on every network
    /// loop), `listeners / autoWriteRate` seconds, so the process makes at most `autoWriteRate` writes a second
    /// until the interval reaches `hold`; beyond, it stays at `hold` and the writes grow with the listeners. (Counted
    /// per loop instead, two loops made twice the writes for the same audience: at 2 000 listeners each loop had
    /// 1 000 and wrote every 200 ms, 65 µs per listener-second against 52 at 300 ms.) A small audience is written at every page (lowest latency,
    /// few writes); a large one every `hold`, whose default is the 300 ms that was the fixed default: 100 ms pages
    /// then wait at most 200 ms, end-to-end p99 ≈ 315 ms (goal ≤ 400 ms).
    public var fixed: Double?
    /// `flush_hold_ms`: the longest interval `auto` chooses, in seconds (unused by a fixed interval).
    public var hold: Double

    public init(fixed: Double?, hold: Double = Self.defaultHold) {
        self.fixed = fixed
        self.hold = hold
    }

    /// `flush_ms = auto` with the default hold budget.
    public static let auto = FlushPolicy(fixed: nil)
    /// The default hold budget (seconds).
    public static let defaultHold = 0.3
    /// Writes per second the process allows itself before `auto` lengthens the interval: 5 000 `sendmsg` of a few
    /// KB cost ~6 % of a core here (~12 µs each on loopback: 41 µs per listener-second at 3.3 writes a second), so
    /// an audience below 1 500 gets every page sooner at a cost nobody notices, and one above it the hold's CPU per
    /// listener.
    public static let autoWriteRate = 5_000.0

    /// For the start-up line: "auto (every page up to 300 ms)" or "300 ms".
    public var description: String {
        func ms(_ seconds: Double) -> String { "\(Int((seconds * 1000).rounded())) ms" }
        if let fixed { return ms(fixed) }
        return "auto (every page up to \(ms(hold)))"
    }

    /// The interval for a loop serving `listeners` connections (any count: negative is 0).
    public func interval(listeners: Int) -> Double {
        if let fixed { return fixed }
        return min(hold, Double(max(0, listeners)) / Self.autoWriteRate)
    }
}

/// The socket options a listener's connection gets (`BroadcasterConfiguration.listenerSocketOptions`). Set once on a
/// station's listening socket, Linux copies them to every connection accepted on it (`ListenerSocketOptionsTests`
/// checks that it does), which saves a raw listener seven `setsockopt` calls when it joins; a connection handed over
/// by the HTTP front end, accepted on another socket, gets them one by one.
package struct ListenerSocketOptions: Sendable, Equatable {
    package var sendBuffer: Int
    package var peerTimeout: PeerTimeout

    /// Sets them on `fd` (a listener's connection, or the listening socket its connections are accepted from); the
    /// first refusal is thrown.
    package func apply(to fd: Int32) throws(SystemError) {
        try setSocketOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1, name: "TCP_NODELAY")
        try setSocketOption(fd, SOL_SOCKET, SO_SNDBUF, Int32(clamping: sendBuffer), name: "SO_SNDBUF")
        try peerTimeout.apply(to: fd)
    }
}
