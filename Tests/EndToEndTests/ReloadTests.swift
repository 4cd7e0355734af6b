import Foundation
import Glibc
import RadioRelayMedia
import RadioRelayTestSupport
import Testing

/// SIGHUP with the real binary: the config file edited under a running server.
extension ServerProcessTests {
    @Suite(.timeLimit(.minutes(1)), .serialized) struct ReloadTests {
        static func config(_ stations: [(name: String, port: UInt16, extra: String)], status: UInt16? = nil) -> String {
            "[server]\nstatus = \(status.map { "127.0.0.1:\($0)" } ?? "off")\n\n"
                + stations.map { station in
                    "[station \(station.name)]\nupstream = \(Fixture.path("stereo-44k-128k.mp3"))\nbind = 127.0.0.1\n"
                        + "port = \(station.port)\n\(station.extra)\n"
                }.joined(separator: "\n")
        }

        /// Waits (at most 20 s) until the server's log has `text` (`count` times).
        static func waitFor(_ text: String, in server: ServerProcessTests.ServerProcess, count: Int = 1) throws {
            let deadline = Date().addingTimeInterval(20)
            func seen() -> Int { server.log.components(separatedBy: text).count - 1 }
            while seen() < count && Date() < deadline { usleep(50_000) }
            try #require(seen() >= count, "\(seen()) of \(count) \"\(text)\" in the log:\n\(server.log)")
        }

        /// The descriptors of process `pid` that are TCP sockets in LISTEN, as their sockets' inodes (a socket held by
        /// two descriptors is there twice).
        static func listeningSockets(of pid: Int32) -> [String] {
            var listening = Set<String>()
            for table in ["/proc/\(pid)/net/tcp", "/proc/\(pid)/net/tcp6"] {
                let text = (try? String(contentsOfFile: table, encoding: .utf8)) ?? ""
                for line in text.split(separator: "\n").dropFirst() {
                    let fields = line.split(separator: " ")
                    if fields.count > 9, fields[3] == "0A" { listening.insert(String(fields[9])) }
                }
            }
            let directory = "/proc/\(pid)/fd"
            let owned = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).compactMap {
                (try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/" + $0))
            }
            return owned.compactMap { link in
                link.hasPrefix("socket:[") ? String(link.dropFirst(8).dropLast()) : nil
            }.filter(listening.contains).sorted()
        }

        /// Stations restarted by reloads take over their listening sockets and let the old station go (its threads,
        /// rings and descriptors): with the status endpoint on, as by default, whose thread once held every replaced
        /// station through its wait, so the successor's bind failed with EADDRINUSE every time.
        @Test func restartsKeepThePortAndLeakNothing() throws {
            let ports = try (0..<2).map { _ in try freePort() }
            let path = temporaryPath("reload-restart.conf")
            defer { unlink(path) }
            try Self.config([("beta", ports[0], "")], status: ports[1]).write(
                toFile: path, atomically: true, encoding: .utf8)
            let server = try ServerProcessTests.ServerProcess(arguments: ["--config", path])
            defer { server.stop() }
            let pid = server.process.processIdentifier
            try Self.waitFor("beta: listening on", in: server)
            let before = Self.listeningSockets(of: pid)
            #expect(before.count == 2 && Set(before).count == 2, "beta's port and the status port, one descriptor each")
            for round in 1...3 {
                // Mono, then stereo again: a new Ogg stream each time, so a restart.
                let extra = round % 2 == 1 ? "channels = 1" : ""
                try Self.config([("beta", ports[0], extra)], status: ports[1])
                    .write(toFile: path, atomically: true, encoding: .utf8)
                server.signal(SIGHUP)
                try Self.waitFor("reload: restarted beta\n", in: server, count: round)
                let capture = try LiveCapture(try PeerTests.SystemdTests.listen(port: ports[0], seconds: 0.5))
                #expect(capture.headerOK, "round \(round): beta does not serve:\n\(server.log)")
                // The old station's sockets go with it (polled: its last reference goes with its threads).
                let deadline = Date().addingTimeInterval(5)
                while Self.listeningSockets(of: pid) != before && Date() < deadline { usleep(20_000) }
                #expect(
                    Self.listeningSockets(of: pid) == before,
                    "round \(round): one descriptor per listening socket, the same sockets (a replaced station's descriptor still open holds its port's socket for nothing)"
                )
            }
            #expect(!server.log.contains("cannot"), "\(server.log)")
        }

