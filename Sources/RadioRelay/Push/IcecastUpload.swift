import CCurl
import Glibc
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// One source connection to Icecast: an HTTP `PUT` of Ogg pages on libcurl's multi interface (`CURLOPT_UPLOAD` with
/// a read callback). Owns the `CURL` easy and `CURLM` multi handles and the header list (freed in `deinit`, which
/// closes the connection: Icecast then ends the source).
///
/// What Icecast 2.4 (Debian's `icecast2` 2.4.4, checked by hand and by `IcecastPushTests`) takes:
/// - The body as plain bytes until the connection closes. libcurl sends an upload of unknown size chunked, and Icecast
///   2.4 does not decode chunked request bodies: it hands the chunk-size lines to its Ogg parser, which resyncs over
///   them and drops every page a chunk boundary cuts (a test PUT of 1000-byte chunks reached listeners as 0 of 6
///   pages; the same bytes unchunked as 6 of 6). HTTP/1.0 would avoid chunking, but libcurl refuses an HTTP/1.0 upload
///   of unknown size ("Chunky upload is not supported by HTTP 1.0"). So the request is HTTP/1.1 with an empty
///   `Transfer-Encoding:` header, which turns libcurl's chunking off and sends no length either.
/// - `Expect: 100-continue`, which libcurl adds to such an upload: Icecast 2.4.4 answers `HTTP/1.1 100 Continue` once
///   the password is right, so a wrong password or a mount in use is answered (401, 403) before any audio is sent.
/// - After that, `HTTP/1.0 200 OK` with no length, while it keeps reading the body: libcurl goes on uploading.
///
/// `send` queues pages (references: nothing is copied until libcurl asks). When the queue is empty the read callback
/// pauses the transfer (`CURL_READFUNC_PAUSE`), and the next `send` resumes it. Nothing here blocks longer than the
/// poll timeout.
final class IcecastUpload {
    let target: IcecastTarget
    private let easy: UnsafeMutableRawPointer
    private let multi: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    /// The easy handle is in the multi handle (so `deinit` takes it out first).
    private var added = false
    /// Pages waiting to be sent, oldest first; `offset` bytes of the first are sent.
    private var queue: [SharedPage] = []
    private var offset = 0
    private var paused = false
    /// Bytes handed to libcurl for sending.
    private(set) var bytesSent = 0
    /// The start of the response body (Icecast's reason for a refusal), at most 512 bytes.
    private var responseBody: [UInt8] = []
    /// Why the socket option callback refused the socket.
    private var socketProblem: SystemError?
    /// Keep-alive and `TCP_USER_TIMEOUT` (`PeerTimeout`): an Icecast whose path died stops acknowledging, and the
    /// kernel ends the connection this long after (the push then reconnects), besides the lag rule.
    private let peerTimeout: PeerTimeout?

    /// The connection's kernel send buffer (`SO_SNDBUF`; the kernel doubles it). Left to autotuning, it grew to
    /// megabytes while a stopped Icecast read nothing: 40 s of audio vanished into it unnoticed. Fixed, a stalled
    /// Icecast fills it and the receiver's buffer within seconds, and the push falls behind visibly (`PushCursor`).
    static let sendBuffer: Int32 = 32 * 1024

    /// Pages queued and not yet wholly handed to libcurl.
    var queuedPages: Int { queue.count }

    /// - Parameters:
    ///   - headers: `Name: value` lines besides the fixed ones (the station's `ice-*` headers).
    ///   - caFile: for `icecasts://`, the PEM file of CA certificates the server's must be signed by (`push_ca`);
    ///     nil: the system's CA store.
    init(
        target: IcecastTarget, headers: [String], connectTimeout: Int, caFile: String? = nil,
        peerTimeout: PeerTimeout? = nil
    ) throws(PushFailure) {
        guard CurlTransfer.globalInit == CURLE_OK else {
            let reason = String(cString: curl_easy_strerror(CurlTransfer.globalInit))
            throw PushFailure(.transfer, "curl_global_init failed: \(reason)")
        }
        guard let easy = curl_easy_init() else { throw PushFailure(.transfer, "curl_easy_init failed") }
        guard let multi = curl_multi_init() else {
            curl_easy_cleanup(easy)
            throw PushFailure(.transfer, "curl_multi_init failed")
        }
        self.target = target
        self.peerTimeout = peerTimeout
        self.easy = easy
        self.multi = multi
        errorBuffer[0] = 0
        try configure(headers: headers, connectTimeout: connectTimeout)
        if target.tls { try configureTLS(caFile: caFile) }
        let code = curl_multi_add_handle(multi, easy)
        guard code == CURLM_OK else {
            throw PushFailure(.transfer, "curl_multi_add_handle: \(String(cString: curl_multi_strerror(code)))")
        }
        added = true
    }

