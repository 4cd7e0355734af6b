import CSystemd
import Foundation

/// sd_notify messages to the service manager (`sd_notify`); does nothing when not started by systemd.
public struct SystemdNotifier: Sendable {
    /// Half the watchdog interval systemd asked for, if it asked (`sd_watchdog_enabled`).
    public let watchdogInterval: Double?

    public init() {
        var usec: UInt64 = 0
        watchdogInterval = sd_watchdog_enabled(0, &usec) > 0 ? Double(usec) / 2e6 : nil
    }

    public func ready(status: String) { send("READY=1\nSTATUS=\(status)") }
    public func status(_ text: String) { send("STATUS=\(text)") }
    public func watchdog() { send("WATCHDOG=1") }
    public func stopping() { send("STOPPING=1") }

    private func send(_ message: String) {
        _ = sd_notify(0, message)
    }
}
