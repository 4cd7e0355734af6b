import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// Every key of the option table has a reload rule, and the reload plan does what the rule says when that key alone
/// changes: a new key without a rule (or without a value to try here) fails this suite.
@Suite struct ReloadRuleTests {
    /// A value different from the default, for each key a config file has; for the rules that depend on the size of
    /// the change, one in place and one that restarts the station: within the ring and beyond it
    /// (`inPlaceWithinRing`), another MP3 upstream and an Ogg Opus root (`inPlaceWithinKind`).
    static let samples: [String: [String]] = [
        "upstream": [Fixture.path("mono-48k.mp3"), "http://root.example/main.opus"], "port": ["9301"],
        "bind": ["127.0.0.2"], "bitrate": ["128k"],
        "channels": ["1"], "page_ms": ["40", "10"], "latency": ["low"], "flush_ms": ["500"], "flush_hold_ms": ["200"],
        "burst": ["1", "60"],
        "max_lag": ["5", "600"], "max_lead": ["2"], "max_listeners": ["10"], "max_per_ip": ["3"],
        "proxy_protocol": ["yes"], "proxy_from": ["10.0.0.1"], "complexity": ["5"], "pace": ["yes"],
        "reconnect_max": ["60"], "connect_timeout": ["3"], "stall_timeout": ["4"], "peer_timeout": ["30"],
        "standby": ["hot"],
        "dead_air": ["5"], "dead_air_level": ["-40"], "recover": ["20"], "crossfade": ["1.5"],
        "loudness": ["-16", "-23"], "true_peak": ["-2", "off"], "title": ["Station ID"],
        "source_password": ["hackme-live-1"], "source_timeout": ["5"],
        "chain_titles": ["yes"], "hls": ["no"], "mp3": ["yes"], "mp3_port": ["9302"],
        "hls_segment": ["4"], "hls_window": ["10"], "mount": ["other.opus"], "display_name": ["Jazz"],
        "description": ["All jazz"], "genre": ["jazz"], "url": ["https://jazz.example.org/"],
        "push": ["icecast://source:pw@127.0.0.1:8000/jazz.opus"], "push_ca": ["(a PEM file)"],
        "status": ["127.0.0.1:9303"], "status_token": ["0123456789abcdef0123"], "status_hosts": ["relay1.example.org"],
        "admin_user": ["operator"], "admin_password": ["correct-horse-battery"],
        "http": ["9304"], "http_proxy_protocol": ["yes"], "http_proxy_from": ["10.0.0.1"],
        "public_url": ["https://radio.example.org"], "network_threads": ["3"],
        "access_log": ["/var/log/radio-relay/other.log"], "log_level": ["debug"],
        "allow": ["10.0.0.0/8, 2001:db8::/32"], "deny": ["198.51.100.0/24"], "deny_agents": ["(a file of patterns)"],
        "forwarded_from": ["127.0.0.1"], "forwarded_header": ["Forwarded"], "geoip": ["(a country database)"],
        "allow_countries": ["FR, DE"], "deny_countries": ["RU"], "max_listener_duration": ["3600"],
        "overflow": ["http://edge.example:8001/jazz.opus"],
        "listener_add": ["https://auth.example.org/add"], "listener_remove": ["https://auth.example.org/remove"],
        "auth_header": ["x-member: yes"], "auth_timeout": ["2"], "auth_failure": ["admit"],
        "htpasswd": ["(an htpasswd file)"],
        "archive": ["/var/lib/radio-relay/archive"], "archive_span": ["3600"], "archive_keep": ["7d 50G"],
        "record_live": ["/var/lib/radio-relay/shows"], "record_live_source": ["yes"], "record_live_max": ["2h"],
        "password": ["dj-password-1"], "stations": ["a, b"], "hours": ["Mon-Fri 20:00-23:00"],
        "timezone": ["Europe/Berlin"],
    ]

    /// Keys whose change matters only with another setting: what the running station has for them.
    static let contexts: [String: @Sendable (inout StationConfiguration) -> Void] = [
        "mp3_port": { $0.mp3 = true }
    ]

    static var configKeys: [OptionSpecification] { OptionSpecification.all.filter { $0.target != nil } }

    @Test func everyKeyHasARuleAndAValueToTry() {
        for option in Self.configKeys {
            #expect(option.reload != nil, "\(option.key) has no reload rule (OptionSpecification.reload)")
            #expect(Self.samples[option.key] != nil, "\(option.key): add a value to try to ReloadRuleTests.samples")
        }
        #expect(OptionSpecification.all.contains { $0.key == "status_token" && !$0.isFlag })
    }

