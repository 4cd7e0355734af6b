import Foundation
import Glibc
import RadioRelayTestSupport
import Testing

@testable import RadioRelay

/// SIGHUP with the real binary: the config file edited under a running server.
@Suite(.timeLimit(.minutes(1)), .serialized) struct ReloadTests {
    static func config(_ stations: [(name: String, port: UInt16, extra: String)]) -> String {
        "[server]\nstatus = off\n\n"
            + stations.map { station in
                "[station \(station.name)]\nupstream = \(Fixture.path("stereo-44k-128k.mp3"))\nbind = 127.0.0.1\n"
                    + "port = \(station.port)\n\(station.extra)\n"
            }.joined(separator: "\n")
    }

    /// Waits (at most 20 s) until the server's log has `text`.
    static func waitFor(_ text: String, in server: ServerProcessTests.ServerProcess) throws {
        let deadline = Date().addingTimeInterval(20)
        while !server.log.contains(text) && Date() < deadline { usleep(50_000) }
        try #require(server.log.contains(text), "no \"\(text)\" in the log:\n\(server.log)")
    }

    @Test func aReloadKeepsUnchangedStationsAndAppliesTheRest() throws {
        let ports = try (0..<5).map { _ in try ServerProcessTests.freePort() }
        let path = temporaryPath("reload.conf")
        defer { unlink(path) }
        try Self.config([
            ("kept", ports[0], ""), ("tuned", ports[1], ""), ("gone", ports[2], ""), ("recoded", ports[4], ""),
        ]).write(toFile: path, atomically: true, encoding: .utf8)
        let notify = try SystemdTests.NotifySocket()
        let server = try ServerProcessTests.ServerProcess(
            arguments: ["--config", path], environment: ["NOTIFY_SOCKET": notify.path])
        defer { server.stop() }
        usleep(1_000_000)
        let kept = try ServerProcessTests.Reader(port: ports[0])
        let gone = try ServerProcessTests.Reader(port: ports[2])
        let recoded = try ServerProcessTests.Reader(port: ports[4])
        usleep(1_500_000)
        // kept: unchanged; tuned: a live setting; gone: removed; added: new; recoded: a new bitrate (a restart).
        try Self.config([
            ("kept", ports[0], ""), ("tuned", ports[1], "max_listeners = 7"), ("added", ports[3], ""),
            ("recoded", ports[4], "bitrate = 64k"),
        ]).write(toFile: path, atomically: true, encoding: .utf8)
        server.signal(SIGHUP)
        // The reload is done when it says what it did (on a loaded machine that takes longer than on an idle one).
        try Self.waitFor("reload: started", in: server)
        let added = try LiveCapture(try SystemdTests.listen(port: ports[3], seconds: 1.5))
        #expect(added.headerOK, "the added station does not serve")
        let (goneBytes, goneClosed) = gone.finish()
        #expect(goneClosed, "the removed station's listener was not closed")
        let (_, recodedClosed) = recoded.finish()
        #expect(recodedClosed, "the restarted station's listener was not closed")
        let restarted = try LiveCapture(try SystemdTests.listen(port: ports[4], seconds: 1))
        // Known open defect: in the release build on a loaded machine the restarted station was not serving 1 s after
        // the reload's log line (twice in CI on 2026-11-30, never in debug or alone); under investigation.
        withKnownIssue("restarted station not serving yet under load (release)", isIntermittent: true) {
            #expect(restarted.headerOK, "the restarted station does not serve:\n\(server.log)")
        }
        #expect(try LiveCapture(goneBytes).headerOK)
        // A broken file: logged, and everything goes on.
        try "[station broken\n".write(toFile: path, atomically: true, encoding: .utf8)
        server.signal(SIGHUP)
        try Self.waitFor("reload: the configuration has errors", in: server)
        let stillAdded = try LiveCapture(try SystemdTests.listen(port: ports[3], seconds: 1))
        #expect(stillAdded.headerOK, "a broken reload stopped a station")
        let (keptBytes, keptClosed) = kept.finish()
        #expect(!keptClosed, "the unchanged station's listener was disconnected")
        let capture = try LiveCapture(keptBytes)
        // One logical stream: one OpusHead, no page sequence gap, granules only forward, and audio throughout.
        #expect(capture.headerOK && capture.sequenceGaps == 0 && capture.granuleRegressions == 0)
        let heads = capture.pages.filter { $0.packets.first?.starts(with: Array("OpusHead".utf8)) == true }
        #expect(heads.count == 1)
        #expect(Double(capture.left.count) / 48_000 > 5.5)
        let log = server.log
        #expect(
            log.contains("reload: started added; stopped gone; updated tuned; restarted recoded; unchanged kept"),
            "\(log)")
        #expect(log.contains("reload: the configuration has errors"), "\(log)")
        let messages = notify.messages(for: 1)
        let reloading = try #require(messages.firstIndex { $0.contains("RELOADING=1") }, "\(messages)")
        #expect(messages[reloading].contains("MONOTONIC_USEC="))
        #expect(messages[(reloading + 1)...].contains { $0.contains("READY=1") }, "\(messages)")
    }
}