        @Test func aReloadKeepsUnchangedStationsAndAppliesTheRest() throws {
            let ports = try (0..<6).map { _ in try freePort() }
            let path = temporaryPath("reload.conf")
            defer { unlink(path) }
            try Self.config([
                ("kept", ports[0], ""), ("tuned", ports[1], ""), ("gone", ports[2], ""), ("recoded", ports[4], ""),
                ("remixed", ports[5], ""),
            ]).write(toFile: path, atomically: true, encoding: .utf8)
            let notify = try PeerTests.SystemdTests.NotifySocket()
            let server = try ServerProcessTests.ServerProcess(
                arguments: ["--config", path], environment: ["NOTIFY_SOCKET": notify.path])
            defer { server.stop() }
            usleep(1_000_000)
            let kept = try ServerProcessTests.Reader(port: ports[0])
            let gone = try ServerProcessTests.Reader(port: ports[2])
            let recoded = try ServerProcessTests.Reader(port: ports[4])
            let remixed = try ServerProcessTests.Reader(port: ports[5])
            usleep(1_500_000)
            // kept: unchanged; tuned: a live setting; gone: removed; added: new; recoded: a new bitrate (applied in
            // place); remixed: mono (a new Ogg stream: a restart on the same listening socket).
            try Self.config([
                ("kept", ports[0], ""), ("tuned", ports[1], "max_listeners = 7"), ("added", ports[3], ""),
                ("recoded", ports[4], "bitrate = 64k"), ("remixed", ports[5], "channels = 1"),
            ]).write(toFile: path, atomically: true, encoding: .utf8)
            server.signal(SIGHUP)
            // The reload is done when it says what it did (on a loaded machine that takes longer than on an idle one).
            try Self.waitFor("reload: started", in: server)
            let added = try LiveCapture(try PeerTests.SystemdTests.listen(port: ports[3], seconds: 1.5))
            #expect(added.headerOK, "the added station does not serve")
            let (goneBytes, goneClosed) = gone.finish()
            #expect(goneClosed, "the removed station's listener was not closed")
            let (_, remixedClosed) = remixed.finish()
            #expect(remixedClosed, "the restarted station's listener was not closed")
            // The restarted station serves at once: its successor took over the listening socket (no bind, no
            // EADDRINUSE, no connection left waiting in a socket nobody accepts).
            let restarted = try LiveCapture(try PeerTests.SystemdTests.listen(port: ports[5], seconds: 1))
            #expect(restarted.headerOK, "the restarted station does not serve:\n\(server.log)")
            #expect(try LiveCapture(goneBytes).headerOK)
            // A broken file: logged, and everything goes on.
            try "[station broken\n".write(toFile: path, atomically: true, encoding: .utf8)
            server.signal(SIGHUP)
            try Self.waitFor("reload: the configuration has errors", in: server)
            let stillAdded = try LiveCapture(try PeerTests.SystemdTests.listen(port: ports[3], seconds: 1))
            #expect(stillAdded.headerOK, "a broken reload stopped a station")
            // The new bitrate went in without a restart: the listener stayed, on one logical stream.
            let (recodedBytes, recodedClosed) = recoded.finish()
            #expect(!recodedClosed, "the retuned station's listener was disconnected")
            let recodedCapture = try LiveCapture(recodedBytes)
            #expect(
                recodedCapture.headerOK && recodedCapture.sequenceGaps == 0 && recodedCapture.granuleRegressions == 0)
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
                log.contains(
                    "reload: started added; stopped gone; updated tuned, recoded; restarted remixed; unchanged kept"),
                "\(log)")
            #expect(log.contains("recoded: encoders now at 64k"), "\(log)")
            #expect(!log.contains("cannot"), "\(log)")
            #expect(log.contains("reload: the configuration has errors"), "\(log)")
            let messages = notify.messages(for: 1)
            let reloading = try #require(messages.firstIndex { $0.contains("RELOADING=1") }, "\(messages)")
            #expect(messages[reloading].contains("MONOTONIC_USEC="))
            #expect(messages[(reloading + 1)...].contains { $0.contains("READY=1") }, "\(messages)")
        }
    }
}
