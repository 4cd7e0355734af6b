import Foundation
import Glibc
import RadioRelay
import RadioRelayTestSupport
import Testing

/// Listener statistics from the real binary: 100 raw listeners held for known times (measured on the clients' side),
/// then the status endpoint's sessions, their lengths by bucket, the seconds listened (within 1 %) and the peaks, and
/// the access log's line for each. (In the serialized `ServerProcessTests` suite, like every real-binary test.)
extension ServerProcessTests {
    @Test func aHundredListenersSessionsAndSecondsAreCounted() throws {
        let directory = temporaryPath("access")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let accessLog = directory + "/access.log"
        let rig = try ServedStation(["--max-per-ip", "0", "--access-log", accessLog])
        defer { rig.stop() }
        var held: [(client: ListenerClient, opened: Date)] = []
        for _ in 0..<100 { held.append((try ListenerClient(port: rig.port), Date())) }
        #expect(waitUntil(5) { (try? rig.station())?.listeners == 100 })
        // Half leave after about 2 s, the rest after about 4 s; each session's length as its client saw it.
        var seconds = 0.0
        usleep(2_000_000)
        for (client, opened) in held.prefix(50) {
            client.close()
            seconds += Date().timeIntervalSince(opened)
        }
        usleep(2_000_000)
        for (client, opened) in held.suffix(50) {
            client.close()
            seconds += Date().timeIntervalSince(opened)
        }
        #expect(waitUntil(5) { (try? rig.station())?.listeners == 0 })
        let output = try #require(try rig.station().outputs.first)
        let counted = output.listeningSeconds
        print("listeners: clients held \(seconds) s in all, the relay counted \(counted) s; \(output)")
        #expect(abs(counted - seconds) <= seconds * 0.01, "\(counted) s counted, \(seconds) s held")
        #expect(output.sessionBuckets.reduce(0, +) == 100)
        let buckets = Dictionary(uniqueKeysWithValues: zip(OutputStatus.sessionLabels, output.sessionBuckets))
        #expect(buckets["10"] == 100, "\(buckets)")
        #expect(output.peakListeners == 100 && output.peakListenersHour == 100)

        // Five HTTP listeners with a referrer that carries a password and a token, and a user agent with quotes.
        let request =
            "GET /test.opus HTTP/1.1\r\nHost: x\r\nReferer: https://fan:hunter2@radio.example/player?token=s3cret\r\n"
            + "User-Agent: Player \"X\"/1.0\r\n\r\n"
        for _ in 0..<5 { _ = try httpExchange(rig.http, request, seconds: 0.5) }
        #expect(
            waitUntil(5) {
                (try? String(contentsOfFile: accessLog, encoding: .utf8))?.split(separator: "\n").count == 105
            })
        let lines = try String(contentsOfFile: accessLog, encoding: .utf8).split(separator: "\n").map(String.init)
        print("access log: \(lines.count) lines; the first and the last:\n\(lines.first ?? "")\n\(lines.last ?? "")")
        #expect(lines.count == 105)
        // Address, the run and listener ID, user, time, request (a raw listener's: its mount), status, bytes,
        // referrer, agent, seconds: what analysers of Icecast's log read.
        let combined = try Regex(
            #"^127\.0\.0\.1 [0-9a-f]{8}-[1-9][0-9]* - \[\d{2}/[A-Z][a-z]{2}/\d{4}:\d{2}:\d{2}:\d{2} \+0000\] "(TCP /test\.opus|GET /test\.opus HTTP/1\.1)" 200 (\d+) "[^"]*" "(?:[^"\\]|\\.)*" (\d+)$"#
        )
        #expect(
            lines.allSatisfy { $0.wholeMatch(of: combined) != nil },
            "\(lines.filter { $0.wholeMatch(of: combined) == nil })")
        // One run, and every listener its own ID.
        let identities = lines.map { $0.split(separator: " ")[1] }
        #expect(Set(identities.map { $0.prefix(8) }).count == 1 && Set(identities).count == lines.count)
        let raw = lines.filter { $0.contains("\"TCP /test.opus\" 200") }
        #expect(raw.count == 100)
        // Each raw line's seconds, whole, as its client held it (about 2 or 4); bytes add up to what status counted.
        let rawSeconds = raw.compactMap { Int($0.split(separator: " ").last ?? "") }
        #expect(
            rawSeconds.filter { (1...2).contains($0) }.count == 50
                && rawSeconds.filter { (3...4).contains($0) }.count == 50, "\(rawSeconds)")
        let rawBytes = raw.compactMap { Int($0.split(separator: " ")[8]) }.reduce(0, +)
        let http = lines.filter { $0.contains("GET /test.opus") }
        #expect(http.count == 5)
        #expect(
            http.allSatisfy { $0.contains("\"https://***@radio.example/player?token=***\" \"Player \\\"X\\\"/1.0\"") },
            "\(http)")
        #expect(!lines.joined().contains("hunter2") && !lines.joined().contains("s3cret"))
        #expect(rawBytes == output.bytesOut, "log \(rawBytes) bytes, status \(output.bytesOut)")
        print("access log: raw listeners' bytes \(rawBytes), status bytes_out \(output.bytesOut)")
    }
}
