import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// What a reload does to one running station, read from the option table alone: each station key whose value
/// changed (`StationValue.differs`) brings its rule (`OptionSpecification.reload`), and the station is updated in
/// place unless one of them says otherwise. A kept rendition's keys are compared in the same way, on what the
/// rendition sets; renditions added or removed are made or stopped in place. A change that no key of the table
/// explains (a value no key sets) restarts the station: the table is the only place that lets one through.
package enum StationReload: Equatable, Sendable {
    /// Nothing changed.
    case keep
    /// Applied to the running station (`Station.update`).
    case update
    /// The station restarts, for these keys (`rendition NAME: KEY` for a rendition's).
    case restart([String])

    /// The keys whose change takes a station restart when the table explains none of a difference.
    static let unexplained = "a setting no key of the option table sets"
    static let beyondRing = "a lag or burst beyond the page ring"

    /// - Parameter ringsHold: whether the running station's page rings hold what `new` asks for (the rule of
    ///   `burst` and `max_lag`).
    package init(
        running: StationConfiguration, new: StationConfiguration, ringsHold: (StationConfiguration) -> Bool
    ) {
        let new = new.keepingSerials(of: running)
        guard running != new else {
            self = .keep
            return
        }
        var restarts: [String] = []
        var asksRing = false
        func apply(_ option: OptionSpecification, label: String) {
            switch option.reload {
            case .inPlace?: break
            case .inPlaceWithinRing?: asksRing = true
            case .inPlaceWithinKind?: if running.relaysOggOpus != new.relaysOggOpus { restarts.append(label) }
            case .restartsStation?, .restartsProcess?, nil: restarts.append(label)
            }
        }
        var probe = running
        for option in OptionSpecification.stationSettings {
            guard let value = option.stationValue, value.differs(running, new) else { continue }
            value.adopt(&probe, new)
            apply(option, label: option.key)
        }
        // A kept rendition: its keys, on what it sets (its encoding, listening side and mount). The station's keys
        // that it inherits (`proxy_protocol`, …) changed with the station's and were judged there.
        let renditionKeys = ConfigFileReader.renditionKeys
        for rendition in new.renditions {
            guard let was = running.renditions.first(where: { $0.name == rendition.name }) else { continue }
            var (before, after) = (running.settings(of: was), new.settings(of: rendition))
            for option in OptionSpecification.stationSettings {
                guard let value = option.stationValue, value.differs(before, after) else { continue }
                value.adopt(&before, after)
                if renditionKeys.contains(option.key) {
                    apply(option, label: "rendition \(rendition.name): \(option.key)")
                }
            }
            if before.encoder != after.encoder || before.broadcaster != after.broadcaster
                || before.customMount != after.customMount
            {
                restarts.append("rendition \(rendition.name): \(Self.unexplained)")
            }
        }
        probe.renditions = new.renditions
        // DJ accounts that list the station (`[dj NAME]`, no key of its own) apply in place, as `source_password` does.
        probe.liveAccounts = new.liveAccounts
        if probe != new { restarts.append(Self.unexplained) }
        if asksRing && !ringsHold(new) { restarts.append(Self.beyondRing) }
        self = restarts.isEmpty ? .update : .restart(restarts)
    }
}

extension StationConfiguration {
    /// These settings with the Ogg serials of `running`'s outputs (the main one, and each rendition of the same
    /// name): a config file gives every output a fresh random serial when it is read, and the running stream keeps
    /// its own, or no station would ever count as unchanged.
    package func keepingSerials(of running: StationConfiguration) -> StationConfiguration {
        var settings = self
        settings.encoder.serial = running.encoder.serial
        for index in settings.renditions.indices {
            let name = settings.renditions[index].name
            guard let kept = running.renditions.first(where: { $0.name == name }) else { continue }
            settings.renditions[index].encoder.serial = kept.encoder.serial
        }
        return settings
    }

    /// The station's settings as rendition `rendition` has them (its encoding, listening side and mount over the
    /// station's): what a reload compares a kept rendition's keys on.
    func settings(of rendition: RenditionConfiguration) -> StationConfiguration {
        var settings = self
        settings.encoder = rendition.encoder
        settings.broadcaster = rendition.broadcaster
        settings.customMount = rendition.mount
        return settings
    }
}
