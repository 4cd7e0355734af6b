/// Moves a thread-confined value to the thread that will own it from then on. The one place where a non-Sendable
/// value crosses threads: the sender creates it, hands it over and never touches it again.
struct Handoff<Value>: @unchecked Sendable {
    let value: Value
}
