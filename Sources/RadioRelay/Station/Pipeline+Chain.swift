import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// Which chain a station's pipeline drives, and where the pages it completes go.
extension Pipeline {
    /// The chain for `configuration`: an edge relay's for an Ogg Opus upstream (one output), else the transcoding
    /// stage chain with one Encoder per output. Each output's ring gets the header pages its listeners start with.
    static func makeChain(_ configuration: StationConfiguration, outputs: [StationOutput]) throws -> any PipelineChain {
        if configuration.relaysOggOpus {
            var settings = OpusRelayChain.Settings()
            settings.pageDuration = configuration.encoder.pageDuration
            settings.chainTitles = configuration.chainTitles
            settings.serial = configuration.encoder.serial
            let relay = try OpusRelayChain(settings)
            outputs.first?.broadcaster.ring.setHeaders(relay.headerPages)
            outputs.first?.hls?.setHeaders(relay.headerPages)
            return relay
        }
        var encoders: [Encoder] = []
        for output in outputs where output.format == .oggOpus {
            var encoderConfiguration = output.encoder
            encoderConfiguration.inputRate = configuration.commonRate
            let encoder = try Encoder(encoderConfiguration)
            output.broadcaster.ring.setHeaders(encoder.headerPages)
            output.hls?.setHeaders(encoder.headerPages)
            encoders.append(encoder)
        }
        var settings = StageChain.Configuration()
        settings.encoder = configuration.encoder
        settings.commonRate = configuration.commonRate
        // Live: a frame goes on as soon as it is complete (a listener should not wait a frame for the next header),
        // and a live stream's LAME tag says nothing about where our stream ends.
        settings.confirmsFrames = false
        settings.gapless = false
        // Decoded audio waits for the stream clock, which keeps it within the lead of the wall clock.
        settings.holdsDecodedAudio = true
        settings.maxTagLength = Parser.liveTagLimit
        let chain = StageChain(settings, encoders: encoders)
        chain.chainsTitles = configuration.chainTitles
        chain.setLimiter(ceiling: configuration.limiterCeiling, lowLatency: configuration.encoder.lowDelay)
        if outputs.contains(where: { $0.format == .mp3 }) { chain.passThrough = MP3PassThrough() }
        return chain
    }

    /// Hands the pages the chain completed in this iteration to each output: its Broadcaster (one wake-up for all
    /// of them) and its HLS stream, which segments the same packets.
    /// The MP3 pass-through output, if the station has one, gets the frames released meanwhile.
    /// The station's archive writers get the main output's pages and the MP3 output's frames, its recorder the
    /// main output's pages of a live show (queued, never waited for).
    func publish() {
        for (output, pages) in zip(outputs.lazy.filter { $0.format == .oggOpus }, chain.takePagesPerOutput()) {
            output.broadcaster.publish(pages)
            if !pages.isEmpty { output.hls?.publish(pages) }
            if output.name == nil, !pages.isEmpty {
                station.archive?.offer(pages, wall: wallClockNow())
                record(pages)
            }
        }
        if let chunk = chain.takePassThrough() {
            for output in outputs where output.format == .mp3 { output.broadcaster.publish(chunk) }
            station.mp3Archive?.offer(chunk, wall: wallClockNow())
        }
    }
}