    /// A server key that changes alone is in the plan with its rule and its values (no secret).
    @Test func eachServerKeyChangesWithItsRule() throws {
        let running = ServerConfiguration(
            server: ServerSettings(), stations: [ReloadPlanTests.station("a", port: 9300)])
        for option in OptionSpecification.serverOptions {
            guard let setting = option.serverSetting, let sample = Self.samples[option.key]?.first else { continue }
            var new = running
            #expect(setting(sample, &new.server), "\(option.key) = \(sample)")
            let plan = ReloadPlan(running: running, new: new, fits: { _ in true })
            #expect(plan.server.map(\.key) == [option.key], "\(option.key)")
            #expect(plan.server.first?.rule == option.reload, "\(option.key)")
            #expect(plan.keep == ["a"], "\(option.key): the station is not touched")
            #expect(!(plan.server.first?.new.contains("0123456789abcdef") ?? true))
            // What applies in place is applied by the option's own entry: the running value becomes the new one.
            guard case .server(_, let differs, _, let adopt)? = option.target else { continue }
            var applied = running.server
            adopt(&applied, new.server)
            #expect(!differs(applied, new.server), "\(option.key): adopt leaves the value as it ran")
            #expect(OptionSpecification.serverOption(key: option.key)?.name == option.name)
        }
        var changed = running
        changed.server.networkThreads = 4
        changed.server.accessLog = "/tmp/x.log"
        #expect(
            ReloadPlan(running: running, new: changed, fits: { _ in true }).processRestarts == [
                "reload: [server] network_threads = 4 takes a restart of the process; it stays auto until then",
                "reload: [server] access_log = /tmp/x.log takes a restart of the process; it stays none until then",
            ])
    }

    /// A station key that changes alone (in its section, or as a server default) updates the running station in
    /// place or restarts it, as its rule says; a lag or burst beyond the page ring (sized for the running ones)
    /// restarts it, a smaller one does not.
    @Test func eachStationKeyChangesWithItsRule() throws {
        let directory = temporaryPath("reload-rules")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pem = directory + "/ca.pem"
        try "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".write(
            toFile: pem, atomically: true, encoding: .utf8)
        let agents = directory + "/agents.txt"
        try "*ripper*\n".write(toFile: agents, atomically: true, encoding: .utf8)
        let countries = directory + "/countries.mmdb"
        try writeCountryDatabase(countries, [("198.51.100.0/24", "FR")])
        let htpasswd = directory + "/listeners.htpasswd"
        try "alice:\(ListenerAuthTests.vectors[0])\n".write(toFile: htpasswd, atomically: true, encoding: .utf8)
        let files = ["push_ca": pem, "deny_agents": "@" + agents, "geoip": countries, "htpasswd": htpasswd]
        var base = StationConfiguration()
        base.name = "a"
        base.upstream = Fixture.path("stereo-44k-128k.mp3")
        base.broadcaster.bind = "127.0.0.1"
        base.broadcaster.port = 0
        for option in OptionSpecification.stationSettings {
            guard let setting = option.setting, let samples = Self.samples[option.key] else { continue }
            var running = base
            Self.contexts[option.key]?(&running)
            let station = try Station(running)  // bound, not started: canUpdate reads its rings
            for (index, sample) in samples.enumerated() {
                var new = running
                if option.key == "upstream" { new.upstreams = [] }  // the sample replaces the upstream
                #expect(setting(files[option.key] ?? sample, &new), "\(option.key) = \(sample)")
                let plan = ReloadPlan(running: [running], new: [new], fits: station.ringsHold)
                let expected: ReloadRule
                switch option.reload {
                case .inPlaceWithinRing?, .inPlaceWithinKind?: expected = index == 0 ? .inPlace : .restartsStation
                case let rule?: expected = rule
                case nil: expected = .restartsProcess
                }
                switch expected {
                case .inPlace:
                    #expect(plan.update.map(\.name) == ["a"], "\(option.key) = \(sample): \(plan)")
                case .restartsStation:
                    #expect(plan.restart.map(\.name) == ["a"], "\(option.key) = \(sample): \(plan)")
                    #expect(plan.restartKeys["a"] == [option.key] || option.reload == .inPlaceWithinRing)
                case .inPlaceWithinRing, .inPlaceWithinKind, .restartsProcess:
                    Issue.record("\(option.key): \(expected) for a station")
                }
            }
        }
    }
}
