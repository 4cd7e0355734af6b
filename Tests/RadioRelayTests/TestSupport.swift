import Foundation
import RadioRelayTestSupport

@testable import RadioRelay

/// Fixtures, reference tools and signal checks shared by the tests.
enum Fixture {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    static let all = [
        "stereo-44k-128k.mp3", "mono-48k.mp3", "stereo-22k.mp3", "id3-xing-vbr.mp3",
        "garbage-spliced.mp3", "rate-switch.mp3",
    ]
}

/// A unique path under the temporary directory.
func temporaryPath(_ suffix: String) -> String {
    NSTemporaryDirectory() + "radio-relay-test-\(UUID().uuidString.prefix(8))-\(suffix)"
}

/// Runs the whole Parser over `bytes` in chunks of `chunk` bytes and collects what it emits.
func parseAll(_ bytes: [UInt8], chunk: Int = 1 << 20, confirmsFrames: Bool = true)
    -> (packets: [AudioPacket], formats: [DataFormat], parser: Parser)
{
    let parser = Parser(confirmsFrames: confirmsFrames)
    var packets: [AudioPacket] = []
    var formats: [DataFormat] = []
    let handle: (Parser.Event) -> Void = { event in
        switch event {
        case .packet(let p): packets.append(p)
        case .format(let f): formats.append(f)
        }
    }
    var i = 0
    while i < bytes.count {
        let end = min(bytes.count, i + chunk)
        bytes[i..<end].withUnsafeBytes { parser.parse($0, handle) }
        i = end
    }
    parser.finish(handle)
    return (packets, formats, parser)
}

/// Decodes a fixture through Parser and Reader into one common-format buffer.
func decodeAll(_ name: String, commonRate: Int = 48_000, gapless: Bool = true) throws -> (PCMBuffer, Reader) {
    let (packets, _, parser) = parseAll(try Fixture.bytes(name))
    let reader = try Reader(commonRate: commonRate, gapless: gapless ? parser.gapless : nil)
    var out = PCMBuffer(sampleRate: commonRate)
    for packet in packets { out.append(try reader.read(packet)) }
    out.append(try reader.finish())
    return (out, reader)
}

/// An Ogg Opus file decoded with libopus (through `LiveCapture`, which checks every page on the way), with the
/// pre-skip removed and the end trimmed to the final granule as RFC 7845 says.
struct DecodedOpus {
    var left: [Float]
    var right: [Float]
    var pages: [OggPageReader.Page]
    var duration: Double { Double(left.count) / 48_000 }
}

func decodeOpus(_ bytes: [UInt8]) throws -> DecodedOpus {
    let capture = try LiveCapture(bytes)
    let end = min(capture.left.count, Int(capture.lastGranule))
    let start = min(capture.preSkip, end)
    return DecodedOpus(
        left: Array(capture.left[start..<end]), right: Array(capture.right[start..<end]),
        pages: capture.pages)
}

/// A tool from the system, when installed (haproxy lives in /usr/sbin).
func tool(_ name: String) -> String? {
    for directory in ["/usr/bin", "/usr/local/bin", "/bin", "/usr/sbin"]
    where FileManager.default.isExecutableFile(atPath: directory + "/" + name) {
        return directory + "/" + name
    }
    return nil
}

/// Runs a program to completion, its standard input read from the file `input` (none when nil); returns its exit
/// status, standard output and standard error.
@discardableResult
func run(_ executable: String, _ arguments: [String], input: String? = nil) throws
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

/// The built radio-relay executable next to the test bundle.
func radioRelayExecutable() -> String? {
    var directory = Bundle.main.bundleURL
    for _ in 0..<3 {
        let candidate = directory.appendingPathComponent("radio-relay").path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        directory = directory.deletingLastPathComponent()
    }
    let build = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent(".build/debug/radio-relay").path
    return FileManager.default.isExecutableFile(atPath: build) ? build : nil
}
