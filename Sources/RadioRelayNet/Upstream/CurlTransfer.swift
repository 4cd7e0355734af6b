import CCurl
import RadioRelayMedia
import RadioRelaySystem

/// One HTTP(S) transfer on libcurl's multi interface: owns the `CURL` easy handle, the `CURLM` multi handle and the
/// header list (`curl_easy_init`/`curl_multi_init`/`curl_slist_append`, freed in `deinit`).
///
/// Bytes are collected by the write callback during `curl_multi_perform` and handed out by `poll`; nothing here
/// blocks longer than the poll timeout, so the station's thread keeps its real-time pace while the upstream is slow.
package final class CurlTransfer {
    package struct Options {
        package var connectTimeout = 10
        /// Seconds without a byte after which the transfer fails as stalled.
        package var stallTimeout = 15
        package var requestICYMetadata = false
        package var maxRedirects = 5
        package var userAgent = "radio-relay/\(RadioRelayVersion.string)"
        /// Keep-alive and `TCP_USER_TIMEOUT` on the connection (`PeerTimeout`); nil: the kernel's defaults.
        package var peerTimeout: PeerTimeout?
    }

    package let url: String
    private let easy: UnsafeMutableRawPointer
    private let multi: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?
    /// Status lines taken as "HTTP 200": SHOUTcast v1 answers `ICY 200 OK` followed by ordinary headers.
    private var aliases: UnsafeMutablePointer<curl_slist>?
    private var received: [UInt8] = []
    /// The response headers, line by line; after redirects only the last response's are kept (bounded).
    package private(set) var responseHeaders = ResponseHeaders()
    /// Response headers of the last response (after redirects), names lowercased.
    package var headers: [String: String] { responseHeaders.fields }
    package private(set) var status = 0
    package private(set) var isDone = false
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    /// The easy handle is in the multi handle (so `deinit` takes it out first).
    private var added = true
    /// Set on each socket libcurl opens (its socket option callback).
    private let peerTimeout: PeerTimeout?
    /// Why the socket option callback refused a socket (the transfer then fails with this).
    private var socketProblem: SystemError?

    package static var libraryVersion: String {
        String(cString: curl_version()).split(separator: " ").first.map(String.init) ?? "libcurl"
    }

    /// `curl_global_init`: not thread-safe, so once per process (a static is initialized once), before any handle.
    package static let globalInit: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

    package init(url: String, options: Options) throws {
        guard Self.globalInit == CURLE_OK else {
            let reason = String(cString: curl_easy_strerror(Self.globalInit))
            throw DownloadError(.transfer, url: url, "curl_global_init failed: \(reason)")
        }
        guard let easy = curl_easy_init() else { throw DownloadError(.transfer, url: url, "curl_easy_init failed") }
        guard let multi = curl_multi_init() else {
            curl_easy_cleanup(easy)
            throw DownloadError(.transfer, url: url, "curl_multi_init failed")
        }
        self.url = url
        self.easy = easy
        self.multi = multi
        peerTimeout = options.peerTimeout
        let context = Unmanaged.passUnretained(self).toOpaque()
        /// Every option must take: a libcurl without one of them (an old version, a build without a protocol)
        /// is an error naming the option, not a transfer that silently behaves differently.
        func check(_ code: CURLcode, _ option: String) throws {
            guard code == CURLE_OK else {
                let reason = String(cString: curl_easy_strerror(code))
                throw DownloadError(.transfer, url: url, "libcurl refused \(option): \(reason)")
            }
        }
        do {
            try check(rr_curl_setopt_string(easy, CURLOPT_URL, url), "CURLOPT_URL")
            try check(rr_curl_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"), "CURLOPT_PROTOCOLS_STR")
            try check(
                rr_curl_setopt_string(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"),
                "CURLOPT_REDIR_PROTOCOLS_STR")
            try check(rr_curl_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 1), "CURLOPT_FOLLOWLOCATION")
            try check(rr_curl_setopt_long(easy, CURLOPT_MAXREDIRS, options.maxRedirects), "CURLOPT_MAXREDIRS")
            try check(
                rr_curl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT, options.connectTimeout),
                "CURLOPT_CONNECTTIMEOUT")
            try check(rr_curl_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, 1), "CURLOPT_LOW_SPEED_LIMIT")
            try check(rr_curl_setopt_long(easy, CURLOPT_LOW_SPEED_TIME, options.stallTimeout), "CURLOPT_LOW_SPEED_TIME")
            try check(rr_curl_setopt_long(easy, CURLOPT_NOSIGNAL, 1), "CURLOPT_NOSIGNAL")
            // Cleaning up a transfer whose name lookup hangs does not wait for the resolver thread: the pipeline
            // must not block there (the thread is left to finish on its own).
            try check(rr_curl_setopt_long(easy, CURLOPT_QUICK_EXIT, 1), "CURLOPT_QUICK_EXIT")
            // SHOUTcast v1 answers "ICY 200 OK": an alias of a 200 status line, so its headers (icy-metaint) are
            // read as headers. HTTP/0.9 stays refused: a body without a status line is not a stream we trust.
            aliases = curl_slist_append(aliases, "ICY 200 OK")
            if let aliases {
                try check(rr_curl_setopt_slist(easy, CURLOPT_HTTP200ALIASES, aliases), "CURLOPT_HTTP200ALIASES")
            }
            try check(rr_curl_setopt_long(easy, CURLOPT_HTTP09_ALLOWED, 0), "CURLOPT_HTTP09_ALLOWED")
            try check(rr_curl_setopt_string(easy, CURLOPT_USERAGENT, options.userAgent), "CURLOPT_USERAGENT")
            errorBuffer[0] = 0
            try check(rr_curl_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer), "CURLOPT_ERRORBUFFER")
            if peerTimeout != nil {
                try check(rr_curl_setopt_pointer(easy, CURLOPT_SOCKOPTDATA, context), "CURLOPT_SOCKOPTDATA")
                try check(
                    rr_curl_setopt_sockopt(easy) { context, fd, _ in
                        guard let context else { return 1 }  // CURL_SOCKOPT_ERROR
                        let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
                        do throws(SystemError) {
                            try transfer.peerTimeout?.apply(to: fd)
                            return 0  // CURL_SOCKOPT_OK
                        } catch {
                            transfer.socketProblem = error
                            return 1
                        }
                    }, "CURLOPT_SOCKOPTFUNCTION")
            }
            if options.requestICYMetadata { headerList = curl_slist_append(headerList, "Icy-MetaData: 1") }
            if let headerList {
                try check(rr_curl_setopt_slist(easy, CURLOPT_HTTPHEADER, headerList), "CURLOPT_HTTPHEADER")
            }
            try check(rr_curl_setopt_pointer(easy, CURLOPT_WRITEDATA, context), "CURLOPT_WRITEDATA")
            try check(
                rr_curl_setopt_callback(easy, CURLOPT_WRITEFUNCTION) { data, size, count, context in
                    guard let context else { return 0 }
                    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
                    let n = size * count
                    transfer.received.append(contentsOf: UnsafeRawBufferPointer(start: data, count: n))
                    return n
                }, "CURLOPT_WRITEFUNCTION")
            try check(rr_curl_setopt_pointer(easy, CURLOPT_HEADERDATA, context), "CURLOPT_HEADERDATA")
            try check(
                rr_curl_setopt_callback(easy, CURLOPT_HEADERFUNCTION) { data, size, count, context in
                    guard let context else { return 0 }
                    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
                    let n = size * count
                    transfer.responseHeaders.take(UnsafeRawBufferPointer(start: data, count: n))
                    return n
                }, "CURLOPT_HEADERFUNCTION")
            let added = curl_multi_add_handle(multi, easy)
            guard added == CURLM_OK else {
                throw DownloadError(
                    .transfer, url: url,
                    "curl_multi_add_handle: \(String(cString: curl_multi_strerror(added)))")
            }
        } catch {
            added = false
            throw error
        }
    }

    deinit {
        if added { curl_multi_remove_handle(multi, easy) }
        curl_easy_cleanup(easy)
        curl_multi_cleanup(multi)
        curl_slist_free_all(headerList)
        curl_slist_free_all(aliases)
        errorBuffer.deallocate()
    }

    /// A multi-interface call failed (out of memory, a bad handle): the transfer cannot go on.
    private func multiCheck(_ code: CURLMcode, _ call: String) throws {
        guard code == CURLM_OK else {
            isDone = true
            throw DownloadError(.transfer, url: url, "\(call): \(String(cString: curl_multi_strerror(code)))")
        }
    }

    /// Runs the transfer for at most `timeout` ms; hands over what arrived. Returns false once the transfer ended
    /// well; throws when it failed.
    package func poll(timeout: Int, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        guard !isDone else { return false }
        var running: Int32 = 0
        try multiCheck(curl_multi_perform(multi, &running), "curl_multi_perform")
        if received.isEmpty && running > 0 {
            try multiCheck(curl_multi_poll(multi, nil, 0, Int32(clamping: timeout), nil), "curl_multi_poll")
            try multiCheck(curl_multi_perform(multi, &running), "curl_multi_perform")
        }
        // The status of the response whose body is arriving (or that ended the transfer): after a redirect that is
        // the final response's, never the cached 3xx (libcurl does not deliver the bodies of followed redirects).
        if !received.isEmpty || running == 0 {
            var code = 0
            if rr_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK { status = code }
        }
        if status >= 400 {
            isDone = true
            throw DownloadError(.httpStatus(status), url: url, "the server answered HTTP \(status)")
        }
        if !received.isEmpty {
            try received.withUnsafeBytes { try body($0) }
            received.removeAll(keepingCapacity: true)
        }
        guard running == 0 else { return true }
        isDone = true
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE else { continue }
            let result = message.pointee.data.result
            guard result == CURLE_OK else {
                let detail = socketProblem.map { "\($0)" } ?? String(cString: errorBuffer)
                let text = detail.isEmpty ? String(cString: curl_easy_strerror(result)) : detail
                let kind: DownloadError.Kind =
                    result == CURLE_URL_MALFORMAT || result == CURLE_UNSUPPORTED_PROTOCOL
                    ? .badURL : .transfer
                throw DownloadError(kind, url: url, text)
            }
        }
        return false
    }
}

@available(*, unavailable) extension CurlTransfer: Sendable {}
