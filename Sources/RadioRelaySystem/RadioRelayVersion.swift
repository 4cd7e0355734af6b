/// The release version, shown in OpusTags, the User-Agent and `--version`.
package enum RadioRelayVersion {
    package static let string = "0.1.0"
}
