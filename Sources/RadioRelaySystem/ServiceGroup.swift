/// Something the server starts and stops: a station, the HTTP front end, the status endpoint.
package protocol Service: AnyObject, Sendable {
    var name: String { get }
    func start() throws
    /// Stops and joins everything the service started; returns false if a thread outlived `timeout` seconds.
    func stop(timeout: Double) -> Bool
}

/// Services started in order and stopped in reverse, each within a timeout. If one fails to start, those already
/// started are stopped again before the error is passed on, so a failed start leaves nothing running.
package final class ServiceGroup: Sendable {
    package let services: [any Service]
    private let started = LockedBox(0)

    package init(_ services: [any Service]) { self.services = services }

    package func start() throws {
        for service in services {
            do {
                try service.start()
            } catch {
                stop(timeout: 5)
                throw error
            }
            started.withLock { $0 += 1 }
        }
    }

    /// Stops the started services in reverse order; returns false if any outlived the timeout.
    @discardableResult
    package func stop(timeout: Double = 10) -> Bool {
        var clean = true
        while let service = started.withLock({ count -> (any Service)? in
            guard count > 0 else { return nil }
            count -= 1
            return services[count]
        }) {
            if !service.stop(timeout: timeout) { clean = false }
        }
        return clean
    }
}
