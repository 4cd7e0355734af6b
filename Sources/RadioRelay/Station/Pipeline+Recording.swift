import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// Recordings of live shows (`record_live`): the pipeline's side. A show begins when the live source takes over
/// (its audio starts to play) and ends at its hand-back, once the source's audio that still waited in the stream
/// clock's queue (and the page the encoder had begun) is out: the main output's pages published meanwhile, what the
/// listeners heard, go to the station's `RecordingWriter`, which writes them on its own thread. With
/// `record_live_source` the source's connection's bytes go there too, as they come (`Pipeline+Inputs.pull`).
extension Pipeline {
    /// The live source at `index` took over: its show begins, named by its `ice-name`, else its DJ, else its title.
    func showBegins(_ index: Int) {
        guard let recorder = station.recorder, let live = inputs[index].live else { return }
        if show != nil { recorder.end() }  // the last show's tail is cut short by the new one
        let name = RecordingName.show([live.name, live.dj, inputs[index].title])
        let headers = outputs.first?.broadcaster.ring.headers.map { Array($0.bytes) } ?? []
        recorder.begin(
            RecordingShow(
                name: name, wall: wallClockNow(), base: mainGranule, headers: headers,
                maxSeconds: configuration.recording.maxSeconds))
        show = LiveShowSpan()
    }

    /// The station hands back from the live source: its show ends once the audio that waits is out.
    func showHandsBack() {
        guard show != nil else { return }
        let page = Double(configuration.encoder.pageDuration) / 1000
        show?.handBack(granule: mainGranule, tail: chain.queuedSeconds + page)
    }

    /// The main output's pages of this iteration: those of a show to the recorder; its last one ends it.
    func record(_ pages: [OggPage]) {
        if let last = pages.last(where: { !$0.isHeader && $0.granulePosition >= 0 }) {
            mainGranule = last.granulePosition
        }
        guard let span = show, let recorder = station.recorder else { return }
        let wall = wallClockNow()
        guard let end = pages.firstIndex(where: { !$0.isHeader && span.isLast(granule: $0.granulePosition) }) else {
            return recorder.offer(pages, wall: wall)
        }
        recorder.offer(Array(pages[...end]), wall: wall)
        recorder.end()
        show = nil
    }

    /// The live source's connection closed: its copy (`record_live_source`) is complete.
    func sourceEnded(_ input: StationInput) {
        guard input.live?.copiesSource == true else { return }
        input.live?.copiesSource = false
        station.recorder?.sourceEnded()
    }
}
