import Foundation
import Glibc
import RadioRelaySystem

/// Network namespaces joined by a bridge, for tests over real links (`bench/netlab.py` builds and tears them down;
/// this is its Swift face): each node a namespace of its own at 198.18.0.N, its link to the bridge shaped in both
/// directions — a rate limit (tc tbf), random loss (nftables) and a blackhole (everything dropped, no FIN, no RST) —
/// and programs run inside a node with `ip netns exec`. The lab is torn down by `down` (and `deinit`), and by
/// netlab's guard process if this process dies first: no namespace, veth or nftables table is left behind.
///
/// Needs root, `ip`, `tc` and `nft` (iproute2, nftables) and python3; when namespaces cannot be made, `init` throws
/// why (a test fails with it: CI runs as root).
package final class NetworkLab: @unchecked Sendable {
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// bench/netlab.py in this repository.
    package static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("bench/netlab.py").path

    package let name: String
    /// Each node's address (198.18.0.N).
    package let addresses: [String: String]
    private let lock = NSLock()
    private var isDown = false

    /// Builds the lab: `nodes` (names of letters and digits) and the bridge.
    package init(nodes: [String]) throws {
        guard let python = tool("python3") else { throw Failure(description: "python3 is missing") }
        name = "t\(getpid() % 100_000)\(UInt32.random(in: 0..<100))"
        let result = try RadioRelayTestSupport.run(
            python, [Self.script, "up", name] + nodes + ["--owner", String(getpid())])
        guard result.status == 0,
            let object = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: String]
        else {
            throw Failure(
                description: "network namespaces could not be made (root, iproute2 and nftables are needed): "
                    + result.stderr.suffix(600))
        }
        addresses = object
    }

    deinit { down() }

    /// The node's namespace, as `ip netns` names it.
    package func namespace(_ node: String) -> String { "rrl-\(name)-\(node)" }

    /// Shapes a node's link, both ways: `rate` kbit/s (0: none), `loss` percent of packets dropped at random at each
    /// end, `blackhole` (true: everything dropped; false: restored). Nil leaves a setting as it is.
    package func link(_ node: String, rate: Int? = nil, loss: Int? = nil, blackhole: Bool? = nil) throws {
        var arguments = [Self.script, "link", name, node]
        if let rate { arguments += ["--rate", String(rate)] }
        if let loss { arguments += ["--loss", String(loss)] }
        if let blackhole { arguments.append(blackhole ? "--blackhole" : "--restore") }
        let result = try RadioRelayTestSupport.run(try python(), arguments)
        guard result.status == 0 else {
            throw Failure(description: "netlab link \(node): \(result.stderr.suffix(600))")
        }
    }

    /// A process of `executable` in `node`'s namespace (`ip netns exec` execs it: its PID is the program's), not
    /// started yet.
    package func process(_ node: String, _ executable: String, _ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try ip())
        process.arguments = ["netns", "exec", namespace(node), executable] + arguments
        process.standardInput = FileHandle.nullDevice
        return process
    }

    /// Runs a program in `node`'s namespace to completion: its exit status and output.
    @discardableResult
    package func run(in node: String, _ executable: String, _ arguments: [String]) throws
        -> (status: Int32, stdout: String, stderr: String)
    {
        try RadioRelayTestSupport.run(try ip(), ["netns", "exec", namespace(node), executable] + arguments)
    }

    /// Namespaces of this lab that exist now (empty once it is down).
    package var namespaces: [String] {
        guard let ip = tool("ip"), let listed = try? RadioRelayTestSupport.run(ip, ["netns", "list"]) else { return [] }
        return listed.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }
            .filter { $0.hasPrefix("rrl-\(name)-") }
    }

    /// Kills what still runs in the lab's namespaces and deletes them (their veths, qdiscs and tables with them).
    package func down() {
        lock.lock()
        defer { lock.unlock() }
        guard !isDown, let python = tool("python3") else { return }
        isDown = true
        _ = try? RadioRelayTestSupport.run(python, [Self.script, "down", name])
    }

    private func python() throws -> String {
        guard let python = tool("python3") else { throw Failure(description: "python3 is missing") }
        return python
    }

    private func ip() throws -> String {
        guard let ip = tool("ip") else { throw Failure(description: "ip is missing (iproute2)") }
        return ip
    }
}