    deinit {
        if added { curl_multi_remove_handle(multi, easy) }
        curl_easy_cleanup(easy)
        curl_multi_cleanup(multi)
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }

    /// Every option must take: a libcurl without one of them is an error naming the option, not a request that
    /// silently differs from what Icecast was checked against.
    private func check(_ code: CURLcode, _ option: String) throws(PushFailure) {
        guard code == CURLE_OK else {
            throw PushFailure(.transfer, "libcurl refused \(option): \(String(cString: curl_easy_strerror(code)))")
        }
    }

    private func configure(headers: [String], connectTimeout: Int) throws(PushFailure) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        try check(rr_curl_setopt_string(easy, CURLOPT_URL, target.httpURL), "CURLOPT_URL")
        try check(rr_curl_setopt_string(easy, CURLOPT_PROTOCOLS_STR, target.httpScheme), "CURLOPT_PROTOCOLS_STR")
        try check(rr_curl_setopt_long(easy, CURLOPT_UPLOAD, 1), "CURLOPT_UPLOAD")
        try check(rr_curl_setopt_long(easy, CURLOPT_HTTPAUTH, rr_curlauth_basic), "CURLOPT_HTTPAUTH")
        try check(rr_curl_setopt_string(easy, CURLOPT_USERNAME, target.user), "CURLOPT_USERNAME")
        try check(rr_curl_setopt_string(easy, CURLOPT_PASSWORD, target.password), "CURLOPT_PASSWORD")
        try check(rr_curl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT, connectTimeout), "CURLOPT_CONNECTTIMEOUT")
        try check(rr_curl_setopt_long(easy, CURLOPT_NOSIGNAL, 1), "CURLOPT_NOSIGNAL")
        // Dropping a connection whose name lookup hangs does not wait for libcurl's resolver thread.
        try check(rr_curl_setopt_long(easy, CURLOPT_QUICK_EXIT, 1), "CURLOPT_QUICK_EXIT")
        try check(
            rr_curl_setopt_string(easy, CURLOPT_USERAGENT, "radio-relay/\(RadioRelayVersion.string)"),
            "CURLOPT_USERAGENT")
        try check(rr_curl_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer), "CURLOPT_ERRORBUFFER")
        try check(rr_curl_setopt_pointer(easy, CURLOPT_SOCKOPTDATA, context), "CURLOPT_SOCKOPTDATA")
        try check(
            rr_curl_setopt_sockopt(easy) { context, fd, _ in
                guard let context else { return 1 }  // CURL_SOCKOPT_ERROR
                let upload = Unmanaged<IcecastUpload>.fromOpaque(context).takeUnretainedValue()
                do throws(SystemError) {
                    try setSocketOption(fd, SOL_SOCKET, SO_SNDBUF, IcecastUpload.sendBuffer, name: "SO_SNDBUF")
                    try upload.peerTimeout?.apply(to: fd)
                    return 0  // CURL_SOCKOPT_OK
                } catch {
                    upload.socketProblem = error
                    return 1
                }
            }, "CURLOPT_SOCKOPTFUNCTION")
        // An empty `Transfer-Encoding:` turns libcurl's chunking off (see the type's comment).
        for line in ["Content-Type: audio/ogg", "Transfer-Encoding:", "ice-public: 0"] + headers {
            guard let list = curl_slist_append(headerList, line) else {
                throw PushFailure(.transfer, "curl_slist_append failed")
            }
            headerList = list
        }
        try check(rr_curl_setopt_slist(easy, CURLOPT_HTTPHEADER, headerList), "CURLOPT_HTTPHEADER")
        try check(rr_curl_setopt_pointer(easy, CURLOPT_READDATA, context), "CURLOPT_READDATA")
        try check(
            rr_curl_setopt_callback(easy, CURLOPT_READFUNCTION) { buffer, size, count, context in
                guard let context, let buffer else { return 0 }
                let upload = Unmanaged<IcecastUpload>.fromOpaque(context).takeUnretainedValue()
                return upload.fill(UnsafeMutableRawBufferPointer(start: buffer, count: size * count))
            }, "CURLOPT_READFUNCTION")
        try check(rr_curl_setopt_pointer(easy, CURLOPT_WRITEDATA, context), "CURLOPT_WRITEDATA")
        try check(
            rr_curl_setopt_callback(easy, CURLOPT_WRITEFUNCTION) { data, size, count, context in
                guard let context else { return 0 }
                return Unmanaged<IcecastUpload>.fromOpaque(context).takeUnretainedValue()
                    .keep(UnsafeRawBufferPointer(start: data, count: size * count))
            }, "CURLOPT_WRITEFUNCTION")
    }

    /// `icecasts://`: the server's certificate is verified, always — its chain (`CURLOPT_SSL_VERIFYPEER`) and its
    /// name (`CURLOPT_SSL_VERIFYHOST` 2: the URL's host is in its subjectAltName). These are libcurl's defaults, set
    /// anyway so that no build of it can differ; there is no setting to turn them off.
    private func configureTLS(caFile: String?) throws(PushFailure) {
        try check(rr_curl_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 1), "CURLOPT_SSL_VERIFYPEER")
        try check(rr_curl_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 2), "CURLOPT_SSL_VERIFYHOST")
        if let caFile { try check(rr_curl_setopt_string(easy, CURLOPT_CAINFO, caFile), "CURLOPT_CAINFO") }
    }

    /// The write callback: keeps the start of the response body (Icecast's reason for a refusal), drops the rest.
    private func keep(_ body: UnsafeRawBufferPointer) -> Int {
        let room = max(0, 512 - responseBody.count)
        responseBody += body.prefix(room)
        return body.count
    }

    /// The read callback: copies queued bytes into libcurl's buffer, or pauses the transfer when nothing is queued.
    private func fill(_ buffer: UnsafeMutableRawBufferPointer) -> Int {
        var written = 0
        while written < buffer.count, let page = queue.first {
            let count = min(page.bytes.count - offset, buffer.count - written)
            UnsafeMutableRawBufferPointer(rebasing: buffer[written..<written + count])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: page.bytes[offset..<offset + count]))
            written += count
            offset += count
            if offset == page.bytes.count {
                queue.removeFirst()
                offset = 0
            }
        }
        guard written > 0 else {
            paused = true
            return rr_curl_readfunc_pause
        }
        bytesSent += written
        return written
    }

    /// Queues `pages` for sending, and resumes a transfer the read callback paused.
    func send(_ pages: some Sequence<SharedPage>) throws(PushFailure) {
        queue.append(contentsOf: pages)
        guard paused, !queue.isEmpty else { return }
        paused = false
        let code = rr_curl_resume(easy)
        guard code == CURLE_OK else {
            throw PushFailure(.transfer, "curl_easy_pause: \(String(cString: curl_easy_strerror(code)))")
        }
    }

    /// Runs the transfer for at most `timeout` ms. Returns true once Icecast has accepted the source (a 2xx status);
    /// throws once the connection failed or ended (a push never ends by itself).
    func poll(timeout: Int) throws(PushFailure) -> Bool {
        var running: Int32 = 0
        try multiCheck(curl_multi_perform(multi, &running), "curl_multi_perform")
        if running > 0 {
            try multiCheck(curl_multi_poll(multi, nil, 0, Int32(clamping: timeout), nil), "curl_multi_poll")
            try multiCheck(curl_multi_perform(multi, &running), "curl_multi_perform")
        }
        var status = 0
        _ = rr_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        if status >= 300 { throw PushFailure.refused(status: status, body: responseBody) }
        guard running == 0 else { return (200..<300).contains(status) }
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE else { continue }
            try finished(message.pointee.data.result, accepted: status != 0)
        }
        throw PushFailure(.closed, "Icecast ended the connection")
    }

    /// How a transfer that ended failed.
    private func finished(_ result: CURLcode, accepted: Bool) throws(PushFailure) {
        guard result != CURLE_OK else { return }
        if let socketProblem { throw PushFailure(.transfer, "\(socketProblem)") }
        let detail = String(cString: errorBuffer)
        let text = detail.isEmpty ? String(cString: curl_easy_strerror(result)) : detail
        if target.tls, let failure = PushFailure.tls(result, text, target: target) { throw failure }
        switch result {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_CONNECT:
            throw PushFailure(.connect, "cannot connect: \(text)")
        case CURLE_OPERATION_TIMEDOUT where !accepted:
            throw PushFailure(.connect, "cannot connect: \(text)")
        case CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE:
            throw PushFailure(.closed, "the connection broke: \(text)")
        default:
            throw PushFailure(.transfer, text)
        }
    }

    private func multiCheck(_ code: CURLMcode, _ call: String) throws(PushFailure) {
        guard code == CURLM_OK else {
            throw PushFailure(.transfer, "\(call): \(String(cString: curl_multi_strerror(code)))")
        }
    }
}

@available(*, unavailable) extension IcecastUpload: Sendable {}
