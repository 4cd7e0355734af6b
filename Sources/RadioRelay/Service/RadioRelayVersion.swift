/// The release version, shown in OpusTags, the User-Agent and `--version`.
package enum RadioRelayVersion {
    package static let string = "0.1.0"

    /// The versions of the C libraries doing the work, as they report themselves at run time.
    package static var libraries: String {
        "\(OpusEncoderHandle.libraryVersion), \(CurlTransfer.libraryVersion), \(MPG123Decoder.libraryVersion)"
    }
}
