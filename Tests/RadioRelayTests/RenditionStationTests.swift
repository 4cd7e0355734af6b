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
    /// A station with several outputs from one decode: each output's listeners get a valid stream of the right
    /// encoding, the upstream is decoded once, one output's slow listener leaves the other's alone, and status shows
    /// every output.
    @Suite(.timeLimit(.minutes(1))) struct RenditionStationTests {
        /// The fixture (440 Hz left, 1000 Hz right, each at 0.475) relayed at 128k stereo, with a 32k mono rendition.
        static func station(configure: (inout StationConfiguration) -> Void = { _ in }) throws -> Station {
            try StationTests.station(upstream: Fixture.path("stereo-44k-128k.mp3")) { station in
                station.encoder.bitrate = 128_000
                var low = RenditionConfiguration(name: "low")
                low.encoder.bitrate = 32_000
                low.encoder.channels = 1
                low.broadcaster.bind = "127.0.0.1"
                low.broadcaster.port = 0
                station.renditions = [low]
                configure(&station)
            }
        }

        /// Reads every listener at once for `seconds`; returns what each received, in order.
        static func capture(ports: [UInt16], seconds: Double) throws -> [[UInt8]] {
            let clients = try ports.map { try ListenerClient(port: $0) }
            defer { for client in clients { client.close() } }
            final class Results: @unchecked Sendable {
                var bytes: [[UInt8]]
                let lock = NSLock()
                init(_ count: Int) { bytes = Array(repeating: [], count: count) }
            }
            let results = Results(clients.count)
            DispatchQueue.concurrentPerform(iterations: clients.count) { index in
                let (bytes, _) = clients[index].read(for: seconds)
                results.lock.lock()
                results.bytes[index] = bytes
                results.lock.unlock()
            }
            return results.bytes
        }

        /// The OpusHead channel count (byte 9 of the first packet).
        static func headChannels(_ capture: LiveCapture) -> Int? {
            guard let head = capture.pages.first?.packets.first, head.count > 9 else { return nil }
            return Int(head[9])
        }

        @Test(
            .enabled(if: tool("opusinfo") != nil, "needs opusinfo (Debian: opus-tools; `.ci/deps --test`)"),
            .enabled(if: tool("oggz-validate") != nil, "needs oggz-validate (Debian: oggz-tools; `.ci/deps --test`)"))
        func eachOutputServesItsOwnEncodingFromOneDecode() throws {
            let station = try Self.station()
            try station.start()
            defer { station.stop() }
            #expect(station.outputs.map(\.name) == [nil, "low"])
            #expect(station.outputs.map(\.mount) == ["test.opus", "test-low.opus"])
            #expect(station.broadcaster === station.outputs[0].broadcaster)
            let ports = station.outputs.map(\.broadcaster.address.port)
            let captures = try Self.capture(ports: ports, seconds: 3)

            let main = try LiveCapture(captures[0])
            let low = try LiveCapture(captures[1])
            for (name, capture) in [("main", main), ("low", low)] {
                #expect(capture.headerOK && capture.sequenceGaps == 0 && capture.granuleRegressions == 0, "\(name)")
                // Burst plus 3 s of live audio.
                #expect(Double(capture.left.count) / 48_000 > 3.0, "\(name): \(capture.left.count) samples")
            }
            #expect(Self.headChannels(main) == 2 && Self.headChannels(low) == 1)
            // Stereo keeps the channels apart; mono is (L + R) / 2, so each tone at half its level on both sides.
            #expect(abs(main.medianAmplitude(left: true, frequency: 440) - 0.475) < 0.05)
            #expect(abs(main.medianAmplitude(left: false, frequency: 1000) - 0.475) < 0.05)
            #expect(main.medianAmplitude(left: true, frequency: 1000) < 0.02)
            for left in [true, false] {
                #expect(
                    abs(low.medianAmplitude(left: left, frequency: 440) - 0.2375) < 0.04,
                    "\(low.amplitudes(left: left, frequency: 440))")
                #expect(abs(low.medianAmplitude(left: left, frequency: 1000) - 0.2375) < 0.04)
            }
            #expect(low.left == low.right)
            // The bitrates differ as asked (bytes per second of decoded audio, container included).
            let mainRate = Double(captures[0].count * 8) / (Double(main.left.count) / 48_000)
            let lowRate = Double(captures[1].count * 8) / (Double(low.left.count) / 48_000)
            #expect(mainRate > 110_000 && mainRate < 150_000, "\(mainRate)")
            #expect(lowRate > 25_000 && lowRate < 45_000, "\(lowRate)")

            // The reference tools: each stream is valid Ogg Opus with the channel count asked for (a live capture has
            // no end-of-stream page and starts with a join gap, which both tools name and nothing else).
            for (index, channels) in [(0, 2), (1, 1)] {
                let path = temporaryPath("rendition-\(index).opus")
                try Data(captures[index]).write(to: URL(fileURLWithPath: path))
                defer { try? FileManager.default.removeItem(atPath: path) }
                let info = try run(try #require(tool("opusinfo")), [path])
                #expect(info.stdout.contains("Channels: \(channels)\n"), "\(info.stdout)")
                // opusinfo exits 1 on any warning, so its words are checked instead.
                let warnings = (info.stdout + info.stderr).split(separator: "\n").filter {
                    ($0.contains("WARNING") || $0.contains("ERROR")) && !$0.contains("normal for live streams")
                        && !$0.contains("discontinuity in stream")
                }
                #expect(warnings.isEmpty, "\(warnings)")
                let validate = try run(try #require(tool("oggz-validate")), [path])
                let problems = (validate.stdout + validate.stderr).split(separator: "\n").filter {
                    !$0.hasSuffix(": Error:") && !$0.hasSuffix("missing *** eos")
                }
                #expect(problems.isEmpty, "\(validate.stdout)\(validate.stderr)")
            }

            // Decoded once: one Reader, every frame the Parser found decoded once, two Encoders.
            let deadline = monotonicNow() + 2
            while station.state.packets == 0 && monotonicNow() < deadline { usleep(20_000) }
            let state = station.state
            #expect(state.readers == 1 && state.encoders == 2)
            #expect(
                state.packets > 0 && state.decodedPackets == state.packets,
                "\(state.decodedPackets) of \(state.packets)")
        }

        /// The main output's only listener never reads (and has a tiny receive buffer), so it falls behind and is moved,
        /// then dropped; the rendition's listener meanwhile receives a continuous stream, and its output counts no move.
        @Test func aSlowListenerOnOneOutputLeavesTheOtherAlone() throws {
            let station = try Self.station {
                $0.encoder.bitrate = 256_000
                $0.broadcaster.maxLag = 0.5
                $0.broadcaster.burst = 0
            }
            try station.start()
            defer { station.stop() }
            let slow = try ListenerClient(port: station.port, receiveBuffer: 2048)
            defer { slow.close() }
            let (bytes, closed) = try ListenerClient(port: station.outputs[1].broadcaster.address.port).read(for: 6)
            #expect(!closed)
            let capture = try LiveCapture(bytes)
            #expect(capture.headerOK && capture.sequenceGaps == 0 && capture.granuleRegressions == 0)
            #expect(Double(capture.left.count) / 48_000 > 5.5, "\(capture.left.count) samples in 6 s")
            let deadline = monotonicNow() + 10
            func main() -> BroadcasterCounters.Snapshot { station.outputs[0].broadcaster.counters.snapshot }
            while main().moved + main().droppedSlow == 0 && monotonicNow() < deadline { usleep(50_000) }
            #expect(main().moved + main().droppedSlow > 0, "the slow listener was never moved: \(main())")
            let low = station.outputs[1].broadcaster.counters.snapshot
            #expect(low.moved == 0 && low.droppedSlow == 0 && low.connections == 1)
        }

        /// `/status.json` and `/metrics` list both outputs, with their own figures; promtool accepts the metrics.
        @Test func statusShowsEveryOutput() throws {
            let station = try Self.station()
            try station.start()
            defer { station.stop() }
            let listener = try ListenerClient(port: station.outputs[1].broadcaster.address.port)
            _ = listener.read(for: 0.5)
            defer { listener.close() }
            let snapshot = StatusSnapshot(stations: [station], uptime: 1, alive: [true])
            let json = try StatusReportTests.object(StatusReport.json(snapshot))
            let first = try #require((json["stations"] as? [[String: Any]])?.first)
            let outputs = try #require(first["outputs"] as? [[String: Any]])
            #expect(outputs.map { $0["rendition"] as? String } == ["main", "low"])
            #expect(outputs.map { $0["mount"] as? String } == ["test.opus", "test-low.opus"])
            #expect(outputs.map { $0["opus_bitrate"] as? Int } == [128_000, 32_000])
            #expect(outputs.map { $0["channels"] as? Int } == [2, 1])
            #expect(outputs.map { $0["listeners"] as? Int } == [0, 1] && first["listeners"] as? Int == 1)
            #expect(outputs[1]["listen"] as? String == station.outputs[1].broadcaster.address.description)
            #expect((outputs[1]["bytes_out"] as? Int ?? 0) > 0 && (outputs[0]["pages"] as? Int ?? 0) > 0)
            #expect(first["readers"] as? Int == 1 && first["encoders"] as? Int == 2)
            let metrics = MetricsReport.text(snapshot)
            #expect(metrics.contains("radio_relay_listeners{station=\"test\",rendition=\"low\"} 1\n"))
            #expect(metrics.contains("radio_relay_listeners{station=\"test\",rendition=\"main\"} 0\n"))
            #expect(metrics.contains("radio_relay_opus_channels{station=\"test\",rendition=\"low\"} 1\n"))
            #expect(metrics.contains("radio_relay_readers{station=\"test\"} 1\n"))
            if let promtool = tool("promtool") {
                let path = temporaryPath("rendition-metrics.txt")
                try Data(metrics.utf8).write(to: URL(fileURLWithPath: path))
                defer { try? FileManager.default.removeItem(atPath: path) }
                let check = try run("/bin/sh", ["-c", "\"$0\" check metrics < \"$1\"", promtool, path])
                #expect(
                    check.status == 0 && check.stdout.isEmpty && check.stderr.isEmpty, "\(check.stdout)\(check.stderr)")
            }
        }
    }
}

