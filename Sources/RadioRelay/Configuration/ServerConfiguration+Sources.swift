import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

extension ServerConfiguration {
    /// What live sources need of the whole server: an HTTP address to connect to, paths that no other station's mount
    /// takes (a source for `/NAME` must not reach another station), and `/admin/` left to the admin calls. Each
    /// problem with the index of the station it is about.
    static func sourceProblems(server: ServerSettings, stations: [StationConfiguration]) -> [(Int, String)] {
        var problems: [(Int, String)] = []
        let mounts = stations.enumerated().flatMap { index, station in
            station.outputSettings.map { (index, "/" + $0.mount) }
        }
        for (index, path) in mounts where PublicDirectory.directory(forMount: path).hasPrefix("/admin/") {
            problems.append(
                (
                    index,
                    "station \(stations[index].name): mount \(path): /admin/ is the source clients' (Icecast's admin calls)"
                ))
        }
        for (index, station) in stations.enumerated() where station.takesLiveSources {
            if server.http == nil {
                problems.append(
                    (
                        index,
                        "station \(station.name): \(station.sourcePassword != nil ? "source_password" : "a DJ account") takes live "
                            + "sources on the HTTP address: set http in "
                            + "[server] (or --http)"
                    ))
            }
            for path in station.sourcePaths {
                guard let (other, _) = mounts.first(where: { $0.1 == path && $0.0 != index }) else { continue }
                problems.append(
                    (
                        index,
                        "station \(station.name): a live source for \(path) would be taken by station "
                            + "\(stations[other].name)'s mount of that path: rename one"
                    ))
            }
        }
        return problems
    }
}
