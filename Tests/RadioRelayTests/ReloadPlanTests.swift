import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// What a reload does, from the old and new configurations alone.
@Suite struct ReloadPlanTests {
    static func station(_ name: String, port: Int, configure: (inout StationConfiguration) -> Void = { _ in })
        -> StationConfiguration
    {
        var configuration = StationConfiguration()
        configuration.name = name
        configuration.upstream = "http://example.org/\(name).mp3"
        configuration.broadcaster.port = port
        configuration.encoder.serial = UInt32(port)
        configure(&configuration)
        return configuration
    }

    @Test func eachStationIsKeptUpdatedRestartedStartedOrStopped() {
        let running = [
            Self.station("same", port: 8001), Self.station("limits", port: 8002), Self.station("mono", port: 8003),
            Self.station("gone", port: 8004),
        ]
        let new = [
            Self.station("same", port: 8001) { $0.encoder.serial = 99 },  // a fresh serial from a re-read file
            Self.station("limits", port: 8002) {
                $0.broadcaster.maxListeners = 10
                $0.upstream = "http://example.org/other.mp3"
                $0.encoder.bitrate = 128_000
            },
            Self.station("mono", port: 8003) { $0.encoder.channels = 1 },
            Self.station("new", port: 8005),
        ]
        let plan = ReloadPlan(running: running, new: new) { _ in true }
        #expect(plan.keep == ["same"])
        #expect(plan.update.map(\.name) == ["limits"])
        #expect(plan.restart.map(\.name) == ["mono"])
        #expect(plan.restartKeys == ["mono": ["channels"]])
        #expect(plan.start.map(\.name) == ["new"])
        #expect(plan.stop == ["gone"])
        #expect(plan.summary == "started new; stopped gone; updated limits; restarted mono; unchanged same")
        // What happened: a restart or start that failed is never reported as done.
        #expect(
            plan.summary(failed: ["mono", "new"])
                == "stopped gone; updated limits; unchanged same; failed mono, new")
    }

    /// A rendition inherits the station's listening keys (`proxy_protocol`, `proxy_from`): changed with the
    /// station's, they are judged by the station key's rule, not as something no key explains.
    @Test func aKeyARenditionInheritsIsJudgedAsTheStations() {
        var rendition = RenditionConfiguration(name: "low")
        rendition.broadcaster.port = 8011
        let running = Self.station("jazz", port: 8010) { $0.renditions = [rendition] }
        var inherited = running
        inherited.broadcaster.proxyProtocol = true
        inherited.renditions[0].broadcaster.proxyProtocol = true
        inherited.broadcaster.proxyFrom = TrustedProxies(parsing: "10.0.0.5")
        inherited.renditions[0].broadcaster.proxyFrom = TrustedProxies(parsing: "10.0.0.5")
        #expect(StationReload(running: running, new: inherited, ringsHold: { _ in true }) == .update)
        var channels = running
        channels.renditions[0].encoder.channels = 1
        #expect(
            StationReload(running: running, new: channels, ringsHold: { _ in true })
                == .restart(["rendition low: channels"]))
        var port = running
        port.renditions[0].broadcaster.port = 8012
        #expect(
            StationReload(running: running, new: port, ringsHold: { _ in true }) == .restart(["rendition low: port"]))
    }

    @Test func anEmptyReloadSaysSo() {
        #expect(ReloadPlan(running: [], new: [], fits: { _ in true }).summary == "no stations")
    }
}
