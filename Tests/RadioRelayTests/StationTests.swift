import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

@Suite(.timeLimit(.minutes(1))) struct StationTests {
    static func station(upstream: String, configure: (inout StationConfiguration) -> Void = { _ in }) throws -> Station
    {
        var configuration = StationConfiguration()
        configuration.name = "test"
        configuration.upstream = upstream
        configuration.broadcaster.bind = "127.0.0.1"
        configuration.broadcaster.port = 0
        configure(&configuration)
        return try Station(configuration)
    }

    /// The acceptance test: a real HTTP server on 127.0.0.1 serves a fixture with ICY metadata at real time; the
    /// station relays it; three listeners join at different moments and each decodes to the fixture's tones. Once
    /// as Icecast answers (`HTTP/1.0 200`), once as SHOUTcast v1 does (`ICY 200 OK`, whose headers must still be
    /// read as headers, or the metadata blocks would land in the audio), with a title that tries to forge a log line
    /// and drive a terminal.
    @Test(arguments: ["HTTP/1.0 200 OK", "ICY 200 OK"])
    func relaysAnICYUpstreamToThreeListeners(statusLine: String) throws {
        let audio = try Fixture.bytes("stereo-44k-128k.mp3")
        let interval = 8192
        // The file four times over, as one ICY stream (metadata positions count from the start of the response).
        let title = "Test Artist – Test Title\n<0>\u{1B}[31mred\u{202E}"
        let body = icyStream(audio + audio + audio + audio, interval: interval, title: title)
        let server = try HTTPTestServer { _ in
            .init(
                headers: ["Content-Type": "audio/mpeg", "icy-metaint": "\(interval)", "icy-name": "Fixture FM"],
                body: body, pace: 16_400, statusLine: statusLine)
        }
        defer { server.stop() }
        let station = try Self.station(upstream: server.baseURL + "/live.mp3")
        try station.start()
        defer { station.stop() }
        let port = station.broadcaster.address.port

        final class Results: @unchecked Sendable {
            var captures: [Int: [UInt8]] = [:]
            let lock = NSLock()
        }
        let results = Results()
        let group = DispatchGroup()
        for (index, delay) in [0.5, 2.0, 3.5].enumerated() {
            group.enter()
            DispatchQueue.global().asyncAfter(deadline: .now() + delay) {
                defer { group.leave() }
                guard let client = try? ListenerClient(port: port) else { return }
                let (bytes, _) = client.read(for: 3.0)
                client.close()
                results.lock.lock()
                results.captures[index] = bytes
                results.lock.unlock()
            }
        }
        group.wait()
        #expect(results.captures.count == 3)
        for index in 0..<3 {
            let bytes = try #require(results.captures[index])
            let capture = try LiveCapture(bytes)
            #expect(capture.headerOK, "listener \(index): no OpusHead/OpusTags first")
            #expect(capture.sequenceGaps == 0 && capture.granuleRegressions == 0, "listener \(index)")
            // Burst plus 3 s of live audio: at least 3 s decoded.
            #expect(Double(capture.left.count) / 48_000 > 3.0, "listener \(index): \(capture.left.count) samples")
            #expect(
                abs(capture.medianAmplitude(left: true, frequency: 440) - 0.475) < 0.05,
                "listener \(index): \(capture.amplitudes(left: true, frequency: 440))")
            #expect(abs(capture.medianAmplitude(left: false, frequency: 1000) - 0.475) < 0.05, "listener \(index)")
            #expect(capture.medianAmplitude(left: true, frequency: 1000) < 0.02)
        }
        let state = station.state
        #expect(state.title == "Test Artist – Test Title<0>[31mred")
        #expect(state.skippedBytes == 0, "metadata reached the Parser")
        #expect(state.upstream == .connected)
        #expect(state.format?.sampleRate == 44_100)
        #expect(station.broadcaster.counters.snapshot.connections == 3)
    }

    /// The upstream goes away: listeners keep receiving a valid stream (silence) with continuous granules.
    @Test func silenceFillsAnOutage() throws {
        let audio = try Fixture.bytes("stereo-44k-128k.mp3")
        let server = try HTTPTestServer { _ in .init(body: audio, pace: 16_000, repeats: 1) }
        let station = try Self.station(upstream: server.baseURL + "/x.mp3") {
            $0.reconnectDelay = 0.2...0.5
        }
        try station.start()
        defer { station.stop() }
        let client = try ListenerClient(port: station.broadcaster.address.port)
        defer { client.close() }
        server.stop()  // the 3 s body is served once; later reconnects are refused
        let (bytes, closed) = client.read(for: 5.0)
        #expect(!closed)
        let capture = try LiveCapture(bytes)
        #expect(capture.sequenceGaps == 0 && capture.granuleRegressions == 0)
        #expect(Double(capture.left.count) / 48_000 > 4.0, "\(capture.left.count)")
        let state = station.state
        #expect(state.silenceSeconds > 1)
        #expect(state.reconnects >= 1)
        if case .retrying = state.upstream {} else { Issue.record("upstream state \(state.upstream)") }
    }

    /// An upstream that sends faster than real time is read at real time when paced (files by default; any
    /// upstream on request).
    @Test func pacingHoldsAFastUpstreamToRealTime() throws {
        let audio = try Fixture.bytes("stereo-44k-128k.mp3")
        let server = try HTTPTestServer { _ in .init(body: audio + audio) }
        defer { server.stop() }
        let station = try Self.station(upstream: server.baseURL + "/fast.mp3") { $0.paced = true }
        try station.start()
        defer { station.stop() }
        usleep(1_500_000)
        let encoded = station.state.encodedSeconds
        // At most the 1 s lead ahead of the clock, and nothing dropped: a finite upstream is held back.
        #expect(encoded > 1.0 && encoded < 2.6, "\(encoded) s encoded after 1.5 s")
        // Silence only until the first audio arrived (the clock starts with the thread).
        #expect(station.state.silenceSeconds < 1.5)
        #expect(station.state.droppedSeconds == 0)
    }

    /// A live upstream that sends 12 s at once (a burst on connect) is held to the lead by dropping its oldest
    /// audio; what is encoded stays within a second of the wall clock.
    @Test func aBurstingLiveUpstreamIsHeldToTheLeadByDropping() throws {
        let audio = try Fixture.bytes("stereo-44k-128k.mp3")
        let server = try HTTPTestServer { _ in .init(body: audio + audio + audio + audio, holdOpen: 10) }
        defer { server.stop() }
        let station = try Self.station(upstream: server.baseURL + "/burst.mp3")
        try station.start()
        defer { station.stop() }
        usleep(1_500_000)
        let state = station.state
        #expect(state.encodedSeconds < 2.6, "\(state.encodedSeconds) s encoded after 1.5 s")
        #expect(state.droppedSeconds > 8, "\(state.droppedSeconds) s dropped")
    }
}

