import Foundation
import Glibc
import RadioRelayTestSupport
import Testing

/// A listener authentication backend as operators write them, in Python (Debian's `python3`), started by the test
/// on a free port and stopped by its PID. It records every call (path, form fields, `Authorization`) and answers
/// Icecast's way:
///
/// - `/auth`: admits (`icecast-auth-user: 1`) user `alice` with password `s3cret`, or a stream URL holding
///   `token=good`; a stream URL holding `limit=N` also gets `icecast-auth-timelimit: N`; anyone else gets
///   `icecast-auth-message: wrong password`. `/slow` is the same after a second.
/// - `/hang`: answers nothing for 30 s. `/garbage`: bytes that are not HTTP, then closes.
/// - anything else (`/remove`): `200`.
final class AuthBackend: @unchecked Sendable {
    static let script = #"""
        import http.server, json, sys, time, urllib.parse, base64
        port, path = int(sys.argv[1]), sys.argv[2]
        out = open(path, "a", buffering=1)
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"
            def do_POST(self):
                length = min(int(self.headers.get("Content-Length", "0") or 0), 65536)
                body = self.rfile.read(length).decode("utf-8", "replace")
                fields = [[k, v] for k, v in urllib.parse.parse_qsl(body, keep_blank_values=True)]
                out.write(json.dumps({"path": self.path, "fields": fields, "body": body, "t": time.time(),
                    "authorization": self.headers.get("Authorization")}) + "\n")
                form = dict(fields)
                if self.path == "/hang":
                    time.sleep(30)
                if self.path == "/garbage":
                    self.wfile.write(b"\x00\x01 this is not HTTP \xff\r\n\r\n")
                    return
                if self.path == "/slow":
                    time.sleep(1)
                self.send_response(200)
                if self.path in ("/auth", "/slow") and form.get("action") == "listener_add":
                    mount = form.get("mount", "")
                    if (form.get("user"), form.get("pass")) == ("alice", "s3cret") or "token=good" in mount:
                        self.send_header("icecast-auth-user", "1")
                        if "limit=" in mount:
                            self.send_header("icecast-auth-timelimit", mount.split("limit=")[1].split("&")[0])
                    else:
                        self.send_header("icecast-auth-message", "wrong password")
                self.send_header("Content-Length", "0")
                self.end_headers()
            def log_message(self, *args):
                pass
        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 1024
        Server(("127.0.0.1", port), Handler).serve_forever()
        """#

    /// One call as the backend received it.
    struct Call {
        let path: String
        /// The form's fields in the order they came.
        let fields: [(String, String)]
        let authorization: String?
        let time: Double

        subscript(_ name: String) -> String? { fields.first { $0.0 == name }?.1 }
    }

    let port: UInt16
    let directory = temporaryPath("auth-backend")
    private let process = Process()

    /// - Parameter port: where it listens (default: a free port).
    init(port: UInt16? = nil) throws {
        self.port = try port ?? freePort()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Self.script.write(toFile: directory + "/backend.py", atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: try #require(tool("python3")))
        process.arguments = [directory + "/backend.py", "\(self.port)", directory + "/calls.jsonl"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let accepting = waitUntil(10) { (try? ListenerClient(port: self.port)) != nil }
        try #require(accepting, "the backend did not listen on \(port)")
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Every call so far, in the order they came.
    var calls: [Call] {
        let text = (try? String(contentsOfFile: directory + "/calls.jsonl", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let fields = object["fields"] as? [[String]]
            else { return nil }
            return Call(
                path: object["path"] as? String ?? "",
                fields: fields.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil },
                authorization: object["authorization"] as? String, time: object["t"] as? Double ?? 0)
        }
    }

    func calls(_ action: String) -> [Call] { calls.filter { $0["action"] == action } }

    /// SIGKILL by PID: a child of the test process may have SIGTERM blocked, inherited from the thread that
    /// started it, and Python does not unblock it.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
