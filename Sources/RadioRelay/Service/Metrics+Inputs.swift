import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

extension MetricsReport {
    /// Which input plays (1 for it, 0 for the others), which are up, and the switches by reason (every reason, 0
    /// included, so a rate over them starts at once).
    static func inputSamples(_ out: inout String, _ snapshot: StatusSnapshot) {
        header(&out, "input_active", .gauge, "1 for the input that plays, 0 for the station's others")
        for station in snapshot.stations {
            for input in station.inputs {
                let labels = "station=\"\(labelValue(station.name))\",input=\"\(labelValue(input.name))\""
                out += "\(prefix)input_active{\(labels)} \(input.name == station.playingInput ? 1 : 0)\n"
            }
        }
        header(&out, "input_up", .gauge, "1 while the input is connected with its audio flowing")
        for station in snapshot.stations {
            for input in station.inputs {
                let labels = "station=\"\(labelValue(station.name))\",input=\"\(labelValue(input.name))\""
                let up = input.connected && input.state != .failed
                out += "\(prefix)input_up{\(labels)} \(up ? 1 : 0)\n"
            }
        }
        // Each input's loudness stage: its gain now and its loudness (a station with `loudness` only).
        header(&out, "input_gain_db", .gauge, "The gain the loudness stage applies to the input now (dB)")
        for station in snapshot.stations {
            for input in station.inputs {
                guard let loudness = input.loudness else { continue }
                let labels = "station=\"\(labelValue(station.name))\",input=\"\(labelValue(input.name))\""
                out += "\(prefix)input_gain_db{\(labels)} \(number(loudness.gain))\n"
            }
        }
        header(&out, "input_loudness_lufs", .gauge, "The input's gated loudness over its last 10 s (LUFS)")
        for station in snapshot.stations {
            for input in station.inputs {
                guard let lufs = input.loudness?.lufs else { continue }
                let labels = "station=\"\(labelValue(station.name))\",input=\"\(labelValue(input.name))\""
                out += "\(prefix)input_loudness_lufs{\(labels)} \(number(lufs))\n"
            }
        }
        // A station that takes live sources: whether one is on the air, since when, and what it sent.
        let live = snapshot.stations.compactMap { station in
            station.inputs.first { $0.kind == .live }.map { (station.name, $0.source) }
        }
        let liveFamilies: [(name: String, help: String, value: (InputState.Source?) -> Double)] = [
            ("live_source_connected", "1 while a live source client is connected", { $0 == nil ? 0 : 1 }),
            (
                "live_source_start_seconds", "When the live source on the air connected (Unix time; 0: none)",
                { $0?.since ?? 0 }
            ),
            (
                "live_source_bytes", "Bytes the live source on the air sent on its connection",
                { Double($0?.bytes ?? 0) }
            ),
        ]
        for family in liveFamilies {
            header(&out, family.name, .gauge, family.help)
            for (name, source) in live {
                out += "\(prefix)\(family.name){station=\"\(labelValue(name))\"} \(number(family.value(source)))\n"
            }
        }
        header(&out, "input_switches_total", .counter, "Changes of the input that plays, by reason")
        for station in snapshot.stations {
            for reason in InputSelector.Reason.allCases.map(\.rawValue) {
                let labels = "station=\"\(labelValue(station.name))\",reason=\"\(labelValue(reason))\""
                out += "\(prefix)input_switches_total{\(labels)} \(station.switchCounts[reason] ?? 0)\n"
            }
        }
    }
}

extension MetricsReport {
    /// The protected stations' authentication: verdicts by outcome, listeners not even asked (too many waiting),
    /// those waiting now, and the removes by outcome (every outcome, 0 included).
    static func authenticationSamples(_ out: inout String, _ auth: AuthenticationStatus) {
        header(
            &out, "auth_verdicts_total", .counter,
            "Listener authentications (backend calls, htpasswd checks) by outcome")
        for (outcome, count) in [("admitted", auth.admitted), ("refused", auth.refused), ("failed", auth.failed)] {
            out += "\(prefix)auth_verdicts_total{outcome=\"\(outcome)\"} \(count)\n"
        }
        header(&out, "auth_over_cap_total", .counter, "Listeners not asked about: too many awaiting authentication")
        out += "\(prefix)auth_over_cap_total \(auth.overCap)\n"
        header(&out, "auth_waiting", .gauge, "Listeners awaiting their backend's verdict now")
        out += "\(prefix)auth_waiting \(auth.waiting)\n"
        header(
            &out, "auth_removes_total", .counter,
            "listener_remove calls by outcome (unsent: dropped at the stop or over the cap)")
        for (outcome, count) in [
            ("sent", auth.removesSent), ("failed", auth.removesFailed), ("unsent", auth.removesUnsent),
        ] {
            out += "\(prefix)auth_removes_total{outcome=\"\(outcome)\"} \(count)\n"
        }
    }
}
