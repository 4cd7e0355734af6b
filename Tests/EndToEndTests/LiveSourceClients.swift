import Foundation
import Glibc
import RadioRelayTestSupport
import Testing

/// The real source clients the live-source tests run, each a process of its own stopped by its PID: ffmpeg
/// (`icecast://`, MP3 or Ogg Opus), ezstream (Debian's, libshout's PUT) and Liquidsoap (`output.icecast`).
final class SourceClient: @unchecked Sendable {
    let process = Process()
    private var files: [String] = []

    /// Any peer process (a listener too): `program` found on the PATH, its output dropped.
    init(_ program: String, _ arguments: [String], files: [String] = []) throws {
        process.executableURL = URL(fileURLWithPath: try #require(tool(program)))
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        self.files = files
        try process.run()
    }

    /// ffmpeg sending `seconds` of a `frequency` Hz tone as MP3 (128 kb/s) or Ogg Opus at real time, with the
    /// Ogg comments `artist`/`title`.
    static func ffmpeg(
        port: UInt16, password: String, mount: String, frequency: Int, seconds: Int, opus: Bool,
        artist: String? = nil, title: String? = nil, name: String? = nil, tls: Bool = false, user: String = "source"
    ) throws -> SourceClient {
        var arguments = [
            "-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi", "-i",
            "sine=frequency=\(frequency):sample_rate=48000:duration=\(seconds)", "-ac", "2",
        ]
        arguments += opus ? ["-c:a", "libopus", "-b:a", "96k"] : ["-c:a", "libmp3lame", "-b:a", "128k"]
        if let artist { arguments += ["-metadata", "artist=\(artist)"] }
        if let title { arguments += ["-metadata", "title=\(title)"] }
        if let name { arguments += ["-ice_name", name] }
        if tls { arguments += ["-tls", "1"] }
        arguments += [
            "-content_type", opus ? "audio/ogg" : "audio/mpeg", "-f", opus ? "ogg" : "mp3",
            "icecast://\(user):\(password)@127.0.0.1:\(port)\(mount)",
        ]
        return try SourceClient("ffmpeg", arguments)
    }

    /// ezstream playing `file` once (MP3) to `mount`, its titles `ARTIST - TITLE` from the file's tags.
    static func ezstream(port: UInt16, password: String, mount: String, file: String) throws -> SourceClient {
        let configuration = temporaryPath("ezstream.xml")
        let xml = """
            <ezstream>
              <servers><server><protocol>HTTP</protocol><hostname>127.0.0.1</hostname><port>\(port)</port>
                <password>\(password)</password></server></servers>
              <streams><stream><mountpoint>\(mount)</mountpoint><format>MP3</format></stream></streams>
              <intakes><intake><type>file</type><filename>\(file)</filename><stream_once>Yes</stream_once></intake>
              </intakes>
              <metadata><format_str>@a@ - @t@</format_str></metadata>
            </ezstream>
            """
        try xml.write(toFile: configuration, atomically: true, encoding: .utf8)
        chmod(configuration, 0o600)  // ezstream refuses a configuration others can read
        return try SourceClient("ezstream", ["-c", configuration], files: [configuration])
    }

    /// Liquidsoap looping `file` to `mount` with `output.icecast`, encoded `%mp3` or `%opus` (its titles from the
    /// file's tags: for MP3 through /admin/metadata, for Opus in the stream).
    static func liquidsoap(port: UInt16, password: String, mount: String, file: String, opus: Bool) throws
        -> SourceClient
    {
        let script = temporaryPath("source.liq")
        let text = """
            settings.init.allow_root.set(true)
            settings.log.stdout.set(false)
            settings.log.file.set(false)
            s = mksafe(single("\(file)"))
            output.icecast(\(opus ? "%opus(samplerate=48000)" : "%mp3(bitrate=128)"), host="127.0.0.1", port=\(port),
              password="\(password)", mount="\(mount.dropFirst())", s)
            """
        try text.write(toFile: script, atomically: true, encoding: .utf8)
        return try SourceClient("liquidsoap", [script], files: [script])
    }

    var isRunning: Bool { process.isRunning }

    /// Waits up to `seconds` for it to end by itself.
    func waitForExit(_ seconds: Double) -> Bool { waitUntil(seconds) { !process.isRunning } }

    /// Ends it by PID with SIGKILL (a child of the test process may have SIGTERM blocked).
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        for file in files { try? FileManager.default.removeItem(atPath: file) }
    }
}

/// `count` raw TCP listeners of a station's port, from addresses 127.0.0.2… (so no per-address rule touches them),
/// read all along by one thread; whether any was closed by the server. With a `request`, HTTP listeners: each sends
/// it first.
final class BulkListeners: @unchecked Sendable {
    private let lock = NSLock()
    private var clients: [ListenerClient] = []
    private var closed = 0
    private var bytes = 0
    private var running = true
    private var thread: Thread?

    init(port: UInt16, count: Int, request: String? = nil, firstAddress: Int = 0) throws {
        clients = try (firstAddress..<firstAddress + count).map { index in
            try ListenerClient(port: port, source: "127.0.\(2 + index / 250).\(2 + index % 250)")
        }
        if let request { for client in clients { client.send(request) } }
        for client in clients { _ = fcntl(client.fd, F_SETFL, fcntl(client.fd, F_GETFL) | O_NONBLOCK) }
        let fds = clients.map(\.fd)
        let started = Thread { [self] in readAll(fds) }
        thread = started
        started.start()
    }

    private func readAll(_ fds: [Int32]) {
        var polls = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        var open = Array(repeating: true, count: fds.count)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while lock.withLock({ running }) {
            _ = poll(&polls, nfds_t(polls.count), 100)
            var got = 0
            var gone = 0
            for index in polls.indices where open[index] && polls[index].revents != 0 {
                let n = buffer.withUnsafeMutableBytes { read(fds[index], $0.baseAddress, $0.count) }
                if n > 0 {
                    got += n
                } else if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) {
                    open[index] = false
                    polls[index].events = 0
                    gone += 1
                }
            }
            lock.withLock {
                bytes += got
                closed += gone
            }
        }
    }

    /// Listeners the server closed, and bytes read by all.
    var counts: (closed: Int, bytes: Int) { lock.withLock { (closed, bytes) } }

    func stop() {
        lock.withLock { running = false }
        while let thread, !thread.isFinished { usleep(10_000) }
        for client in clients { client.close() }
        clients = []
    }
}

/// An MP3 file of `seconds` of `frequency` Hz (stereo, 128 kb/s) with ID3 artist and title.
func taggedToneFile(_ frequency: Int, seconds: Int, artist: String, title: String) throws -> String {
    let path = temporaryPath("tone-\(frequency).mp3")
    let result = try run(
        try #require(tool("ffmpeg")),
        [
            "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i",
            "sine=frequency=\(frequency):sample_rate=44100:duration=\(seconds)", "-ac", "2", "-c:a", "libmp3lame",
            "-b:a", "128k", "-id3v2_version", "3", "-metadata", "artist=\(artist)", "-metadata", "title=\(title)", "-y",
            path,
        ])
    try #require(result.status == 0, "\(result.stderr)")
    return path
}

/// `GET path` with the source's credentials (HTTP Basic, user `source`) on the HTTP address.
func sourceAdmin(_ port: UInt16, password: String, _ path: String) throws -> HTTPAnswer {
    let credentials = Data("source:\(password)".utf8).base64EncodedString()
    return try httpFetch(
        port, "GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\nAuthorization: Basic \(credentials)\r\n\r\n")
}
