import RadioRelayMedia
import RadioRelaySystem

/// Settings of one station's listening side.
public struct BroadcasterConfiguration: Sendable, Equatable {
    /// Address to listen on: an IPv4 or IPv6 literal ("0.0.0.0", "127.0.0.1", "::").
    public var bind = "0.0.0.0"
    public var port = 8000
    /// Seconds of recent audio a new listener gets at once, so playback starts without waiting.
    public var burst = 2.0
    /// Seconds behind the live edge after which a listener is moved to the live edge (once), then disconnected.
    public var maxLag = 10.0
    /// 0: no limit.
    public var maxListeners = 20_000
    /// Connections from one address; 0: no limit.
    public var maxPerIP = 0
    /// Seconds between writes to one listener: several pages go out in one `sendmsg`. Larger saves kernel time per
    /// listener, smaller lowers latency; 0 writes every page as it is published. Writes happen at page publication,
    /// so the effective interval is a whole number of pages (300 ms with 100 ms pages: 0.39× Icecast's CPU at 10 000
    /// listeners, 314 ms p99 latency; 200 ms: 0.61×).
    public var flushInterval = 0.3
    /// Bytes a listener may send (a stray HTTP request) before it is disconnected.
    public var readCap = 8192
    /// Kernel send buffer per listener: how much the kernel queues for a slow reader beyond `maxLag`.
    public var sendBuffer = 32 * 1024
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

    public func validate() throws {
        guard (0...65535).contains(port) else {
            throw ConfigurationError("port \(port) is out of range 1-65535 (0: any free port)")
        }
        guard burst >= 0, burst <= 60 else { throw ConfigurationError("burst \(burst) s: use 0 to 60 seconds") }
        guard maxLag >= 0.5, maxLag <= 600 else { throw ConfigurationError("max lag \(maxLag) s: use 0.5 to 600 s") }
        guard maxListeners >= 0, maxPerIP >= 0 else { throw ConfigurationError("listener limits cannot be negative") }
        guard flushInterval >= 0, flushInterval <= 2 else {
            throw ConfigurationError("flush interval \(flushInterval) s: use 0 to 2 seconds")
        }
        guard SocketAddress(host: bind, port: UInt16(port)) != nil else {
            throw ConfigurationError("bind address \(bind) is not an IPv4 or IPv6 address")
        }
    }
}
