import Foundation
import Glibc
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// The demo recording shipped with the package: what the default station plays when given nothing.
package enum BundledSample {
    /// SwiftPM's resource folder for this module, copied beside the executable by `swift build` (and by an install).
    static let resourceFolder = "radio-relay_RadioRelay.resources"

    /// Path of demo.mp3 (24 s, 44.1 kHz stereo, 128 kb/s), or nil when it is not installed.
    ///
    /// Looked up by hand instead of through `Bundle.module`, whose generated accessor ends the process with
    /// `fatalError` when the folder is missing (a binary copied without it); here that is a clear error instead.
    package static var path: String? {
        candidates.first { FileManager.default.isReadableFile(atPath: $0) }
    }

    /// Where it may be: beside the running executable (a build or an install), then the installed data folders.
    static var candidates: [String] {
        var folders: [String] = []
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            folders.append((executable as NSString).deletingLastPathComponent + "/" + resourceFolder)
        }
        folders.append(Bundle.main.bundlePath + "/" + resourceFolder)
        folders += ["/usr/local/share/radio-relay", "/usr/share/radio-relay"]
        return folders.map { $0 + "/demo.mp3" }
    }
}
