import RadioRelayMedia
import RadioRelaySystem

/// A station's archive resources: its listing (`/NAME/archive.json`) and its HLS (`/NAME/archive.m3u8`,
/// `archive-init.mp4`, `archive-SECONDS.m4s`; in MPEG-TS `archive-ts.m3u8`, `archive-SECONDS.ts`). Each request passes the station's rules and access lists
/// (`ListenerAdmission.screen`) first, as its live mount's listeners do. The listing, the playlist and the init
/// segment come from memory (the writer's published index and titles, the live stream's OpusHead) and are answered
/// here; a segment is read from the disk, so its connection goes to the archive's own thread (`TimeShiftService`),
/// which answers and closes it. A station whose listeners authenticate offers neither: a player would need a pass
/// for each of its requests. Its page still lists the shows, with links to `?start=` on the mount, which
/// authenticates as a live listener does.
extension HTTPFrontLoop {
    func answerArchive(
        _ connection: HTTPConnection, _ raw: HTTPRequestHead.Request, station: String, name: String,
        directory: PublicDirectory
    ) {
        guard let shelf = directory.archives[station] else {
            return send(PublicRouter.text(404, "no archive\n"), on: connection)
        }
        let broadcaster = shelf.service.broadcaster
        let admission = broadcaster.admission
        let request = PublicRouter.listenerRequest(raw, metaInterval: 0)
        let ask = AdmissionAsk(
            station: station, mount: shelf.mount, kind: .hls, client: connection.peer, request: request)
        if let decision = admission.screen(ask) { return send(PublicRouter.notAdmitted(decision), on: connection) }
        if admission.policy.authentication[station]?.isOn == true {
            let text =
                "the archive's listing and HLS are not offered on a station whose listeners authenticate: "
                + "use \(shelf.mount)?start=\n"
            return send(PublicRouter.text(403, text), on: connection)
        }
        let isHead = raw.method == "HEAD"
        var response: HTTPResponse
        if name == "archive.json" {
            let body = ArchiveListing.json(
                station: station, mount: shelf.mount, index: shelf.service.index(), titles: shelf.service.titles())
            response = HTTPResponse(
                status: 200, contentType: "application/json", bytes: Array(body.utf8),
                headers: [("Cache-Control", "public, max-age=5")])
        } else if let container = ArchivePlaylist.Container(playlist: name) {
            let start = SourceRules.parameters(raw.query)["start"].flatMap { TimeShiftStart.moment($0) }
            guard let playlist = ArchivePlaylist.media(shelf.service.index(), start: start, container: container)
            else {
                return send(PublicRouter.text(404, "no whole segment archived yet\n"), on: connection)
            }
            response = HTTPResponse(
                status: 200, contentType: PublicRouter.playlistType, bytes: Array(playlist.utf8),
                headers: [("Cache-Control", "public, max-age=5")])
        } else if name == ArchivePlaylist.initName {
            guard let first = broadcaster.ring.headers.first,
                let head = OggSplice.head(of: first.bytes)
            else { return send(PublicRouter.text(503, "no stream header yet\n"), on: connection) }
            response = HTTPResponse(
                status: 200, contentType: PublicRouter.segmentType, bytes: CMAFOpus.initSegment(head),
                headers: [("Cache-Control", "public, max-age=60")])
        } else if let segment = ArchivePlaylist.segment(Substring(name)) {
            guard let range = shelf.service.index().range, segment.start >= range.lowerBound - 10_000,
                segment.start < range.upperBound
            else { return send(PublicRouter.text(404, "that segment is not in the archive\n"), on: connection) }
            if isHead {
                response = HTTPResponse(
                    status: 200, contentType: segment.container.contentType, bytes: [], headers: [])
            } else {
                return handOverSegment(connection, shelf: shelf, segment: segment, request: request)
            }
        } else {
            return send(PublicRouter.text(404, "no such archive resource\n"), on: connection)
        }
        response.headers.append(("Access-Control-Allow-Origin", "*"))
        response.omitsBody = isHead
        send(response, on: connection)
    }

    /// Gives a segment request's socket to the archive's thread, which reads the segment and answers.
    private func handOverSegment(
        _ connection: HTTPConnection, shelf: ArchiveShelf,
        segment: (start: Int64, container: ArchivePlaylist.Container),
        request: ListenerRequest
    ) {
        do {
            try http.loop.epoll.remove(connection.fd)
        } catch {
            return http.close(connection)
        }
        http.close(connection)
        guard let socket = connection.takeSocket() else { return }
        let arrival = ArrivingListener(
            socket: socket, peer: connection.peer, responseHead: [], request: request, session: nil,
            refusal: { PublicRouter.notAdmitted($0).encoded })
        if !shelf.service.handOver(arrival, from: .at(segment.start), answer: Self.archiveAnswer, segment: segment) {
            if let socket = arrival.takeSocket() {
                sendBestEffort(PublicRouter.text(503, "archive busy\n").encoded, on: socket.rawValue)
            }
        }
    }
}
