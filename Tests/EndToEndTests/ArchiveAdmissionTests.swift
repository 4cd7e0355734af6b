import Foundation
import Glibc
import RadioRelay
import RadioRelayNet
import RadioRelayTestSupport
import Testing

/// The archive's doors are the live mount's: every resource of a station's archive — `?offset=` and `?start=` on the
/// mount, `archive.json`, `archive.m3u8`, its init and a segment, `archive-ts.m3u8` and a segment of it — refuses a
/// user agent the station denies (`403`, counted as `agent_denied`) and serves any other; on a station whose
/// listeners authenticate (htpasswd), a time-shifted request without credentials gets the live mount's `401`
/// challenge and one with them its stream, while the listing and the archive's HLS are not offered (`403`).
extension DiskTests {
    @Suite(.timeLimit(.minutes(2))) struct ArchiveAdmissionTests {
        /// A request with a user agent and optional Basic credentials: the status, and the head's first bytes.
        static func ask(_ port: UInt16, _ path: String, agent: String, user: String? = nil) throws -> (Int, String) {
            let authorization = user.map { "Authorization: Basic \(Data($0.utf8).base64EncodedString())\r\n" } ?? ""
            let answer = try httpFetch(
                port, "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: \(agent)\r\n\(authorization)\r\n",
                wait: 1.5)
            let body = answer.body
            return (
                answer.status,
                answer.head + " body \(body.count) B" + (body.starts(with: Array("OggS".utf8)) ? " OggS" : "")
            )
        }

        /// Waits until the archive of `station` holds a whole segment of its HLS (10 s on the UTC clock): its name.
        static func archived(_ station: ServedStation) throws -> String {
            var segment = 0.0
            #expect(
                waitUntil(60) {
                    guard let archive = (try? station.station())?.archive, let oldest = archive.oldest,
                        let newest = archive.newest
                    else { return false }
                    segment = (oldest / 10).rounded(.up) * 10
                    return newest >= segment + 11
                }, "\(station.server.log)")
            return "archive-\(Int(segment)).m4s"
        }

        @Test(.enabled(if: tool("ffmpeg") != nil, "needs ffmpeg"))
        func aDeniedAgentIsRefusedAtEveryDoorOfTheArchive() throws {
            let directory = temporaryPath("archive-doors")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let agents = temporaryPath("agents.txt")
            try "*blocked*\n".write(toFile: agents, atomically: true, encoding: .utf8)
            defer { unlink(agents) }
            let station = try ServedStation([
                "--archive", directory, "--archive-span", "10", "--deny-agents", "@\(agents)",
            ])
            defer { station.stop() }
            let segment = try Self.archived(station)
            let moment = try #require(station.station().archive?.oldest) + 1
            let start = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: moment.rounded(.down)))
            let doors = [
                "/test.opus", "/test.opus?offset=5", "/test.opus?start=\(start)", "/test/archive.json",
                "/test/archive.m3u8", "/test/archive-init.mp4", "/test/\(segment)", "/test/archive-ts.m3u8",
                "/test/\(segment.replacingOccurrences(of: ".m4s", with: ".ts"))",
            ]
            for door in doors {
                let (refused, refusedHead) = try Self.ask(station.http, door, agent: "Blocked-Player/2.0")
                #expect(refused == 403, "\(door): \(refusedHead)")
                let (served, servedHead) = try Self.ask(station.http, door, agent: "Lavf/59.27.100")
                #expect(served == 200, "\(door): \(servedHead)")
                if door.hasPrefix("/test.opus") { #expect(servedHead.hasSuffix("OggS"), "\(door): \(servedHead)") }
            }
            let refusals = try statusSnapshot(station.status).refusals
            #expect(refusals.first { $0.reason == .agentDenied }?.count == doors.count, "\(refusals)")
        }

        @Test(.enabled(if: tool("ffmpeg") != nil && tool("htpasswd") != nil, "needs ffmpeg, apache2-utils"))
        func aProtectedStationsArchiveAsksForCredentials() throws {
            let directory = temporaryPath("archive-protected")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let file = temporaryPath("archive.htpasswd")
            defer { unlink(file) }
            try ServerProcessTests.HtpasswdPlayerTests.htpasswd(["-bc", "-B", file, "ann", "catch up"])
            let station = try ServedStation([
                "--port", "none", "--archive", directory, "--archive-span", "10", "--htpasswd", file,
            ])
            defer { station.stop() }
            let segment = try Self.archived(station)
            let (anonymous, anonymousHead) = try Self.ask(station.http, "/test.opus?offset=5", agent: "mpv")
            #expect(anonymous == 401 && anonymousHead.contains("WWW-Authenticate: Basic"), "\(anonymousHead)")
            let (wrong, wrongHead) = try Self.ask(station.http, "/test.opus?offset=5", agent: "mpv", user: "ann:x")
            #expect(wrong == 401, "\(wrongHead)")
            let (served, servedHead) = try Self.ask(
                station.http, "/test.opus?offset=5", agent: "mpv", user: "ann:catch up")
            #expect(served == 200 && servedHead.hasSuffix("OggS"), "\(servedHead)")
            let doors = [
                "/test/archive.json", "/test/archive.m3u8", "/test/\(segment)", "/test/archive-ts.m3u8",
                "/test/\(segment.replacingOccurrences(of: ".m4s", with: ".ts"))",
            ]
            for door in doors {
                let (status, head) = try Self.ask(station.http, door, agent: "mpv", user: "ann:catch up")
                #expect(status == 403, "\(door): \(head)")
            }
            #expect(try statusSnapshot(station.status).authentication.admitted == 1)
        }
    }
}
