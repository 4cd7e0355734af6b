import Glibc
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

extension ExitCode {
    /// The status for the error that ended the process, chosen by the error's type and kind.
    package init(for error: any Error) {
        switch error {
        case is UsageError: self = .usage
        case is ConfigurationError, is ConfigFileError: self = .config
        case is OutputError: self = .cantCreate
        case is TranscodeError: self = .dataError
        case let error as DownloadError: self = Self.code(for: error.kind)
        case let error as SystemError: self = Self.code(forErrno: error.errno)
        default: self = .software
        }
    }

    fileprivate static func code(for kind: DownloadError.Kind) -> ExitCode {
        switch kind {
        case .file, .badURL: return .noInput
        case .httpStatus(let status) where (400..<500).contains(status): return .noInput
        case .httpStatus, .transfer: return .unavailable
        }
    }

    fileprivate static func code(forErrno errno: Int32) -> ExitCode {
        switch errno {
        case EADDRINUSE, EADDRNOTAVAIL: return .unavailable
        case EACCES, EPERM: return .noPermission
        default: return .osError
        }
    }
}
