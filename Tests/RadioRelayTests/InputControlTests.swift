import Foundation
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// Operators steer a station's inputs through the status endpoint and see them: the router's answers to
/// `POST /stations/NAME/force/INPUT` and `POST /stations/NAME/release` (the method, a browser's request, the token,
/// an unknown station or input), and the inputs in `/status.json` and `/metrics`.
@Suite struct InputControlTests {
    static let token = StatusToken("operator-token-0123456789")!

    static func request(_ method: String, _ path: String, _ fields: [(String, String)] = []) -> HTTPRequestHead.Result {
        .request(
            .init(
                method: method, path: path, version: "HTTP/1.1",
                fields: fields.map { HTTPRequestHead.Field(name: $0.0, value: $0.1) }))
    }

    /// The router's answer, and the commands it asked for, with a station `main` (inputs `1` and `backup`) that
    /// answers each command at once.
    static func answer(_ head: HTTPRequestHead.Result, access: StatusAccess = StatusAccess())
        -> (HTTPResponse, [StatusRouter.StationRequest])
    {
        var asked: [StatusRouter.StationRequest] = []
        let dispatch = { (wanted: StatusRouter.StationRequest) -> Result<CommandTicket, ConfigurationError> in
            asked.append(wanted)
            guard wanted.station == "main" else { return .failure(ConfigurationError("no station \(wanted.station)")) }
            if case .force(let input) = wanted.command, input != "backup" {
                return .failure(ConfigurationError("station main has no input \(input)"))
            }
            let ticket = CommandTicket(wanted.command)
            ticket.answer(wanted.command == .release ? .done("released") : .done("forced"))
            return .success(ticket)
        }
        switch StatusRouter.answer(head, access: access, snapshot: { StatusSnapshot() }, dispatch: dispatch) {
        case .now(let response): return (response, asked)
        case .awaiting(let ticket): return (StatusRouter.commandAnswer(ticket.outcome), asked)
        }
    }

    static func text(_ response: HTTPResponse) -> String { String(decoding: response.body, as: UTF8.self) }

