import RadioRelaySystem
import Synchronization

/// One admitted listener's number — a raw or HTTP stream listener, a title-event subscriber or an HLS session — as
/// Icecast numbers its clients (`client` in its admin answers, `killclient id=`): a decimal integer, unique in the
/// process and never reused while it runs (1, 2, 3 … in the order they were admitted, whatever the kind). Two runs
/// of the server count from 1 each: the access log names the run (`run`) beside each ID, so their lines are never
/// confused.
package struct ListenerID: Hashable, Comparable, Sendable, CustomStringConvertible {
    package let value: UInt64

    package init(_ value: UInt64) { self.value = value }

    /// The decimal text of `value`, or nil for anything else (a sign, a space, a leading `+`, too many digits).
    package init?(_ text: Substring) {
        guard !text.isEmpty, text.utf8.count <= 20, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let value = UInt64(text)
        else { return nil }
        self.value = value
    }

    package var description: String { String(value) }

    package static func < (lhs: ListenerID, rhs: ListenerID) -> Bool { lhs.value < rhs.value }

    /// The next ID of this process.
    package static func next() -> ListenerID { ListenerID(counter.add(1, ordering: .relaxed).newValue) }

    private static let counter = Atomic<UInt64>(0)

    /// This run of the process: eight hex digits drawn once when it is first asked for (`getrandom`).
    package static let run: String = {
        var generator = SystemRandomNumberGenerator()
        let value = UInt32.random(in: .min ... .max, using: &generator)
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 8 - hex.count) + hex
    }()
}
