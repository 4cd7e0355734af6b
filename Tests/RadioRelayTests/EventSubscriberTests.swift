import Foundation
import Glibc
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// Who may hold a title event stream, as a pure value, and when a subscriber that takes nothing is dropped (virtual
/// time).
@Suite struct EventSubscriberTests {
    static let first = HostKey(SocketAddress(host: "192.0.2.1", port: 1)!)
    static let second = HostKey(SocketAddress(host: "192.0.2.2", port: 1)!)

    static func refusal(
        _ subscribers: EventSubscribers, mount: String = "/a.opus", host: HostKey = first, listeners: Int = 0,
        maxListeners: Int = 0, maxPerIP: Int = 0, budget: Int = 20_000
    ) -> String? {
        subscribers.refusal(
            mount: mount, host: host, listeners: listeners, maxListeners: maxListeners, maxPerIP: maxPerIP,
            budgetLimit: budget)
    }

    /// One address has 64 subscriptions across every mount together, even with `max_per_ip = 0`: opening them on
    /// several mounts does not multiply the cap.
    @Test func oneCapPerAddressAcrossEveryMount() {
        var subscribers = EventSubscribers()
        for index in 0..<64 {
            let mount = ["/a.opus", "/b.opus", "/c.mp3"][index % 3]
            #expect(Self.refusal(subscribers, mount: mount) == nil)
            subscribers.add(mount: mount, host: Self.first)
        }
        for mount in ["/a.opus", "/b.opus", "/c.mp3", "/d.opus"] {
            #expect(Self.refusal(subscribers, mount: mount) == "too many event streams from one address (64)")
        }
        #expect(Self.refusal(subscribers, host: Self.second) == nil)
        subscribers.remove(mount: "/b.opus", host: Self.first)
        #expect(Self.refusal(subscribers, mount: "/d.opus") == nil)
        #expect(subscribers.total == 63 && subscribers.perMount["/b.opus"] == 20)
    }

    /// The station's `max_per_ip`, when smaller, is the address's cap; `max_listeners` counts listeners and the
    /// mount's subscribers together.
    @Test func theStationsLimitsApplyToo() {
        var subscribers = EventSubscribers()
        subscribers.add(mount: "/a.opus", host: Self.first)
        subscribers.add(mount: "/b.opus", host: Self.first)
        #expect(Self.refusal(subscribers, maxPerIP: 2) == "too many event streams from one address (2)")
        #expect(Self.refusal(subscribers, maxPerIP: 3) == nil)
        #expect(
            Self.refusal(subscribers, listeners: 9, maxListeners: 10) == "station full (10 listeners and subscribers)")
        #expect(Self.refusal(subscribers, mount: "/c.opus", listeners: 9, maxListeners: 10) == nil)
        #expect(Self.refusal(subscribers, listeners: Int.max, maxListeners: 10) != nil)
    }

    /// Subscribers together hold at most a quarter of the server's listener places, so that audio listeners always
    /// have the rest, whatever the number of addresses; with no budget set there is no such cap.
    @Test func subscribersHoldAtMostAQuarterOfTheListenerPlaces() {
        var subscribers = EventSubscribers()
        #expect(subscribers.ceiling(budgetLimit: 562) == 140)
        #expect(subscribers.ceiling(budgetLimit: 2) == 1)
        #expect(subscribers.ceiling(budgetLimit: Int.max) == Int.max)
        for index in 0..<140 {
            subscribers.add(
                mount: "/a.opus", host: HostKey(SocketAddress(host: "10.0.\(index / 200).\(index % 200)", port: 1)!))
        }
        #expect(
            Self.refusal(subscribers, host: Self.second, budget: 562)
                == "too many event streams (140: a quarter of the server's listener places)")
        #expect(Self.refusal(subscribers, host: Self.second, budget: 564) == nil)
        #expect(EventSubscribers(perAddress: 5, share: .nan).share == 0.25)
    }

    /// A subscriber whose socket takes nothing for two keep-alives is stalled; one that drains in between is not.
    @Test func aSubscriberBackedUpForThirtySecondsIsStalled() {
        var stream = EventStream(now: 0)
        stream.noteBackedUp(true, now: 10)
        #expect(!stream.isStalled(now: 39.9))
        stream.noteBackedUp(true, now: 25)  // still backed up: the time counts from the first
        #expect(stream.isStalled(now: 40))
        stream.noteBackedUp(false, now: 41)
        #expect(!stream.isStalled(now: 100))
        stream.noteBackedUp(true, now: 100)
        #expect(!stream.isStalled(now: 129) && stream.isStalled(now: 130))
    }
}