    @Test func thePathsOfTheTwoControls() {
        #expect(
            StatusRouter.stationRequest("/stations/main/force/backup")
                == .init(station: "main", command: .force(input: "backup")))
        #expect(StatusRouter.stationRequest("/stations/main/release") == .init(station: "main", command: .release))
        #expect(
            StatusRouter.stationRequest("/stations/main/killsource") == .init(station: "main", command: .killSource))
        #expect(
            StatusRouter.stationRequest("/admin/killsource", query: "mount=%2Fmain")
                == .init(station: "/main", command: .killSource))
        for path in [
            "/stations/main", "/stations//release", "/stations/main/force/", "/stations/main/force/a/b",
            "/stations/main/release/x", "/station/main/release", "stations/main/release", "/stations/main/forced/a",
        ] {
            #expect(StatusRouter.stationRequest(path) == nil, "\(path)")
        }
    }

    @Test func aForceAndAReleaseArePostsCarriedOutOnce() {
        let (forced, forceAsked) = Self.answer(Self.request("POST", "/stations/main/force/backup"))
        #expect(forced.status == 200 && Self.text(forced) == "forced\n")
        #expect(forceAsked == [.init(station: "main", command: .force(input: "backup"))])
        let (released, releaseAsked) = Self.answer(Self.request("POST", "/stations/main/release"))
        #expect(released.status == 200 && Self.text(released) == "released\n")
        #expect(releaseAsked == [.init(station: "main", command: .release)])
        // Unknown station or input: 404 with the reason, nothing else done.
        let (noStation, _) = Self.answer(Self.request("POST", "/stations/jazz/release"))
        #expect(noStation.status == 404 && Self.text(noStation) == "no station jazz\n")
        let (noInput, _) = Self.answer(Self.request("POST", "/stations/main/force/9"))
        #expect(noInput.status == 404 && Self.text(noInput).contains("no input 9"))
    }

    /// What the operator is told of a command's outcome: done, refused by the station, or no answer in time.
    @Test func anOutcomeIsAnsweredAsTheStationGaveIt() {
        let done = StatusRouter.commandAnswer(.done("station main: the force is released"))
        #expect(done.status == 200 && Self.text(done) == "station main: the force is released\n")
        let refused = StatusRouter.commandAnswer(.refused("station main: no live source is on the air"))
        #expect(refused.status == 404 && Self.text(refused).contains("no live source"))
        let silent = StatusRouter.commandAnswer(nil)
        #expect(silent.status == 503 && Self.text(silent).contains("did not answer within 2 s"))
        // The queue is bounded; the first answer stands; a stopping station answers what is left.
        let queue = CommandQueue()
        let tickets = (0..<CommandQueue.capacity).compactMap { _ in queue.submit(.release) }
        #expect(tickets.count == CommandQueue.capacity && queue.submit(.killSource) == nil)
        tickets[0].answer(.done("one"))
        tickets[0].answer(.refused("two"))
        #expect(tickets[0].outcome == .done("one"))
        #expect(queue.take().count == CommandQueue.capacity && queue.take().isEmpty)
        let late = queue.submit(.killSource)
        queue.refuseAll("station main stopped")
        #expect(late?.outcome == .refused("station main stopped") && queue.take().isEmpty)
    }

    /// A GET (a link followed, a crawler) changes nothing; a browser's POST (which any web page can make it send,
    /// to the operator's own machine too) is refused by its `Origin` or `Sec-Fetch-Site`.
    @Test func onlyAPostFromATool() {
        for method in ["GET", "HEAD", "PUT", "DELETE"] {
            let (response, asked) = Self.answer(Self.request(method, "/stations/main/force/backup"))
            #expect(response.status == 405 && asked.isEmpty, "\(method)")
            #expect(response.headers.contains { $0.0 == "Allow" && $0.1 == "POST" })
        }
        for field in [("origin", "https://evil.example"), ("origin", "null"), ("sec-fetch-site", "cross-site")] {
            let (response, asked) = Self.answer(Self.request("POST", "/stations/main/force/backup", [field]))
            #expect(response.status == 403 && asked.isEmpty, "\(field)")
        }
    }

    /// With `status_token`, the controls want it as the reports do; a Host that is not the server's is 421.
    @Test func theTokenGuardsTheControls() {
        let access = StatusAccess(token: Self.token)
        let path = "/stations/main/force/backup"
        let (missing, missingAsked) = Self.answer(Self.request("POST", path), access: access)
        #expect(missing.status == 401 && missingAsked.isEmpty)
        #expect(missing.headers.contains { $0.0 == "WWW-Authenticate" && $0.1.hasPrefix("Bearer") })
        let (wrong, wrongAsked) = Self.answer(
            Self.request("POST", path, [("authorization", "Bearer operator-token-012345678")]), access: access)
        #expect(wrong.status == 401 && wrongAsked.isEmpty)
        let (right, rightAsked) = Self.answer(
            Self.request("POST", path, [("authorization", "Bearer operator-token-0123456789")]), access: access)
        #expect(right.status == 200 && rightAsked.count == 1)
        let (elsewhere, elsewhereAsked) = Self.answer(
            Self.request(
                "POST", path, [("host", "attacker.example"), ("authorization", "Bearer operator-token-0123456789")]),
            access: access)
        #expect(elsewhere.status == 421 && elsewhereAsked.isEmpty)
    }

    /// A station with three inputs, the backup playing after two switches: what status.json and /metrics show.
    static func station() -> StationStatus {
        var status = StationStatus(name: "main")
        status.inputs = [
            InputState(
                name: "1", kind: .http, url: "http://***@primary.example/live.mp3", state: .retrying,
                reason: "the upstream ended the stream", since: 1_796_400_000, connected: false, title: nil,
                bytesIn: 1000, reconnects: 3),
            InputState(
                name: "backup", kind: .http, url: "http://backup.example/live.mp3", state: .playing, reason: nil,
                since: 1_796_400_010, connected: true, title: "Backup Tone", bytesIn: 5000, reconnects: 0),
            InputState(
                name: "3", kind: .file, url: "/srv/radio/id.mp3", state: .standby, reason: nil, since: 1_796_400_000,
                connected: false, title: "Station ID", bytesIn: 0, reconnects: 0),
        ]
        status.playingInput = "backup"
        status.forcedInput = nil
        status.switches = [
            InputSwitch(at: 1_796_400_005, from: "1", to: "3", reason: "failed", detail: "refused"),
            InputSwitch(at: 1_796_400_010, from: "3", to: "backup", reason: "recovered", detail: nil),
        ]
        status.switchCounts = ["failed": 1, "recovered": 1]
        return status
    }

    @Test func statusJSONListsTheInputsAndTheSwitches() throws {
        let json = try #require(
            JSONSerialization.jsonObject(with: Data(StatusReport.json(StatusSnapshot(stations: [Self.station()])).utf8))
                as? [String: Any])
        let station = try #require((json["stations"] as? [[String: Any]])?.first)
        #expect(station["input_playing"] as? String == "backup")
        #expect(station["input_forced"] is NSNull)
        let inputs = try #require(station["inputs"] as? [[String: Any]])
        #expect(inputs.map { $0["state"] as? String } == ["retrying", "playing", "standby"])
        #expect(inputs[0]["reason"] as? String == "the upstream ended the stream")
        #expect(inputs[0]["url"] as? String == "http://***@primary.example/live.mp3")
        #expect(inputs[2]["kind"] as? String == "file" && inputs[2]["title"] as? String == "Station ID")
        let switches = try #require(station["switches"] as? [[String: Any]])
        #expect(switches.map { $0["reason"] as? String } == ["failed", "recovered"])
        #expect(switches.first?["detail"] as? String == "refused")
        #expect((station["switch_counts"] as? [String: Int]) == ["failed": 1, "recovered": 1])
    }

    @Test func metricsHaveTheActiveInputTheUpOnesAndEverySwitchReason() {
        let text = MetricsReport.text(StatusSnapshot(stations: [Self.station()]))
        let lines = Set(text.split(separator: "\n").map(String.init))
        for line in [
            "radio_relay_input_active{station=\"main\",input=\"1\"} 0",
            "radio_relay_input_active{station=\"main\",input=\"backup\"} 1",
            "radio_relay_input_active{station=\"main\",input=\"3\"} 0",
            "radio_relay_input_up{station=\"main\",input=\"1\"} 0",
            "radio_relay_input_up{station=\"main\",input=\"backup\"} 1",
            "radio_relay_input_switches_total{station=\"main\",reason=\"failed\"} 1",
            "radio_relay_input_switches_total{station=\"main\",reason=\"recovered\"} 1",
            "radio_relay_input_switches_total{station=\"main\",reason=\"dead air\"} 0",
            "radio_relay_input_switches_total{station=\"main\",reason=\"forced\"} 0",
            "radio_relay_input_switches_total{station=\"main\",reason=\"released\"} 0",
        ] {
            #expect(lines.contains(line), "\(line)")
        }
        #expect(!text.contains("primary.example"), "no URL in a label")
    }
}
