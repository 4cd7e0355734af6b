import Foundation

/// The demo recording shipped with the package: what `transcode` and the default station use when given nothing.
public enum BundledSample {
    /// Path of demo.mp3 (24 s, 44.1 kHz stereo, 128 kb/s), found in the package's resource bundle.
    public static var path: String? {
        Bundle.module.url(forResource: "demo", withExtension: "mp3")?.path
    }
}
