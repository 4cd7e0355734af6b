import Glibc

/// How long a TCP connection may go on with a peer that no longer answers before the kernel gives it up: the bound
/// on a half-open connection (a NAT or firewall that dropped its state, a pulled cable, a frozen host: no FIN, no
/// RST, the socket stays "established"), which TCP's own retransmissions would take about 15 minutes to find.
///
/// Applied to every connection the server makes or accepts for a stream (upstream pulls, an edge's pull of its root,
/// pushes to Icecast, live sources, listeners), as two socket options:
/// - `TCP_USER_TIMEOUT`: data sent and not acknowledged for `seconds` ends the connection (`ETIMEDOUT`): a listener
///   or an Icecast whose path died, and such a connection's last bytes after a close (`FIN-WAIT-1`);
/// - keep-alive (`SO_KEEPALIVE`, first probe after `keepAliveIdle`, then every `keepAliveInterval`): a connection
///   that only receives is probed once it has been quiet that long, and with `TCP_USER_TIMEOUT` set Linux ends it
///   when a probe is unanswered `seconds` after the last byte came. A stream's own stall rules (`stall_timeout`,
///   `source_timeout`) come first where the stream must flow; this is the backstop under them, and what keeps a
///   NAT's state alive on a quiet connection.
///
/// So a dead peer is given up within `seconds` plus one probe interval of its last sign of life.
public struct PeerTimeout: Sendable, Equatable {
    public var seconds: Int

    public init(seconds: Int) { self.seconds = seconds }

    /// Quiet seconds before the first keep-alive probe: half the timeout (at least 1).
    public var keepAliveIdle: Int32 { Int32(clamping: max(1, seconds / 2)) }
    /// Seconds between probes: a sixth of the timeout (at least 1), so about three go out before it ends.
    public var keepAliveInterval: Int32 { Int32(clamping: max(1, seconds / 6)) }
    /// Unanswered probes before the kernel gives up, when `TCP_USER_TIMEOUT` does not decide first.
    public var keepAliveCount: Int32 { 3 }
    /// `TCP_USER_TIMEOUT`'s value, in milliseconds.
    public var userTimeoutMilliseconds: Int32 { Int32(clamping: min(max(1, seconds), 2_000_000) * 1000) }

    /// The longest a dead peer keeps its connection, in seconds: the timeout plus one probe interval.
    public var bound: Int { max(1, seconds) + Int(keepAliveInterval) }

    /// Sets the options on a TCP socket; the first refusal is thrown (naming the option).
    package func apply(to fd: Int32) throws(SystemError) {
        try setSocketOption(fd, SOL_SOCKET, SO_KEEPALIVE, 1, name: "SO_KEEPALIVE")
        try setSocketOption(fd, Int32(IPPROTO_TCP), TCP_KEEPIDLE, keepAliveIdle, name: "TCP_KEEPIDLE")
        try setSocketOption(fd, Int32(IPPROTO_TCP), TCP_KEEPINTVL, keepAliveInterval, name: "TCP_KEEPINTVL")
        try setSocketOption(fd, Int32(IPPROTO_TCP), TCP_KEEPCNT, keepAliveCount, name: "TCP_KEEPCNT")
        try setSocketOption(fd, Int32(IPPROTO_TCP), TCP_USER_TIMEOUT, userTimeoutMilliseconds, name: "TCP_USER_TIMEOUT")
    }
}

/// Makes the socket's close abortive (`SO_LINGER` on, 0 s): `close` sends a RST and frees the send buffer at once,
/// instead of leaving unsent bytes to a `FIN-WAIT-1` socket that retransmits them to a dead path, holding its
/// memory, for as long as TCP tries. For a connection whose unsent data no one will read (a listener dropped as too
/// slow, or whose path died).
package func setAbortiveClose(_ fd: Int32) throws(SystemError) {
    var value = linger(l_onoff: 1, l_linger: 0)
    _ = try syscall("setsockopt SO_LINGER") {
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &value, socklen_t(MemoryLayout<linger>.size))
    }
}
