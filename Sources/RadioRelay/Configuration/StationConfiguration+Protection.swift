import RadioRelayNet
import RadioRelaySystem

extension StationConfiguration {
    /// A protected station (`listener_add`, `htpasswd`) has no raw TCP port on any output: raw TCP carries no
    /// credentials, so a listener there would skip the check. Its listeners come over HTTP (streams and HLS).
    func validateProtection() throws {
        guard authentication.isOn else { return }
        let why =
            "station \(name): protected (\(authentication.addURL != nil ? "listener_add" : "htpasswd")), and raw TCP "
            + "carries no credentials"
        if broadcaster.rawListeners {
            throw ConfigurationError(
                "\(why): set port = none (its listeners come to the HTTP address), or remove the protection")
        }
        if mp3 && mp3Port != 0 {
            throw ConfigurationError("\(why): remove mp3_port (the MP3 output is served at /NAME.mp3 over HTTP)")
        }
        if let open = renditions.first(where: { $0.broadcaster.rawListeners }) {
            throw ConfigurationError(
                "\(why): give rendition \(open.name) no raw port (\(open.name):none:BITRATE, or port = none in its "
                    + "section)")
        }
    }
}
