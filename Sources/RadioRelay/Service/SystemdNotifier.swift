import CSystemd
import Glibc

/// sd_notify messages to the service manager (`sd_notify`); does nothing when not started by systemd.
package struct SystemdNotifier: Sendable {
    /// Half the watchdog interval systemd asked for, if it asked (`sd_watchdog_enabled`).
    package let watchdogInterval: Double?

    package init() {
        var usec: UInt64 = 0
        watchdogInterval = sd_watchdog_enabled(0, &usec) > 0 ? Double(usec) / 2e6 : nil
    }

    package func ready(status: String) { send("READY=1\nSTATUS=\(status)") }
    package func status(_ text: String) { send("STATUS=\(text)") }
    package func watchdog() { send("WATCHDOG=1") }
    package func stopping() { send("STOPPING=1") }

    private func send(_ message: String) {
        _ = sd_notify(0, message)
    }
}
