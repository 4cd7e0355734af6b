import CLinux
import Glibc

/// An epoll instance with its own event buffer: the descriptor is owned (closed in `deinit`), every `epoll_ctl` is
/// checked, and `wait` fills a buffer allocated once, so the loop allocates nothing per wake-up.
/// Each registered descriptor carries a 64-bit tag that `wait` hands back (the loop uses the fd or a marker).
package struct Epoll: ~Copyable {
    /// The most events one `wait` returns (the C shim's own buffer holds 256).
    package static let maxEvents = 256

    private let descriptor: FileDescriptor
    private let masks: UnsafeMutablePointer<UInt32>
    private let tags: UnsafeMutablePointer<UInt64>
    package let capacity: Int

    package init(capacity: Int = Epoll.maxEvents) throws(SystemError) {
        descriptor = try .opening("epoll_create1") { rr_epoll_create() }
        self.capacity = max(1, min(capacity, Self.maxEvents))
        masks = .allocate(capacity: self.capacity)
        tags = .allocate(capacity: self.capacity)
    }

    deinit {
        masks.deallocate()
        tags.deallocate()
    }

    package var rawValue: Int32 { descriptor.rawValue }

    /// Starts watching `fd` for `events` (`EPOLLIN.rawValue | …`).
    package func add(_ fd: Int32, events: UInt32, tag: UInt64) throws(SystemError) {
        try control(EPOLL_CTL_ADD, fd, events, tag, "epoll_ctl ADD")
    }

    /// Changes what `fd` is watched for.
    package func modify(_ fd: Int32, events: UInt32, tag: UInt64) throws(SystemError) {
        try control(EPOLL_CTL_MOD, fd, events, tag, "epoll_ctl MOD")
    }

    /// Stops watching `fd` (closing it does that too, once no other descriptor refers to the same file).
    package func remove(_ fd: Int32) throws(SystemError) {
        try control(EPOLL_CTL_DEL, fd, 0, 0, "epoll_ctl DEL")
    }

    private func control(_ op: Int32, _ fd: Int32, _ events: UInt32, _ tag: UInt64, _ call: String)
        throws(SystemError)
    {
        _ = try syscall(call) { rr_epoll_ctl(descriptor.rawValue, op, fd, events, tag) }
    }

    /// Waits up to `timeoutMilliseconds` (-1: forever) and returns how many events are ready; read them with
    /// `event(at:)` before the next `wait`. An interrupted wait is retried.
    package func wait(timeoutMilliseconds: Int32) throws(SystemError) -> Int {
        let count = try syscall("epoll_wait") {
            rr_epoll_wait(descriptor.rawValue, masks, tags, Int32(capacity), timeoutMilliseconds)
        }
        return Int(count)
    }

    /// The `index`th event of the last `wait`: the registered tag and the ready mask.
    package func event(at index: Int) -> (tag: UInt64, events: UInt32) {
        precondition(index >= 0 && index < capacity)
        return (tags[index], masks[index])
    }
}

@available(*, unavailable) extension Epoll: Sendable {}
