import Glibc
import RadioRelay
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// What one run of the load tool does, from the command line.
struct LoadOptions {
    var host = "127.0.0.1"
    var port = 0
    var count = 0
    var duration = 0.0
    /// Seconds over which the connections are opened; nil: as fast as `maxConnectRate` allows.
    var ramp: Double?
    /// HTTP path to request (Icecast); nil: raw TCP, send nothing.
    var httpPath: String?
    /// Ask for ICY titles in band (`Icy-MetaData: 1`) with `--http`.
    var icyMetadata = false
    var slowCount = 0
    var slowRate = 0.25
    /// Bytes per second a slow listener reads; nil: `slowRate` × `normalBytesPerSecond`.
    var slowBytesPerSecond: Double?
    /// SO_RCVBUF for slow listeners (0: kernel default, which can hold ~10 s of audio before the server notices).
    var slowReceiveBuffer = 0
    var normalBytesPerSecond = 12_000.0
    var connectTimeout = 10.0
    /// Seconds without data at the end of the run after which an open listener counts as stuck.
    var stuckAfter = 5.0
    var jsonPath: String?
    var checkStart = true
    /// IPv4 source addresses the connections are spread over (127.0.0.1 … 127.0.0.K).
    var sources = 16

    static let maxConnectRate = 2000.0

    var slowReadRate: Double { slowBytesPerSecond ?? slowRate * normalBytesPerSecond }

    static let usage = """
        radio-relay-load: N listeners on loopback that check every byte they receive as Ogg and time it.

        usage: radio-relay-load --port P -n N --duration SECONDS [options]
          --host ADDR                 127.0.0.0/8 or ::1 only (default 127.0.0.1)
          --ramp SECONDS              spread the connects over this time (default: up to 2000 connects/s)
          --http PATH                 send "GET PATH HTTP/1.0" and skip the response headers (Icecast);
                                      default: raw TCP, send nothing
          --icy                       with --http, also send "Icy-MetaData: 1" (an MP3 mount's titles in band)
          --slow K                    K of the N listeners read slowly (token bucket)
          --slow-rate F               slow listeners read at F x the normal rate (default 0.25)
          --normal-bytes-per-second B the normal rate the slow rate refers to (default 12000)
          --slow-bytes-per-second B   slow listeners' read rate in bytes/s (default F x 12000)
          --slow-rcvbuf BYTES         SO_RCVBUF of slow listeners (default: kernel's)
          --connect-timeout SECONDS   a connect not done by then fails (default 10)
          --stuck-after SECONDS       an open listener with no data for this long at the end is stuck (default 5)
          --no-start-check            do not require OpusHead/OpusTags first (e.g. a non-Opus stream)
          --sources K                 spread IPv4 connections to loopback over the source addresses 127.0.0.1 to 127.0.0.K
                                      (default 16; 1: all from 127.0.0.1). From one address, connect()'s search
                                      for a free port to one destination costs milliseconds past ~14 000
                                      connections, and the tool would take the CPU the server is measured on
          --json FILE                 also write the figures as JSON
        Times (connect, TTFB, first audio page) run from the connect() call; TTFB counts any byte, HTTP headers
        included; the longest stall is the largest gap between reads with data after the first audio page (the
        silence at the end of the run is left out and counted as "stuck" past --stuck-after instead); the JSON's
        stall_ms_open_at_end is the same over the listeners still open at the end (the server did not drop them).
        Exit code 0: no CRC/framing/sequence errors, no unexpected disconnects or stuck listeners among the normal
        listeners, and every normal listener connected; 1 otherwise; 2 for bad usage.
        """

    enum Problem: Error, CustomStringConvertible {
        case usage(String)
        var description: String {
            if case .usage(let text) = self { return text }
            return ""
        }
    }

    init(arguments: ArraySlice<String>) throws {
        var iterator = arguments.makeIterator()
        var seen: Set<String> = []
        while let argument = iterator.next() {
            var name = argument
            var inline: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                name = String(argument[..<equals])
                inline = String(argument[argument.index(after: equals)...])
            }
            func value() throws -> String {
                if let inline { return inline }
                guard let next = iterator.next() else { throw Problem.usage("\(name) needs a value") }
                return next
            }
            func number(_ range: ClosedRange<Double>) throws -> Double {
                let text = try value()
                guard let v = Double(text), v.isFinite, range.contains(v) else {
                    throw Problem.usage("\(name) \(text): use a number from \(range.lowerBound) to \(range.upperBound)")
                }
                return v
            }
            func integer(_ range: ClosedRange<Int>) throws -> Int {
                let text = try value()
                guard let v = Int(text), range.contains(v) else {
                    throw Problem.usage(
                        "\(name) \(text): use a whole number from \(range.lowerBound) to \(range.upperBound)")
                }
                return v
            }
            seen.insert(name)
            switch name {
            case "--host": host = try value()
            case "--port": port = try integer(1...65535)
            case "-n", "--n", "--count": count = try integer(1...100_000)
            case "--duration": duration = try number(0.1...86_400)
            case "--ramp": ramp = try number(0...3600)
            case "--http":
                let path = try value()
                guard path.hasPrefix("/"), !path.contains(where: { $0 == "\r" || $0 == "\n" || $0 == " " }) else {
                    throw Problem.usage("--http \(path): give a path such as /relay.opus")
                }
                httpPath = path
            case "--icy": icyMetadata = true
            case "--slow": slowCount = try integer(0...100_000)
            case "--slow-rate": slowRate = try number(0.001...100)
            case "--slow-bytes-per-second": slowBytesPerSecond = try number(1...1e9)
            case "--normal-bytes-per-second": normalBytesPerSecond = try number(1...1e9)
            case "--slow-rcvbuf": slowReceiveBuffer = try integer(0...1 << 30)
            case "--connect-timeout": connectTimeout = try number(0.01...600)
            case "--stuck-after": stuckAfter = try number(0.1...3600)
            case "--no-start-check": checkStart = false
            case "--sources": sources = try integer(1...255)
            case "--json": jsonPath = try value()
            case "--help", "-h": throw Problem.usage(Self.usage)
            default: throw Problem.usage("unknown option \(name)\n\n\(Self.usage)")
            }
        }
        for required in ["--port", "--duration"] where !seen.contains(required) {
            throw Problem.usage("\(required) is required\n\n\(Self.usage)")
        }
        guard count > 0 else { throw Problem.usage("-n N is required\n\n\(Self.usage)") }
        guard slowCount <= count else { throw Problem.usage("--slow \(slowCount) is more than -n \(count)") }
        guard LoopbackAddress(host: host, port: UInt16(port)) != nil else {
            throw Problem.usage(
                "--host \(host): only loopback addresses (127.0.0.0/8, ::1, localhost) and the benchmark network "
                    + "of network namespaces (198.18.0.0/15) are allowed")
        }
    }
}

/// A loopback IPv4 or IPv6 socket address, or one in the benchmark range 198.18.0.0/15 (network namespaces made
/// for a test); nil for anything else, so the tool cannot load another machine.
struct LoopbackAddress {
    let address: SocketAddress
    /// For the Host header.
    let hostHeader: String

    init?(host: String, port: UInt16) {
        let name = host == "localhost" ? "127.0.0.1" : host
        guard let address = SocketAddress(host: name.trimmingBrackets, port: port),
            address.isLoopback || address.isBenchmarkNetwork
        else {
            return nil
        }
        self.address = address
        hostHeader = address.description
    }
}

extension String {
    fileprivate var trimmingBrackets: String {
        hasPrefix("[") && hasSuffix("]") ? String(dropFirst().dropLast()) : self
    }
}
