import Glibc

/// The process's exit status, from BSD's sysexits.h so that service managers and scripts can tell a mistake that a
/// restart will not fix (64 usage, 78 configuration) from one that may pass (69 unavailable: a port in use, an
/// upstream that fails).
package enum ExitCode: Int32, Sendable, CaseIterable {
    case ok = 0
    /// EX_USAGE: the command line is wrong.
    case usage = 64
    /// EX_DATAERR: the input is not what it should be (not MP3).
    case dataError = 65
    /// EX_NOINPUT: the input does not exist or cannot be opened.
    case noInput = 66
    /// EX_UNAVAILABLE: something needed is not available now (a port in use, an upstream server that fails).
    case unavailable = 69
    /// EX_SOFTWARE: an error nobody planned for (a codec failure, a bug).
    case software = 70
    /// EX_OSERR: the system refused a resource (descriptors, memory for epoll, eventfd).
    case osError = 71
    /// EX_CANTCREAT: the output cannot be created or written.
    case cantCreate = 73
    /// EX_NOPERM: not allowed (a port below 1024 without the capability).
    case noPermission = 77
    /// EX_CONFIG: a setting that cannot work.
    case config = 78

}
