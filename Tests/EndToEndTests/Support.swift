import Foundation
import RadioRelay
import RadioRelayTestSupport
import Testing

/// The radio-relay binary the end-to-end tests run: `RADIO_RELAY_BINARY` when set (CI sets it to the static release
/// build that deploy/build-deb.sh packages), otherwise the first of `.build-static/release`, `.build/release` and
/// `.build/debug` that holds one, for a local run.
func radioRelayExecutable() -> String? {
    if let path = ProcessInfo.processInfo.environment["RADIO_RELAY_BINARY"], !path.isEmpty {
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    for folder in [".build-static/release", ".build/release", ".build/debug"] {
        let candidate = root.appendingPathComponent(folder + "/radio-relay").path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
}

/// The second of the three lanes the end-to-end tests run in (the first is `ServerProcessTests`, the third
/// `DiskTests`): each lane runs one test at a time, so at most three run at once, and the heavy real peers (Chromium,
/// mpv and the players, HAProxy, systemd's tools, several Icecast sources with listeners) are in this lane and the
/// first, never in the third, so at most two share the machine. A light one — Icecast with one source and a listener
/// or two (`IcecastPushTests`, `IcecastStatusShapeTests`) — runs in the first lane, which keeps the lanes about as
/// long as each other (CI's e2e step takes the longest lane's time).
@Suite(.timeLimit(.minutes(2)), .serialized) struct PeerTests {}

/// The third lane: tests that mostly wait for real time to pass while a server writes its archive or a recording, or
/// while a link is cut (the archive's files, a full and a read-only disk, recordings of live shows, time shift,
/// edge relays over links in network namespaces), each with light peers (ffmpeg decoding a few seconds, curl).
@Suite(.timeLimit(.minutes(2)), .serialized) struct DiskTests {
    typealias ServerProcess = ServerProcessTests.ServerProcess
    typealias Reader = ServerProcessTests.Reader
}

/// A running server's `/status.json` (its status endpoint on 127.0.0.1:`port`), decoded into the server's schema.
func statusSnapshot(_ port: UInt16) throws -> StatusSnapshot {
    try JSONDecoder().decode(StatusSnapshot.self, from: Data(try httpGet(port, "/status.json").body))
}

/// The stations of a running server's `/status.json`.
func statusStations(_ port: UInt16) throws -> [StationStatus] { try statusSnapshot(port).stations }

/// One station of the binary's (`serve` with these flags), named `test`, relaying the stereo fixture (440 Hz left,
/// 1 kHz right) on a free port, with the HTTP front end and the status endpoint on free ports of their own.
final class ServedStation: @unchecked Sendable {
    let server: ServerProcessTests.ServerProcess
    let http: UInt16
    let status: UInt16
    var port: UInt16 { server.port }

    init(upstream: String = Fixture.path("stereo-44k-128k.mp3"), _ flags: [String] = []) throws {
        http = try freePort()
        status = try freePort()
        server = try ServerProcessTests.ServerProcess(
            arguments: [
                "serve", "--upstream", upstream, "--name", "test", "--bind", "127.0.0.1", "--port",
                "\(try freePort())", "--http", "127.0.0.1:\(http)", "--status",
                "127.0.0.1:\(status)",
            ] + flags)
    }

    /// The station's entry in `/status.json`.
    func station() throws -> StationStatus { try #require(try statusStations(status).first) }

    /// Its pushes in `/status.json`.
    func pushes() throws -> [PushStatus] { try station().pushes }

    /// Waits up to `seconds` until the station's archive (its MP3 output's, with `mp3`) holds at least `span`
    /// seconds of audio, from its oldest start to its newest end.
    func archiveHolds(_ span: Double, mp3: Bool = false, within seconds: Double) -> Bool {
        waitUntil(seconds) {
            guard let figures = try? station(), let archive = mp3 ? figures.archiveMP3 : figures.archive,
                let oldest = archive.oldest, let newest = archive.newest
            else { return false }
            return newest - oldest >= span
        }
    }

    func stop() { server.stop() }
}

/// A player's run in the background: what `body` returned, once it is done.
final class Background<Value>: @unchecked Sendable {
    private let group = DispatchGroup()
    private var result: Result<Value, any Error>?

    init(_ body: @escaping @Sendable () throws -> Value) {
        group.enter()
        DispatchQueue.global().async {
            self.result = Result { try body() }
            self.group.leave()
        }
    }

    func value() throws -> Value {
        group.wait()
        return try #require(result).get()
    }
}
