/// Moves a thread-confined value to the thread that will own it from then on. The one place where a non-Sendable
/// value crosses threads: the sender creates it, hands it over and never touches it again.
package struct Handoff<Value>: @unchecked Sendable {
    package let value: Value

    package init(value: Value) { self.value = value }
}
