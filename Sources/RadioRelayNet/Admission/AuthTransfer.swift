import CCurl
import RadioRelaySystem

/// One backend call on the authenticator's multi handle: its easy handle (a `POST` of the call's form, HTTP Basic
/// with the listener's credentials unless the URL has its own, no redirects followed, `auth_timeout` in all), the
/// answer's headers (bounded by `ResponseHeaders`) and how much body it sent (dropped, bounded).
final class AuthTransfer {
    struct Problem: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    let job: AuthJob
    let easy: UnsafeMutableRawPointer
    private var headers = ResponseHeaders()
    private var bodyBytes = 0
    private let bodyLimit: Int
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)

    init(job: AuthJob, remaining: Double, bodyLimit: Int) throws {
        guard let easy = curl_easy_init() else { throw Problem("curl_easy_init failed") }
        self.job = job
        self.easy = easy
        self.bodyLimit = bodyLimit
        errorBuffer[0] = 0
        let context = Unmanaged.passUnretained(self).toOpaque()
        func check(_ code: CURLcode, _ option: String) throws {
            guard code == CURLE_OK else {
                throw Problem("libcurl refused \(option): \(String(cString: curl_easy_strerror(code)))")
            }
        }
        let milliseconds = Int(max(1, min(remaining, 3600) * 1000))
        let body = String(decoding: job.call.body, as: UTF8.self)
        try check(rr_curl_setopt_string(easy, CURLOPT_URL, job.url.raw), "CURLOPT_URL")
        try check(rr_curl_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"), "CURLOPT_PROTOCOLS_STR")
        try check(rr_curl_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0), "CURLOPT_FOLLOWLOCATION")
        try check(rr_curl_setopt_long(easy, CURLOPT_NOSIGNAL, 1), "CURLOPT_NOSIGNAL")
        try check(rr_curl_setopt_long(easy, CURLOPT_QUICK_EXIT, 1), "CURLOPT_QUICK_EXIT")
        try check(rr_curl_setopt_long(easy, CURLOPT_TIMEOUT_MS, milliseconds), "CURLOPT_TIMEOUT_MS")
        try check(rr_curl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, milliseconds), "CURLOPT_CONNECTTIMEOUT_MS")
        try check(rr_curl_setopt_string(easy, CURLOPT_COPYPOSTFIELDS, body), "CURLOPT_COPYPOSTFIELDS")
        try check(
            rr_curl_setopt_string(easy, CURLOPT_USERAGENT, "radio-relay/\(RadioRelayVersion.string)"),
            "CURLOPT_USERAGENT")
        // Icecast sends the listener's credentials as HTTP Basic too (empty ones when it gave none: `Basic Og==`),
        // unless the backend's URL names its own. A credential holding a NUL byte cannot go as text: empty then.
        if !Self.hasUserinfo(job.url.raw) {
            let credentials = job.call.credentials
            let usable = credentials.map { !$0.user.contains(0) && !$0.password.bytes.contains(0) } ?? false
            // As bytes, not text: a credential need not be UTF-8 (libcurl copies both).
            let user = (usable ? credentials?.user ?? [] : []).map { CChar(bitPattern: $0) } + [0]
            var password = (usable ? credentials?.password.bytes ?? [] : []).map { CChar(bitPattern: $0) } + [0]
            defer { for index in password.indices { password[index] = 0 } }
            try check(rr_curl_setopt_long(easy, CURLOPT_HTTPAUTH, rr_curlauth_basic), "CURLOPT_HTTPAUTH")
            try check(rr_curl_setopt_string(easy, CURLOPT_USERNAME, user), "CURLOPT_USERNAME")
            try check(rr_curl_setopt_string(easy, CURLOPT_PASSWORD, password), "CURLOPT_PASSWORD")
        }
        try check(rr_curl_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer), "CURLOPT_ERRORBUFFER")
        try check(rr_curl_setopt_pointer(easy, CURLOPT_WRITEDATA, context), "CURLOPT_WRITEDATA")
        try check(
            rr_curl_setopt_callback(easy, CURLOPT_WRITEFUNCTION) { _, size, count, context in
                guard let context else { return 0 }
                let transfer = Unmanaged<AuthTransfer>.fromOpaque(context).takeUnretainedValue()
                let n = size &* count
                transfer.bodyBytes += n
                return transfer.bodyBytes > transfer.bodyLimit ? 0 : n  // 0: libcurl ends the transfer
            }, "CURLOPT_WRITEFUNCTION")
        try check(rr_curl_setopt_pointer(easy, CURLOPT_HEADERDATA, context), "CURLOPT_HEADERDATA")
        try check(
            rr_curl_setopt_callback(easy, CURLOPT_HEADERFUNCTION) { data, size, count, context in
                guard let context else { return 0 }
                let transfer = Unmanaged<AuthTransfer>.fromOpaque(context).takeUnretainedValue()
                let n = size &* count
                transfer.headers.take(UnsafeRawBufferPointer(start: data, count: n))
                return n
            }, "CURLOPT_HEADERFUNCTION")
    }

    deinit {
        curl_easy_cleanup(easy)
        errorBuffer.deallocate()
    }

    /// What the call came to: the answer's verdict once its headers came whole (a body cut short, or too long, does
    /// not change what the headers said), else the failure.
    func verdict(_ result: CURLcode) -> AuthVerdict {
        var status = 0
        _ = rr_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        let headersCame = result == CURLE_OK || (result == CURLE_WRITE_ERROR && bodyBytes > bodyLimit)
        guard headersCame else {
            let detail = String(cString: errorBuffer)
            return .failed(detail.isEmpty ? String(cString: curl_easy_strerror(result)) : Redaction.text(detail))
        }
        return AuthVerdict.read(status: status, headers: headers, header: job.header)
    }

    /// Whether a URL names its own user (`http://user:pass@host/`): then the listener's credentials are not sent.
    static func hasUserinfo(_ url: String) -> Bool {
        let bytes = Array(url.utf8)
        guard let colon = bytes.indices.first(where: { bytes[$0...].starts(with: Array("://".utf8)) }) else {
            return false
        }
        let authority = bytes[(colon + 3)...].prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") }
        return authority.contains(UInt8(ascii: "@"))
    }
}

@available(*, unavailable) extension AuthTransfer: Sendable {}
