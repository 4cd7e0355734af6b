import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// A station's archive (`archive = DIR`): one writer for its main output's Ogg Opus pages, in `DIR/<station>/`,
/// and one for its MP3 pass-through output's frames (`mp3 = yes`), in `DIR/<station>/mp3/`. Made with the station
/// (a directory that cannot be written refuses the station), started after its chain (the main output's header
/// pages go first), stopped after its pipeline, so that the last pages reach the files. Its recorder of live shows
/// (`record_live = DIR`) writes in `DIR/<station>/` and runs beside them.
extension Station {
    /// The writers `configuration` asks for: the main output's and the MP3 output's (nil when not asked).
    static func makeArchives(_ configuration: StationConfiguration) throws -> (
        main: ArchiveWriter?, mp3: ArchiveWriter?
    ) {
        guard let root = configuration.archive.directory else { return (nil, nil) }
        let directory = (root.hasSuffix("/") ? String(root.dropLast()) : root) + "/" + configuration.name
        let main = try ArchiveWriter(
            directory: directory, format: .opus, settings: configuration.archive, label: configuration.name)
        let mp3 =
            configuration.mp3
            ? try ArchiveWriter(
                directory: directory + "/mp3", format: .mp3, settings: configuration.archive,
                label: "\(configuration.name)/mp3")
            : nil
        return (main, mp3)
    }

    /// The recorder `configuration` asks for (nil without `record_live`).
    static func makeRecorder(_ configuration: StationConfiguration) throws -> RecordingWriter? {
        guard let root = configuration.recording.directory else { return nil }
        let directory = (root.hasSuffix("/") ? String(root.dropLast()) : root) + "/" + configuration.name
        return try RecordingWriter(directory: directory, label: configuration.name)
    }

    /// The writers that run.
    package var archives: [ArchiveWriter] { [archive, mp3Archive].compactMap { $0 } }

    /// Starts the writers, the main one with its output's header pages, then the services of their outputs'
    /// time-shifted listeners (`TimeShiftService`), which read the files the writers make.
    func startArchives() throws {
        if let archive {
            archive.offer(headers: outputs[0].broadcaster.ring.headers.map { Array($0.bytes) })
        }
        for writer in archives { try writer.start() }
        try recorder?.start()
        let mp3Output = outputs.first { $0.name == StationConfiguration.mp3OutputName }
        let served = [(archive, outputs.first { $0.name == nil }), (mp3Archive, mp3Output)]
        for case (let writer?, let output?) in served {
            let service = try TimeShiftService(
                broadcaster: output.broadcaster, directory: writer.directory, format: writer.format,
                index: { writer.status.snapshot.index }, titles: { writer.status.snapshot.titles })
            try service.start()
            output.broadcaster.timeShift.withLock { $0 = service }
        }
    }

    /// Stops the time-shift services (their listeners closed), then the writers once they wrote what was queued;
    /// false when one did not end within `timeout`.
    func stopArchives(timeout: Double) -> Bool {
        var stopped = recorder?.stop(timeout: timeout) ?? true
        for output in outputs {
            guard let service = output.broadcaster.timeShift.take() else { continue }
            if !service.stop(timeout: timeout) { stopped = false }
        }
        return archives.reduce(stopped) { $1.stop(timeout: timeout) && $0 }
    }
}
