import Glibc

/// Faults the end-to-end tests inject into the real binary through the environment. Documented in CONTRIBUTING.md;
/// nothing reads them unless the variable is set.
///
/// - `RADIO_RELAY_TEST_HANG_PIPELINE=NAME:SECONDS`: SECONDS after it starts, the pipeline thread of station NAME
///   stops working and stops beating (it only waits to be asked to stop), as a thread stuck in a bug would, so the
///   watchdog has a hung thread to notice.
package enum TestHooks {
    package struct Hang: Equatable, Sendable {
        package let station: String
        package let after: Double
    }

    package static let hangPipeline: Hang? = parse(getenv("RADIO_RELAY_TEST_HANG_PIPELINE").map { String(cString: $0) })

    /// `NAME:SECONDS`, or nil for anything else.
    package static func parse(_ text: String?) -> Hang? {
        guard let text, let colon = text.lastIndex(of: ":"),
            let seconds = Double(text[text.index(after: colon)...]), seconds.isFinite, seconds >= 0
        else { return nil }
        let name = String(text[..<colon])
        return name.isEmpty ? nil : Hang(station: name, after: seconds)
    }
}
