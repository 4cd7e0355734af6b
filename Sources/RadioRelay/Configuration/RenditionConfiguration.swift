import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// One more output of a station: the same decoded audio encoded again with its own settings (a 32 kb/s mono stream
/// beside the 128 kb/s stereo one), with its own page ring, listening port, mount and listener limits.
///
/// The station decodes its upstream once; every output's Encoder takes the same common-format buffers. A rendition's
/// listeners are served by its own Broadcaster (network thread and ring), so its slow listeners never touch another
/// output's.
public struct RenditionConfiguration: Sendable, Equatable {
    /// `[A-Za-z0-9_-]{1,64}`, unique in its station, not `main` (the name metrics and status give the station's own
    /// output).
    public var name: String
    /// The HTTP mount path, without the leading `/`; nil: `STATION-NAME.opus`.
    public var mount: String?
    public var encoder = EncoderConfiguration()
    public var broadcaster = BroadcasterConfiguration()

    public init(name: String) { self.name = name }

    /// The name the station's own output goes by in metrics and status, which no rendition may take.
    public static let mainName = "main"

    /// The mount it is served at in station `station`.
    public func mount(in station: String) -> String { mount ?? "\(station)-\(name).opus" }
}

/// The names of stations and renditions, and mount paths: plain text, since they appear in URLs, metric labels,
/// socket names and log lines.
enum StationNames {
    static let rule = "1 to 64 of A-Z a-z 0-9 _ -"
    static let mountRule = "1 to 128 of A-Z a-z 0-9 _ - . not starting with a dot"

    /// `[A-Za-z0-9_-]{1,64}`.
    static func isValid(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count) && name.utf8.allSatisfy(isNameByte)
    }

    /// One path segment of a URL: 1 to 128 of `A-Z a-z 0-9 _ - .`, not starting with a dot.
    static func isValidMount(_ mount: String) -> Bool {
        (1...128).contains(mount.utf8.count) && !mount.hasPrefix(".")
            && mount.utf8.allSatisfy { isNameByte($0) || $0 == UInt8(ascii: ".") }
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        default: return false
        }
    }
}
