import COpus

/// A libopus error code and its text (`opus_strerror`).
public struct OpusError: Error, CustomStringConvertible {
    public let code: Int32
    public let call: String

    package init(code: Int32, call: String) {
        self.code = code
        self.call = call
    }

    public var description: String { "libopus \(call): \(String(cString: opus_strerror(code)))" }
}
