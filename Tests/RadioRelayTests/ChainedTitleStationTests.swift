import Foundation
import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// In the serialized `RealTimeTests` chain: its tests block threads on real time (sockets, players), and too many
/// at once starve the rest of the suite on two cores.
extension RealTimeTests {
    /// A station with `chainTitles` on, relaying a real ICY upstream whose title changes, heard by real listeners and
    /// checked with the reference tools: every title change is a new chained link; a listener connected throughout gets
    /// each link's headers in sequence, one who joins later gets the current link's headers first.
    @Suite(.timeLimit(.minutes(1))) struct ChainedTitleStationTests {
        /// Titles by metadata block (8 192 bytes of 128 kb/s audio apart: block n at about (n + 1) × 0.51 s), clear of
        /// the fixture's loop points (every 48 900 bytes), with one title sent twice.
        static let titles = [1: "Title 1", 4: "Title 2", 6: "Title 2", 8: "Title 3", 12: "Title 4"]

        @Test(
            .enabled(if: tool("opusinfo") != nil, "needs opusinfo (Debian: opus-tools)"),
            .enabled(if: tool("oggz-validate") != nil, "needs oggz-validate (Debian: oggz-tools)"),
            .enabled(if: tool("ffmpeg") != nil, "needs ffmpeg")
        )
        func listenersGetALinkPerTitleAndLateJoinersTheCurrentLinksHeaders() throws {
            let audio = try Fixture.bytes("stereo-44k-128k.mp3")
            let body = icyStream(audio + audio + audio + audio, interval: 8192) { Self.titles[$0] }
            let server = try HTTPTestServer { _ in
                .init(headers: ["Content-Type": "audio/mpeg", "icy-metaint": "8192"], body: body, pace: 16_400)
            }
            defer { server.stop() }
            let station = try StationTests.station(upstream: server.baseURL + "/live.mp3") { $0.chainTitles = true }
            try station.start()
            defer { station.stop() }
            let port = station.port

            final class Captures: @unchecked Sendable {
                var early: [UInt8] = []
                var late: [UInt8] = []
            }
            let captures = Captures()
            let group = DispatchGroup()
            group.enter()
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) {
                defer { group.leave() }
                guard let client = try? ListenerClient(port: port) else { return }
                captures.early = client.read(for: 8.7).bytes
                client.close()
            }
            // Joins once "Title 2" has been current for 1.8 s: its link has started (the audio after the block waits at
            // most 1.5 s in the queue) and "Title 3" is not due before 2 s.
            let deadline = Date().addingTimeInterval(6)
            while station.state.title != "Title 2" && Date() < deadline { usleep(20_000) }
            usleep(1_800_000)
            let late = try ListenerClient(port: port)
            captures.late = late.read(for: 3.2).bytes
            late.close()
            group.wait()

            // The listener connected throughout: the first link (no title), then one link per new title, in order.
            let early = try ChainedCapture(captures.early)
            #expect(early.problems.isEmpty, "\(early.problems)")
            let heard = early.links.map(\.title)
            #expect(heard.count >= 4 && Array(heard.prefix(4)) == [nil, "Title 1", "Title 2", "Title 3"], "\(heard)")
            let unended = early.links.dropLast().filter { !$0.ended }.count
            #expect(unended == 0, "every link but the last ends with an EOS page")
            try checkCapture(captures.early, startingWith: ["Title 1", "Title 2", "Title 3"], decoded: early)

            // The late joiner: its first page is the BOS page of the current link, whose OpusTags have the title.
            let lateCapture = try ChainedCapture(captures.late)
            #expect(lateCapture.problems.isEmpty, "\(lateCapture.problems)")
            let first = try #require(lateCapture.links.first?.pages.first?.header)
            #expect(first.isBeginning && first.sequence == 0)
            let lateTitles = lateCapture.links.map(\.title)
            #expect(Array(lateTitles.prefix(2)) == ["Title 2", "Title 3"], "\(lateTitles)")
            // The same link the early listener was in (the serial), with audio from it only: no older link's pages.
            let serial = try #require(lateCapture.links.first?.serial)
            #expect(early.links.first { $0.serial == serial }?.title == "Title 2")
            try checkCapture(captures.late, startingWith: ["Title 2"], decoded: lateCapture)
        }

