import RadioRelayMedia
import RadioRelaySystem
import Synchronization

/// Handing a time-shifted listener (`?start=`, `?offset=`) to its mount's archive service (`TimeShiftService`),
/// after everything a live listener passes on this loop (its route, its station's authentication).
extension HTTPFrontLoop {
    func handOverTimeShifted(
        _ arrival: ArrivingListener, to broadcaster: Broadcaster, from start: TimeShiftStart, peer: SocketAddress,
        mount: PublicDirectory.Mount
    ) {
        guard let service = broadcaster.timeShift.snapshot else {
            if let socket = arrival.takeSocket() {
                let text = "\(mount.path) keeps no archive: time shift (start=, offset=) is not offered\n"
                sendBestEffort(PublicRouter.text(404, text).encoded, on: socket.rawValue)
            }
            arrival.session?.end(.notServed)
            return
        }
        guard service.handOver(arrival, from: start, answer: Self.archiveAnswer) else {
            if let socket = arrival.takeSocket() {
                sendBestEffort(PublicRouter.text(503, "time shift busy\n").encoded, on: socket.rawValue)
            }
            arrival.session?.end(.notServed)
            http.logLimited(.refused, now: monotonicNow(), "http: \(peer) refused: \(mount.path) time shift is busy")
            return
        }
    }

    /// How the archive's thread answers a request it does not serve (or a segment): status, type (empty: text), body,
    /// fields; the connection closes after.
    static let archiveAnswer: TimeShiftService.Answer = { status, type, body, fields in
        var response =
            type.isEmpty
            ? PublicRouter.text(status, String(decoding: body, as: UTF8.self))
            : HTTPResponse(status: status, contentType: type, bytes: body, headers: [])
        response.headers += fields
        if !type.isEmpty { response.headers.append(("Access-Control-Allow-Origin", "*")) }
        response.keepAlive = false
        return response.encoded
    }
}
