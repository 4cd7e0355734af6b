import CLinux
import CSystemd
import Glibc
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem
import Synchronization

/// sd_notify messages to the service manager (`sd_notify`); does nothing when not started by systemd. A message
/// that cannot be sent (the socket is gone) is logged once, then counted.
package final class SystemdNotifier: Sendable {
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
    /// A reload begins (`RELOADING=1` with the monotonic time systemd wants next to it); `ready` ends it.
    package func reloading() {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        send("RELOADING=1\nMONOTONIC_USEC=\(Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1_000)")
    }

    /// Messages sd_notify could not send.
    package let failures = Atomic<Int>(0)

    private func send(_ message: String) {
        let result = sd_notify(0, message)
        guard result < 0 else { return }
        if failures.add(1, ordering: .relaxed).newValue == 1 {
            Log.warning(
                "cannot notify systemd: \(SystemError("sd_notify", errno: -result)); later failures are counted")
        }
    }
}
