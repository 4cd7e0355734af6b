import Foundation
import Glibc
import RadioRelayTestSupport
import Testing

/// A page with `<audio src="STREAM">` served by a test HTTP server (`/page.html`, any path but `/report?…`), played in
/// headless Chromium: 10 s after playback begins, its script reports how far `currentTime` advanced and any error to
/// `/report?JSON` on the page's own origin (within 20 s, if it never played), which the server keeps.
final class ChromiumAudioPage: @unchecked Sendable {
    let site: HTTPTestServer
    private let lock = NSLock()
    private var reports: [String] = []

    convenience init(stream: String) throws {
        try self.init(html: Self.page(stream: stream))
    }

    /// The page that plays `stream` and reports.
    static func page(stream: String) -> String {
        """
        <!doctype html><html><body><audio id="a" src="\(stream)" autoplay></audio><script>
        const a = document.getElementById("a"); const errors = []; let start = null; let began = null;
        const report = () => {
          const result = { advanced: start === null ? 0 : a.currentTime - start,
            wall: began === null ? 0 : (Date.now() - began) / 1000, errors, paused: a.paused,
            page: location.href, src: a.currentSrc };
          fetch("/report?" + encodeURIComponent(JSON.stringify(result)));
        };
        a.addEventListener("error", () => errors.push("error " + (a.error ? a.error.code : "?")));
        a.addEventListener("playing", () => {
          if (start !== null) return;
          start = a.currentTime; began = Date.now();
          setTimeout(report, 10000);  // 10 s of playback
        });
        a.play().catch((e) => errors.push("play: " + e));
        setTimeout(() => { if (start === null) report(); }, 20000);  // never played: report that
        </script></body></html>
        """
    }

    /// A page of its own (`html`), which reports to `/report?JSON` as the stream page does.
    init(html page: String) throws {
        final class Sink: @unchecked Sendable { weak var page: ChromiumAudioPage? }
        let sink = Sink()
        site = try HTTPTestServer { path in
            if path.hasPrefix("/report?"), let page = sink.page {
                page.lock.lock()
                page.reports.append(String(path.dropFirst("/report?".count)).removingPercentEncoding ?? path)
                page.lock.unlock()
                return .init(headers: ["Content-Type": "text/plain"], body: Array("ok".utf8))
            }
            return .init(headers: ["Content-Type": "text/html"], body: Array(page.utf8))
        }
        sink.page = self
    }

    /// The `index`th report the page sent (counting from 0), once it came.
    private func report(_ index: Int) -> String? {
        lock.lock()
        defer { lock.unlock() }
        return reports.indices.contains(index) ? reports[index] : nil
    }

    private var reportCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return reports.count
    }

    /// Opens `url` (the page, from the server directly when nil, or through a proxy in front of it) and returns the
    /// report this visit sends; `whilePlaying` runs once it came, the browser still playing.
    /// - Parameters:
    ///   - home: `$HOME` for Chromium, whose NSS database (`$HOME/.pki/nssdb`) holds the certificates it trusts.
    ///   - arguments: more command-line switches.
    func play(
        at url: String? = nil, home: String? = nil, arguments: [String] = [], whilePlaying: () throws -> Void = {}
    ) throws -> [String: Any] {
        let earlier = reportCount
        let profile = temporaryPath("chromium-profile")
        try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: profile) }
        let browser = Process()
        browser.executableURL = URL(fileURLWithPath: try #require(tool("chromium")))
        // No sandbox (CI runs as root), no GPU, a fake audio sink (no sound card here), autoplay without a click.
        browser.arguments =
            [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-audio-output", "--no-first-run",
                "--autoplay-policy=no-user-gesture-required", "--user-data-dir=\(profile)",
            ] + arguments + [url ?? site.baseURL + "/page.html"]
        if let home { browser.environment = ProcessInfo.processInfo.environment.merging(["HOME": home]) { $1 } }
        browser.standardOutput = FileHandle.nullDevice
        browser.standardError = FileHandle.nullDevice
        try browser.run()
        defer {
            if browser.isRunning { browser.terminate() }
            browser.waitUntilExit()
        }
        let deadline = Date().addingTimeInterval(40)
        var report: String?
        while report == nil && Date() < deadline && browser.isRunning {
            usleep(200_000)
            report = self.report(earlier)
        }
        let text = try #require(report, "no report from the page")
        print("chromium: \(text)")
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not JSON: \(text)")
        try whilePlaying()
        return json
    }

    func stop() { site.stop() }
}