/// The chain with one Encoder per output, without threads: decoded once, each output complete and in step.
@Suite struct RenditionChainTests {
    @Test func oneDecodeFeedsEveryEncoder() throws {
        var stereo = EncoderConfiguration()
        stereo.bitrate = 128_000
        var mono = EncoderConfiguration()
        mono.bitrate = 32_000
        mono.channels = 1
        let encoders = try [stereo, mono].map { try Encoder($0) }
        var settings = StageChain.Configuration()
        settings.confirmsFrames = false
        settings.gapless = false
        settings.holdsDecodedAudio = true
        let chain = StageChain(settings, encoders: encoders)
        var outputs: [[UInt8]] = encoders.map { $0.headerPages.flatMap(\.bytes) }
        func collect() {
            for (index, pages) in chain.takePagesPerOutput().enumerated() { outputs[index] += pages.flatMap(\.bytes) }
        }
        try Fixture.bytes("stereo-44k-128k.mp3").withUnsafeBytes { try chain.feed($0) }
        try chain.release(seconds: chain.queuedSeconds)
        collect()
        try chain.encodeSilence(frames: 4_800)
        collect()
        #expect(chain.readersMade == 1 && chain.encoders.count == 2)
        #expect(chain.reader?.statistics.packets == chain.parser.statistics.packets)
        #expect(encoders[0].samplesIn == encoders[1].samplesIn && chain.samplesEncoded == encoders[0].samplesIn)
        let main = try LiveCapture(outputs[0])
        let low = try LiveCapture(outputs[1])
        #expect(main.headerOK && low.headerOK && main.sequenceGaps == 0 && low.sequenceGaps == 0)
        #expect(main.lastGranule == low.lastGranule && main.lastGranule > 48_000 * 2)
        #expect(abs(main.medianAmplitude(left: true, frequency: 440) - 0.475) < 0.05)
        #expect(abs(low.medianAmplitude(left: true, frequency: 440) - 0.2375) < 0.04)
        #expect(chain.takePages().isEmpty && chain.takePagesPerOutput().allSatisfy(\.isEmpty))
    }
}

