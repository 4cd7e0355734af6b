/// The release version, shown in OpusTags, the User-Agent and `--version`.
public enum RadioRelayVersion {
    public static let string = "0.1.0"
}
