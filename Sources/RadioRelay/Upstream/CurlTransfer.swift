import CCurl

/// One HTTP(S) transfer on libcurl's multi interface: owns the `CURL` easy handle, the `CURLM` multi handle and the
/// header list (`curl_easy_init`/`curl_multi_init`/`curl_slist_append`, freed in `deinit`).
///
/// Bytes are collected by the write callback during `curl_multi_perform` and handed out by `poll`; nothing here
/// blocks longer than the poll timeout, so the station's thread keeps its real-time pace while the upstream is slow.
final class CurlTransfer {
    struct Options {
        var connectTimeout = 10
        /// Seconds without a byte after which the transfer fails as stalled.
        var stallTimeout = 15
        var requestICYMetadata = false
        var maxRedirects = 5
        var userAgent = "radio-relay/\(RadioRelayVersion.string)"
    }

    let url: String
    private let easy: UnsafeMutableRawPointer
    private let multi: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var received: [UInt8] = []
    /// Response headers of the last response (after redirects), names lowercased.
    private(set) var headers: [String: String] = [:]
    private(set) var status = 0
    private(set) var isDone = false
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)

    static var libraryVersion: String { String(cString: curl_version()).split(separator: " ").first.map(String.init) ?? "libcurl" }

    private static let globalInit: Bool = {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT))  // not thread-safe: once per process, before any handle
        return true
    }()

    init(url: String, options: Options) throws {
        _ = Self.globalInit
        guard let easy = curl_easy_init() else { throw DownloadError(.transfer, url: url, "curl_easy_init failed") }
        guard let multi = curl_multi_init() else {
            curl_easy_cleanup(easy)
            throw DownloadError(.transfer, url: url, "curl_multi_init failed")
        }
        self.url = url
        self.easy = easy
        self.multi = multi
        let context = Unmanaged.passUnretained(self).toOpaque()
        rr_curl_setopt_string(easy, CURLOPT_URL, url)
        rr_curl_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https")
        rr_curl_setopt_string(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        rr_curl_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 1)
        rr_curl_setopt_long(easy, CURLOPT_MAXREDIRS, options.maxRedirects)
        rr_curl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT, options.connectTimeout)
        rr_curl_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, 1)
        rr_curl_setopt_long(easy, CURLOPT_LOW_SPEED_TIME, options.stallTimeout)
        rr_curl_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        rr_curl_setopt_long(easy, CURLOPT_HTTP09_ALLOWED, 1)  // SHOUTcast v1 answers "ICY 200 OK"
        rr_curl_setopt_string(easy, CURLOPT_USERAGENT, options.userAgent)
        errorBuffer[0] = 0
        rr_curl_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer)
        if options.requestICYMetadata { headerList = curl_slist_append(headerList, "Icy-MetaData: 1") }
        if let headerList { rr_curl_setopt_slist(easy, CURLOPT_HTTPHEADER, headerList) }
        rr_curl_setopt_pointer(easy, CURLOPT_WRITEDATA, context)
        rr_curl_setopt_callback(easy, CURLOPT_WRITEFUNCTION) { data, size, count, context in
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
            let n = size * count
            transfer.received.append(contentsOf: UnsafeRawBufferPointer(start: data, count: n))
            return n
        }
        rr_curl_setopt_pointer(easy, CURLOPT_HEADERDATA, context)
        rr_curl_setopt_callback(easy, CURLOPT_HEADERFUNCTION) { data, size, count, context in
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
            let n = size * count
            transfer.header(UnsafeRawBufferPointer(start: data, count: n))
            return n
        }
        curl_multi_add_handle(multi, easy)
    }

    deinit {
        curl_multi_remove_handle(multi, easy)
        curl_easy_cleanup(easy)
        curl_multi_cleanup(multi)
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }

    private func header(_ line: UnsafeRawBufferPointer) {
        let text = String(decoding: line, as: UTF8.self).trimmingWhitespace()
        if text.hasPrefix("HTTP/") || text.hasPrefix("ICY ") {
            headers.removeAll()  // a new response (after a redirect or a 100 Continue)
            return
        }
        guard let colon = text.firstIndex(of: ":") else { return }
        let name = text[..<colon].lowercased()
        let value = String(text[text.index(after: colon)...]).trimmingWhitespace()
        headers[name] = value
    }

    /// Runs the transfer for at most `timeout` ms; hands over what arrived. Returns false once the transfer ended
    /// well; throws when it failed.
    func poll(timeout: Int, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        guard !isDone else { return false }
        var running: Int32 = 0
        curl_multi_perform(multi, &running)
        if received.isEmpty && running > 0 {
            curl_multi_poll(multi, nil, 0, Int32(timeout), nil)
            curl_multi_perform(multi, &running)
        }
        if status == 0 {
            var code = 0
            rr_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &code)
            status = code
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
                let detail = String(cString: errorBuffer)
                let text = detail.isEmpty ? String(cString: curl_easy_strerror(result)) : detail
                let kind: DownloadError.Kind = result == CURLE_URL_MALFORMAT || result == CURLE_UNSUPPORTED_PROTOCOL
                    ? .badURL : .transfer
                throw DownloadError(kind, url: url, text)
            }
        }
        return false
    }
}
