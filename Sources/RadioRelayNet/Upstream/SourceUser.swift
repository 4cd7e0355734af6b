/// Who a live source is: the station's own user `source` (its `source_password`), or a DJ account (`[dj NAME]`).
/// The HTTP front end decides (`SourceGate`); the source carries it to its station, whose logs, status, page and
/// history name the DJ.
package enum SourceUser: Sendable, Equatable, CustomStringConvertible {
    case station
    case dj(String)

    /// The DJ's name; nil for the station's own user.
    package var dj: String? {
        if case .dj(let name) = self { return name }
        return nil
    }

    package var description: String {
        switch self {
        case .station: "user source"
        case .dj(let name): "DJ \(name)"
        }
    }
}
