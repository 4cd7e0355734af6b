import Foundation
import Glibc
import RadioRelayTestSupport
import Testing

/// Headless Chromium driven through the Chrome DevTools protocol over `--remote-debugging-pipe`: the browser reads
/// JSON messages on its descriptor 3 and writes its own on 4, each ended by a NUL byte, so no WebSocket client is
/// needed. Spawned with `posix_spawn`, two pipes dup'ed to 3 and 4; attached (flat sessions) to its first page, to
/// which `page` commands go. Every wait has a deadline; `stop` kills the browser by its PID.
final class DevToolsPipe {
    let pid: pid_t
    private let toBrowser: Int32
    private let fromBrowser: Int32
    private var received: [UInt8] = []
    private var nextID = 1
    private var session: String?
    private let profile = temporaryPath("chromium-cdp")

    init() throws {
        let chromium = try #require(tool("chromium"))
        try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)
        var toChild: [Int32] = [0, 0]
        var fromChild: [Int32] = [0, 0]
        try #require(pipe(&toChild) == 0 && pipe(&fromChild) == 0)
        // Our ends must not reach the browser; its ends are moved above 2 … 4 so that dup2 onto 3 and 4 is a copy.
        func high(_ fd: Int32) -> Int32 {
            let moved = fcntl(fd, F_DUPFD_CLOEXEC, 10)
            close(fd)
            return moved
        }
        let childRead = high(toChild[0])
        let childWrite = high(fromChild[1])
        toBrowser = high(toChild[1])
        fromBrowser = high(fromChild[0])
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, childRead, 3)
        posix_spawn_file_actions_adddup2(&actions, childWrite, 4)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let arguments = [
            chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
            "--remote-debugging-pipe", "--user-data-dir=\(profile)", "about:blank",
        ]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var child: pid_t = 0
        let status = posix_spawn(&child, chromium, &actions, nil, &argv, environ)
        close(childRead)
        close(childWrite)
        try #require(status == 0, "posix_spawn: \(status)")
        pid = child
        let targets = try call("Target.getTargets", onPage: false)
        let infos = (targets["targetInfos"] as? [[String: Any]]) ?? []
        let page = try #require(infos.first { $0["type"] as? String == "page" }?["targetId"] as? String, "\(targets)")
        let attached = try call("Target.attachToTarget", ["targetId": page, "flatten": true], onPage: false)
        session = try #require(attached["sessionId"] as? String)
    }

    /// Sends a command (to the page's session unless `onPage` is false) and returns its result; throws on an error
    /// answer or after `seconds`.
    @discardableResult
    func call(_ method: String, _ parameters: [String: Any] = [:], onPage: Bool = true, seconds: Double = 15)
        throws -> [String: Any]
    {
        let id = nextID
        nextID += 1
        var message: [String: Any] = ["id": id, "method": method, "params": parameters]
        if onPage, let session { message["sessionId"] = session }
        var bytes = [UInt8](try JSONSerialization.data(withJSONObject: message))
        bytes.append(0)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { write(toBrowser, $0.baseAddress, $0.count) }
            try #require(count > 0, "write to the browser: errno \(errno)")
            sent += count
        }
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            while let end = received.firstIndex(of: 0) {
                let text = Data(received[..<end])
                received.removeSubrange(...end)
                guard let answer = try JSONSerialization.jsonObject(with: text) as? [String: Any],
                    answer["id"] as? Int == id
                else { continue }  // an event, or another command's answer
                if let error = answer["error"] { throw DevToolsError(method: method, detail: "\(error)") }
                return answer["result"] as? [String: Any] ?? [:]
            }
            var descriptor = pollfd(fd: fromBrowser, events: Int16(POLLIN), revents: 0)
            let left = Int32(max(1, deadline.timeIntervalSinceNow * 1000))
            guard poll(&descriptor, 1, min(left, 500)) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = chunk.withUnsafeMutableBytes { read(fromBrowser, $0.baseAddress, $0.count) }
            guard count > 0 else { throw DevToolsError(method: method, detail: "the browser closed its pipe") }
            received += chunk[..<count]
        }
        throw DevToolsError(method: method, detail: "no answer within \(seconds) s")
    }

    /// The value of a JavaScript expression in the page; nil while the page navigates (no context) or it threw.
    func evaluate(_ expression: String) -> Any? {
        guard let result = try? call("Runtime.evaluate", ["expression": expression, "returnByValue": true]),
            result["exceptionDetails"] == nil
        else { return nil }
        return (result["result"] as? [String: Any])?["value"]
    }

    /// Navigates and waits (at most `seconds`) until the document at `url` has loaded.
    func open(_ url: String, seconds: Double = 15) throws {
        try call("Page.navigate", ["url": url])
        let loaded = waitUntil(seconds) {
            evaluate("document.readyState + ' ' + location.href") as? String == "complete \(url)"
        }
        try #require(loaded, "\(url) did not load: \(evaluate("location.href + ' ' + document.readyState") ?? "-")")
    }

    /// A PNG of the viewport at `width` × `height` CSS pixels (a phone's viewport below 600 px).
    func screenshot(width: Int, height: Int, to path: String) throws {
        try call(
            "Emulation.setDeviceMetricsOverride",
            ["width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600])
        let shot = try call("Page.captureScreenshot", ["format": "png"])
        let data = try #require(Data(base64Encoded: shot["data"] as? String ?? ""))
        try data.write(to: URL(fileURLWithPath: path))
    }

    func stop() {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        close(toBrowser)
        close(fromBrowser)
        try? FileManager.default.removeItem(atPath: profile)
    }
}

struct DevToolsError: Error, CustomStringConvertible {
    var method: String
    var detail: String
    var description: String { "\(method): \(detail)" }
}
