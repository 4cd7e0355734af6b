import CLinux
import Glibc
import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// One host name resolved off the caller's thread: `getaddrinfo` runs on a detached thread of its own, so a DNS
/// server that never answers (the resolver's own timeouts can add up to minutes) holds that thread, never the
/// pipeline's — its heartbeat, `/health` and its stop go on. The caller polls `result` with its own deadline and
/// simply drops the resolution when it is late; the thread ends when `getaddrinfo` does.
///
/// Bounded: at most `maxInFlight` resolutions run at once in the process (a station retrying a dead resolver every
/// few seconds would otherwise pile up threads); beyond, `start` fails and the caller retries later.
package final class NameResolution: Sendable {
    package static let maxInFlight = 8
    private static let inFlight = Atomic<Int>(0)

    package enum Outcome: Sendable {
        case address(SocketAddress)
        case failed(String)
    }

    private let outcome = LockedBox<Outcome?>(nil)
    package let host: String

    private init(host: String) { self.host = host }

    /// Starts resolving `host` (for `port`); nil when `maxInFlight` resolutions run already or no thread starts.
    package static func start(_ host: String, port: UInt16) -> NameResolution? {
        guard inFlight.add(1, ordering: .relaxed).newValue <= maxInFlight else {
            inFlight.subtract(1, ordering: .relaxed)
            return nil
        }
        let resolution = NameResolution(host: host)
        let work = Work(resolution: resolution, port: port)
        let context = Unmanaged.passRetained(work).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let result = pthread_create(
            &thread, &attributes,
            { context in
                guard let context else { return nil }
                Unmanaged<Work>.fromOpaque(context).takeRetainedValue().run()
                return nil
            }, context)
        guard result == 0 else {
            Unmanaged<Work>.fromOpaque(context).release()
            inFlight.subtract(1, ordering: .relaxed)
            return nil
        }
        return resolution
    }

    /// The outcome once `getaddrinfo` returned; nil while it runs.
    package var result: Outcome? { outcome.snapshot }

    private final class Work: Sendable {
        let resolution: NameResolution
        let port: UInt16

        init(resolution: NameResolution, port: UInt16) {
            self.resolution = resolution
            self.port = port
        }

        func run() {
            _ = rr_thread_set_name("resolve")
            let found = NameResolution.resolve(resolution.host, port: port)
            resolution.outcome.withLock { $0 = found }
            NameResolution.inFlight.subtract(1, ordering: .relaxed)
        }
    }

    /// The first address `getaddrinfo` gives for a name.
    package static func resolve(_ host: String, port: UInt16) -> Outcome {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            return .failed("cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        guard let address = first.pointee.ai_addr else { return .failed("cannot resolve \(host): no address") }
        var storage = sockaddr_storage()
        let length = min(Int(first.pointee.ai_addrlen), MemoryLayout<sockaddr_storage>.size)
        withUnsafeMutableBytes(of: &storage) {
            $0.copyMemory(from: UnsafeRawBufferPointer(start: address, count: length))
        }
        return .address(SocketAddress(storage: storage, length: socklen_t(length)))
    }
}