        /// The capture's complete links (up to its last EOS page; their titles start with `startingWith`) pass the
        /// reference tools, ffmpeg decodes as many samples as libopus with per-link trimming, and the tones run on
        /// through every link boundary (a lost or repeated piece of audio there would break the phase and lower the
        /// tone's amplitude).
        func checkCapture(_ bytes: [UInt8], startingWith: [String], decoded: ChainedCapture) throws {
            let complete = try ChainedCapture.completeLinks(bytes)
            let path = temporaryPath("chained-capture.opus")
            try Data(complete).write(to: URL(fileURLWithPath: path))
            defer { try? FileManager.default.removeItem(atPath: path) }
            let linked = try ChainedCapture(complete)
            let titles = linked.links.compactMap(\.title)
            #expect(Array(titles.prefix(startingWith.count)) == startingWith, "\(titles)")
            try checkChainedFile(path, titles: titles, duration: linked.duration, joined: true)
            #expect(decoded.duration >= linked.duration)
            for start in linked.linkStarts.dropFirst() {
                let window = start - 2_400..<start + 2_400
                let left = toneAmplitude(linked.left, frequency: 440, rate: 48_000, range: window)
                let right = toneAmplitude(linked.right, frequency: 1000, rate: 48_000, range: window)
                #expect(abs(left - 0.475) < 0.05 && abs(right - 0.475) < 0.05, "at sample \(start): \(left), \(right)")
            }
        }
    }
}

/// `opusinfo` and `oggz-validate` accept the chained Ogg Opus file at `path` (no warning, no error; with `joined`, the
/// page sequence gap where a live listener joined the first link is allowed), its links carry `titles` in order,
/// ffmpeg decodes it with no error line, and what ffmpeg decodes lasts `duration` (when given) within 50 ms, so no
/// link boundary lost or added audio.
func checkChainedFile(_ path: String, titles: [String], duration: Double?, joined: Bool = false) throws {
    let opusinfo = try run(try #require(tool("opusinfo")), [path])
    let info = opusinfo.stdout + opusinfo.stderr
    #expect(opusinfo.status == 0, "\(info)")
    let joinGap = ["WARNING: sequence number gap in stream 1.", "WARNING: discontinuity in stream (1)"]
    let complaints = info.split(separator: "\n").filter { line in
        (line.localizedCaseInsensitiveContains("warning") || line.localizedCaseInsensitiveContains("error"))
            && !(joined && joinGap.contains { line.hasPrefix($0) })
    }
    #expect(complaints.isEmpty, "\(info)")
    let reported = info.split(separator: "\n").compactMap { line -> String? in
        let text = line.trimmingCharacters(in: .whitespaces)
        return text.uppercased().hasPrefix("TITLE=") ? String(text.dropFirst(6)) : nil
    }
    #expect(reported == titles, "\(info)")
    let validate = try run(try #require(tool("oggz-validate")), [path])
    #expect(validate.status == 0, "\(validate.stdout)\(validate.stderr)")
    // ffmpeg reads the file as a listener's stream, through a pipe: on a seekable file ffmpeg 5.1 probes the
    // duration from the last 64 KiB and prints "failed to create or replace stream" when that lands in a later link
    // of any chained Ogg (opusenc's own chained files included), though it decodes the file whole.
    let ffmpeg = try run(try #require(tool("ffmpeg")), ["-v", "error", "-i", "pipe:0", "-f", "null", "-"], input: path)
    #expect(ffmpeg.status == 0 && ffmpeg.stderr.isEmpty && ffmpeg.stdout.isEmpty, "\(ffmpeg.stderr)")
    guard let duration else { return }
    // The samples ffmpeg decodes, counted from a raw dump (its container duration says nothing about links).
    let raw = temporaryPath("decoded.f32")
    defer { try? FileManager.default.removeItem(atPath: raw) }
    let dump = try run(
        try #require(tool("ffmpeg")),
        ["-v", "error", "-i", "pipe:0", "-f", "f32le", "-ac", "2", "-ar", "48000", raw], input: path)
    #expect(dump.status == 0, "\(dump.stderr)")
    let bytes = (try? FileManager.default.attributesOfItem(atPath: raw)[.size] as? Int) ?? 0
    let decoded = Double(bytes / 8) / 48_000
    #expect(abs(decoded - duration) < 0.05, "ffmpeg decoded \(decoded) s, expected \(duration) s")
}
