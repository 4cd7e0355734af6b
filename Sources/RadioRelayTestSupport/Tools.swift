import Foundation
import RadioRelay
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

// Shared by the unit tests and the end-to-end tests: fixtures, temporary paths, the outside tools, decoding.

/// The MP3 fixtures under Tests/Fixtures.
package enum Fixture {
    package static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Tests/Fixtures")

    package static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    package static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    package static let all = [
        "stereo-44k-128k.mp3", "mono-48k.mp3", "stereo-22k.mp3", "id3-xing-vbr.mp3",
        "garbage-spliced.mp3", "rate-switch.mp3",
    ]
}

/// A unique path under the temporary directory.
package func temporaryPath(_ suffix: String) -> String {
    NSTemporaryDirectory() + "radio-relay-test-\(UUID().uuidString.prefix(8))-\(suffix)"
}

/// An Ogg Opus file decoded with libopus (through `LiveCapture`, which checks every page on the way), with the
/// pre-skip removed and the end trimmed to the final granule as RFC 7845 says.
package struct DecodedOpus {
    package var left: [Float]
    package var right: [Float]
    package var pages: [OggPageReader.Page]
    package var duration: Double { Double(left.count) / 48_000 }
}

package func decodeOpus(_ bytes: [UInt8]) throws -> DecodedOpus {
    let capture = try LiveCapture(bytes)
    let end = min(capture.left.count, Int(capture.lastGranule))
    let start = min(capture.preSkip, end)
    return DecodedOpus(
        left: Array(capture.left[start..<end]), right: Array(capture.right[start..<end]),
        pages: capture.pages)
}

/// A tool from the system, when installed (haproxy lives in /usr/sbin).
package func tool(_ name: String) -> String? {
    for directory in ["/usr/bin", "/usr/local/bin", "/bin", "/usr/sbin"]
    where FileManager.default.isExecutableFile(atPath: directory + "/" + name) {
        return directory + "/" + name
    }
    return nil
}

/// Runs a program to completion, its standard input read from the file `input` (none when nil); returns its exit
/// status, standard output and standard error.
@discardableResult
package func run(_ executable: String, _ arguments: [String], input: String? = nil) throws
    -> (status: Int32, stdout: String, stderr: String)
{
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = try input.map { try FileHandle(forReadingFrom: URL(fileURLWithPath: $0)) } ?? .nullDevice
    try process.run()
    // Read both pipes to the end before waiting, so a chatty tool cannot block on a full pipe.
    final class Box: @unchecked Sendable { var data = Data() }
    let errBox = Box()
    let group = DispatchGroup()
    group.enter()
    DispatchQueue.global().async {
        errBox.data = err.fileHandleForReading.readDataToEndOfFile()
        group.leave()
    }
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    let errData = errBox.data
    process.waitUntilExit()
    return (
        process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self)
    )
}

/// A TCP port on 127.0.0.1 that nothing listens on now: the kernel's choice for a socket bound to port 0, closed
/// again (tests of both targets draw their ports here).
package func freePort() throws -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw SystemError("socket", errno: errno) }
    defer { close(fd) }
    guard let any = SocketAddress(host: "127.0.0.1", port: 0) else { throw SystemError("127.0.0.1", errno: EINVAL) }
    guard any.withSockaddr({ bind(fd, $0, $1) }) == 0 else { throw SystemError("bind", errno: errno) }
    return try SocketAddress.local(of: fd).port
}

/// Polls `condition` every 50 ms until it holds or `seconds` have passed; whether it held (an end-to-end test's
/// wait for a condition with a deadline, never a fixed sleep).
@discardableResult
package func waitUntil(_ seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while true {
        if try condition() { return true }
        if Date() >= deadline { return false }
        usleep(50_000)
    }
}
