import Foundation
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// Who may read the status endpoint (`StatusAccess`, through `StatusRouter`): DNS rebinding refused by `Host`, the
/// bearer token, and `/health` open whatever comes.
@Suite struct StatusAccessTests {
    static let token = StatusToken("s3cret-token-0123456789")!

    static func answer(_ request: String, _ access: StatusAccess) -> Int {
        let head = HTTPRequestHead.parse(Array(request.utf8), limit: 8192)
        return StatusRouter.respond(to: head, access: access) { StatusSnapshot(stations: [], uptime: 1, alive: []) }
            .status
    }

    @Test func aHostThatIsNotThisServersIsRefused() {
        let access = StatusAccess(names: ["Relay1.example.org"])
        for host in [
            "127.0.0.1", "127.0.0.1:8080", "[::1]:8080", "[::1]", "localhost", "localhost:8080", "LOCALHOST",
            "relay1.example.org:8080", "relay1.example.org.", "192.0.2.7:80",
        ] {
            #expect(Self.answer("GET /status.json HTTP/1.1\r\nHost: \(host)\r\n\r\n", access) == 200, "\(host)")
        }
        for host in [
            "attacker.example", "attacker.example:8080", "127.0.0.1.nip.io", "[::1", "[evil]:80", "", "relay1",
        ] {
            #expect(Self.answer("GET /metrics HTTP/1.1\r\nHost: \(host)\r\n\r\n", access) == 421, "\(host)")
        }
        // HTTP/1.0 without Host (HAProxy's check), and /health from anywhere.
        #expect(Self.answer("GET /status.json HTTP/1.0\r\n\r\n", access) == 200)
        #expect(Self.answer("GET /health HTTP/1.1\r\nHost: attacker.example\r\n\r\n", access) == 200)
    }

    @Test func theTokenGuardsStatusAndMetricsOnly() {
        let access = StatusAccess(token: Self.token)
        let good = "Authorization: Bearer s3cret-token-0123456789\r\n"
        #expect(Self.answer("GET /status.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", access) == 401)
        #expect(Self.answer("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\(good)\r\n", access) == 200)
        #expect(
            Self.answer("GET /status.json HTTP/1.0\r\nauthorization: bearer s3cret-token-0123456789\r\n\r\n", access)
                == 200)
        for wrong in [
            "Bearer s3cret-token-012345678", "Bearer s3cret-token-01234567890", "Basic czNjcmV0", "Bearer",
            "Bearer " + String(repeating: "s3cret-token-0123456789", count: 17),
        ] {
            #expect(Self.answer("GET /metrics HTTP/1.1\r\nAuthorization: \(wrong)\r\n\r\n", access) == 401, "\(wrong)")
        }
        #expect(Self.answer("GET /health HTTP/1.1\r\n\r\n", access) == 200)
        #expect(Self.answer("GET / HTTP/1.1\r\n\r\n", access) == 200)
        let head = HTTPRequestHead.parse(Array("GET /metrics HTTP/1.1\r\n\r\n".utf8), limit: 8192)
        let response = StatusRouter.respond(to: head, access: access) {
            StatusSnapshot(stations: [], uptime: 1, alive: [])
        }
        #expect(response.headers.contains { $0.0 == "WWW-Authenticate" && $0.1.hasPrefix("Bearer") })
    }

    /// The admin's credentials pass where the token does; anything else as HTTP Basic does not.
    @Test func theAdminsCredentialsPassToo() {
        var access = StatusAccess(token: Self.token)
        access.admin = AdminCredentials(user: "operator", password: AdminPassword("admin-pass-1")!)
        func basic(_ text: String) -> String {
            "GET /status.json HTTP/1.1\r\nAuthorization: Basic \(Data(text.utf8).base64EncodedString())\r\n\r\n"
        }
        #expect(Self.answer(basic("operator:admin-pass-1"), access) == 200)
        #expect(Self.answer(basic("admin:admin-pass-1"), access) == 401)
        #expect(Self.answer(basic("operator:admin-pass-2"), access) == 401)
        #expect(
            Self.answer("GET /metrics HTTP/1.1\r\nAuthorization: Bearer s3cret-token-0123456789\r\n\r\n", access) == 200
        )
        access.admin = nil
        #expect(Self.answer(basic("operator:admin-pass-1"), access) == 401)
    }

    @Test func aTokenIsASecret() {
        #expect(StatusToken("short") == nil && StatusToken(String(repeating: "a", count: 257)) == nil)
        #expect(StatusToken("has a space in it ok") == nil)
        #expect("\(Self.token)" == "***" && "\(StatusAccess(token: Self.token))".contains("s3cret") == false)
    }

    @Test func theConfigFileKeys() throws {
        let directory = try ConfigFileTests.credentials(["status-token": "from-a-credential-0123\n"])
        let file = try ConfigFileTests.parse(
            """
            [server]
            status_token = @credential:status-token
            status_hosts = relay1.example.org, relay1

            [station a]
            upstream = http://example.org/a.mp3
            """, credentials: directory)
        #expect(file.server.statusAccess.names == ["relay1.example.org", "relay1"])
        #expect(file.server.statusAccess.token == StatusToken("from-a-credential-0123"))
        #expect(throws: ConfigFileError.self) {
            try ConfigFileTests.parse("[server]\nstatus_token = tooshort\n[station a]\nupstream = http://e.org/a.mp3\n")
        }
        #expect(throws: ConfigFileError.self) {
            try ConfigFileTests.parse("[server]\nstatus_hosts = a_b\n[station a]\nupstream = http://e.org/a.mp3\n")
        }
        #expect(throws: ConfigFileError.self) {
            try ConfigFileTests.parse("[server]\nstatus_hosts = relay 1\n[station a]\nupstream = http://e.org/a.mp3\n")
        }
    }
}
