import RadioRelayMedia
import RadioRelaySystem

/// A writer thread's troubles with its disk (the archive's, the recorder's), confined to that thread: the failure it
/// waits out — what the log said, when to try again, how many pages it dropped since — and its lines a storm could
/// repeat, at most one a minute per topic. Each line starts with `prefix` (`main: archive`).
struct DiskTrouble {
    struct Failure {
        var message: String
        var retryAt: Double
        var dropped: Int
    }

    let prefix: String
    var failure: Failure?
    var logLimit = LogRateLimit<String>(limit: 1, window: 60)

    init(prefix: String) { self.prefix = prefix }

    /// Whether a new file may be tried now: always, unless a failure's retry time is still to come.
    func mayOpen() -> Bool {
        guard let failure else { return true }
        return wallClockNow() >= failure.retryAt
    }

    mutating func dropped(_ count: Int) { failure?.dropped += count }

    /// A failure: logged once until the writer writes again (pages are dropped from `what` meanwhile); the next
    /// file is tried after `ArchiveSettings.retryInterval`.
    mutating func failed(_ message: String, what: String) {
        if failure == nil {
            Log.error(
                "\(prefix): \(message): pages are dropped from \(what) until it can write again "
                    + "(tried every \(Int(ArchiveSettings.retryInterval)) s)")
        }
        failure = Failure(
            message: message, retryAt: wallClockNow() + ArchiveSettings.retryInterval, dropped: failure?.dropped ?? 0)
    }

    /// The writer wrote in `name` again: the failure is over, and a line says so.
    mutating func recovered(in name: String) {
        guard let failure else { return }
        Log.notice(
            "\(prefix): writing again, in \(name), after \(failure.dropped) pages dropped (the failure that ended: "
                + "\(failure.message))")
        self.failure = nil
    }

    /// A warning a storm could repeat: once a minute per topic.
    mutating func note(_ topic: String, _ line: String) {
        switch logLimit.admit(topic, now: monotonicNow()) {
        case .write: Log.warning("\(prefix): \(line)")
        case .writeAfter(let suppressed): Log.warning("\(prefix): \(line) (and \(suppressed) more like it)")
        case .suppress: break
        }
    }

    /// How many lines each topic left out, once its minute is over.
    mutating func summarize() {
        while let (topic, suppressed) = logLimit.summary(now: monotonicNow()) {
            Log.warning("\(prefix): \(suppressed) more lines about \(topic) left out")
        }
    }
}
