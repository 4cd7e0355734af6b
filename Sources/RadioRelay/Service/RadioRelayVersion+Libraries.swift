import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

extension RadioRelayVersion {
    /// The versions of the C libraries doing the work, as they report themselves at run time.
    package static var libraries: String {
        "\(OpusEncoderHandle.libraryVersion), \(CurlTransfer.libraryVersion), \(MPG123Decoder.libraryVersion)"
    }
}