/// Upstreams that send bytes but no audio count as down; files without audio do not loop at once.
@Suite(.timeLimit(.minutes(1))) struct UpstreamWithoutAudioTests {
    @Test func anHTMLPageAnsweredWith200IsAnOutageWithAReason() throws {
        let page = Array("<!doctype html><html><body>Station moved</body></html>\n".utf8)
        let body = Array((0..<2000).map { _ in page }.joined())
        let server = try HTTPTestServer { _ in
            .init(headers: ["Content-Type": "text/html"], body: body, pace: 20_000, repeats: 5)
        }
        defer { server.stop() }
        let station = try StationTests.station(upstream: server.baseURL + "/") { $0.noAudioTimeout = 1 }
        try station.start()
        defer { station.stop() }
        let client = try ListenerClient(port: station.port)
        defer { client.close() }
        let (bytes, closed) = client.read(for: 2.5)
        #expect(!closed)
        // The listener got a valid stream of silence meanwhile.
        let capture = try LiveCapture(bytes)
        #expect(capture.headerOK && capture.sequenceGaps == 0)
        #expect(Double(capture.left.count) / 48_000 > 2)
        let state = station.state
        #expect(state.reconnects >= 1)
        let reason = state.lastError ?? ""
        #expect(reason.contains("no MPEG audio in 1 s") && reason.contains("Content-Type text/html"), "\(reason)")
    }

    /// A cold fallback whose file cannot be read shows as failed, with why, while the station plays its first
    /// input: seen before the emergency, not in it; it recovers when the file appears.
    @Test func aFallbackThatCannotBeReadShowsAsFailed() throws {
        let missing = temporaryPath("fallback.mp3")
        let station = try StationTests.station(upstream: Fixture.path("stereo-44k-128k.mp3")) {
            $0.upstreams.append(missing)
        }
        try station.start()
        defer { station.stop() }
        func fallback() -> InputState? { station.state.inputs.first { $0.name == "2" } }
        #expect(waitUntil(3) { fallback()?.state == .failed }, "\(String(describing: fallback()))")
        #expect(fallback()?.reason == "cannot read \(missing): No such file or directory")
        #expect(station.state.playingInput == "1")
        try FileManager.default.copyItem(atPath: Fixture.path("mono-48k.mp3"), toPath: missing)
        defer { try? FileManager.default.removeItem(atPath: missing) }
        #expect(waitUntil(Pipeline.fileCheckInterval + 3) { fallback()?.state == .standby })
    }

    @Test func aFileWithoutAudioIsRetriedWithBackoffNotLoopedAtOnce() throws {
        let path = temporaryPath("not-audio.mp3")
        try Data(String(repeating: "not an mp3 file\n", count: 400).utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let station = try StationTests.station(upstream: path)
        try station.start()
        defer { station.stop() }
        usleep(2_500_000)
        let state = station.state
        // 1 s, then 1–3 s: two or three attempts in 2.5 s, not thousands.
        #expect((1...3).contains(state.reconnects), "\(state.reconnects) reconnects")
        #expect(state.lastError?.hasSuffix("no MPEG audio in the file") == true, "\(state.lastError ?? "")")
    }
}