/// What a running station with renditions takes in place, and what needs a restart.
@Suite struct RenditionUpdateTests {
    @Test func limitsAndTheRenditionSetApplyInPlace() throws {
        let station = try RealTimeTests.RenditionStationTests.station()
        let original = station.configuration
        var limits = original
        limits.renditions[0].broadcaster.maxListeners = 3
        limits.renditions[0].broadcaster.flushInterval = 0.1
        #expect(station.canUpdate(to: limits))
        var bitrate = original
        bitrate.renditions[0].encoder.bitrate = 48_000
        var stereo = original
        stereo.renditions[0].encoder.channels = 2
        var mount = original
        mount.renditions[0].mount = "other.opus"
        var added = original
        var more = RenditionConfiguration(name: "more")
        more.broadcaster.bind = "127.0.0.1"
        more.broadcaster.port = 0
        added.renditions.append(more)
        var removed = original
        removed.renditions = []
        var lag = original
        lag.renditions[0].broadcaster.maxLag = 600
        var mp3 = original
        mp3.mp3 = true
        #expect(station.canUpdate(to: bitrate), "a bitrate changes in place")
        #expect(station.canUpdate(to: added) && station.canUpdate(to: removed), "renditions come and go in place")
        for change in [stereo, mount, lag, mp3] { #expect(!station.canUpdate(to: change)) }
        try station.update(limits)
        #expect(station.outputs[1].broadcaster.configuration.maxListeners == 3)
        #expect(station.outputs[0].broadcaster.configuration.maxListeners == original.broadcaster.maxListeners)
        var both = limits
        both.renditions.append(more)
        try station.update(both)
        #expect(station.outputs.map(\.label) == ["main", "low", "more"])
        #expect(station.outputs[1].broadcaster.configuration.maxListeners == 3, "the kept rendition is the same output")
        #expect(throws: ConfigurationError.self) { try station.update(stereo) }
        #expect(station.outputs.map(\.label) == ["main", "low", "more"])
    }

    /// Mono: OpusHead says one channel, and libopus decodes the downmix.
    @Test func aMonoEncoderDownmixes() throws {
        let (bytes, encoder, pages) = try EncoderTests.encodeTones(seconds: 1) { $0.channels = 1 }
        let head = Array(pages[0].bytes[28...])
        #expect(head[9] == 1 && encoder.configuration.channels == 1)
        let decoded = try decodeOpus(bytes)
        #expect(abs(decoded.duration - 1) < 0.001)
        let window = 9_600..<38_400
        // 0.5 × sine on each side: each tone at 0.25 after (L + R) / 2.
        #expect(abs(toneAmplitude(decoded.left, frequency: 440, rate: 48_000, range: window) - 0.25) < 0.02)
        #expect(abs(toneAmplitude(decoded.right, frequency: 1000, rate: 48_000, range: window) - 0.25) < 0.02)
        #expect(throws: ConfigurationError.self) { _ = try Encoder(.init(channels: 3)) }
    }
}

extension EncoderConfiguration {
    fileprivate init(channels: Int) {
        self.init()
        self.channels = channels
    }
}
