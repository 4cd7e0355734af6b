import CLinux
import Foundation
import Glibc
import RadioRelay
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// A raw-TCP listener for the tests: connects to 127.0.0.1, reads what the server sends for a while.
///
/// A class whose `close` runs once (and `deinit` closes what is still open): tests run in parallel in one process,
/// and a second close of a number another test's socket has been given since would close that socket.
package final class ListenerClient: @unchecked Sendable {
    package let fd: Int32
    package let connectedAt = Date()
    private let lock = NSLock()
    private var isOpen = true

    /// - Parameter source: the local address to connect from (any of 127/8 reaches 127.0.0.1 on Linux), so that a
    ///   server can tell clients apart by address; nil: the kernel's choice.
    package init(port: UInt16, receiveBuffer: Int32? = nil, source: String? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        if let source {
            guard let local = SocketAddress(host: source, port: 0), local.withSockaddr({ bind(fd, $0, $1) }) == 0 else {
                throw SystemError("bind \(source)")
            }
        }
        let result = SocketAddress(host: "127.0.0.1", port: port)!.withSockaddr { connect(fd, $0, $1) }
        guard result == 0 else {
            throw SystemError("connect")  // deinit closes the socket (the object is whole by now)
        }
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Reads for `seconds` (or until the server closes); returns the bytes and whether the server closed.
    package func read(for seconds: Double, limit: Int = .max) -> (bytes: [UInt8], closed: Bool) {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if bytes.count >= limit {
                usleep(UInt32(max(0, deadline.timeIntervalSinceNow) * 1_000_000))
                break
            }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, min($0.count, limit - bytes.count), 0) }
            if n > 0 {
                bytes += buffer[0..<n]
            } else if n == 0 {
                return (bytes, true)
            } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                return (bytes, true)
            }
        }
        return (bytes, false)
    }

    /// Reads until `count` bytes came, the connection closed, or `seconds` passed, whichever is first.
    package func read(atLeast count: Int, within seconds: Double) -> (bytes: [UInt8], closed: Bool) {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = Date().addingTimeInterval(seconds)
        while bytes.count < count && Date() < deadline {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, min($0.count, count - bytes.count), 0) }
            if n > 0 {
                bytes += buffer[0..<n]
            } else if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                return (bytes, true)
            }
        }
        return (bytes, false)
    }

    /// Reads (and drops) until the connection ends: 0 for an end of file (a graceful close, after everything the
    /// server sent), the error for an abortive one (`ECONNRESET` for a RST); nil when it has not ended within
    /// `seconds`.
    package func ending(within seconds: Double) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return 0 }
            if n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR { return errno }
        }
        return nil
    }

    package func send(_ text: String) {
        send(Array(text.utf8))
    }

    package func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    package func close() {
        lock.lock()
        defer { lock.unlock() }
        guard isOpen else { return }
        isOpen = false
        Glibc.close(fd)
    }

    deinit { close() }
}

/// What a listener received, checked page by page: CRC, one serial, headers first, page sequence contiguous after
/// the one join gap, granules never going back. Audio is decoded with libopus.
package struct LiveCapture {
    package var left: [Float] = []
    package var right: [Float] = []
    package var pages: [OggPageReader.Page] = []
    /// From OpusHead.
    package var preSkip = 0
    package var sequenceGaps = 0
    package var granuleRegressions = 0
    package var firstAudioGranule: Int64?
    package var lastGranule: Int64 = 0
    package var headerOK = false

    package init(_ bytes: [UInt8]) throws {
        var reader = OggPageReader()
        reader.append(bytes)
        let decoder = try OpusDecoderHandle()
        var previousSequence: UInt32?
        var packetIndex = 0
        var serial: UInt32?
        while let page = try reader.next() {
            pages.append(page)
            if serial == nil { serial = page.header.serial }
            precondition(page.header.serial == serial, "two serials in one stream")
            if let previous = previousSequence, page.header.sequence != previous + 1 {
                // The one allowed gap: from OpusTags (sequence 1) to the first audio page of the burst.
                if !(previous == 1 && packetIndex == 2) { sequenceGaps += 1 }
            }
            previousSequence = page.header.sequence
            for packet in page.packets {
                defer { packetIndex += 1 }
                if packetIndex == 0 {
                    headerOK = packet.starts(with: Array("OpusHead".utf8))
                    if packet.count >= 12 { preSkip = Int(packet[10]) | Int(packet[11]) << 8 }
                    continue
                }
                if packetIndex == 1 {
                    headerOK = headerOK && packet.starts(with: Array("OpusTags".utf8))
                    continue
                }
                try decoder.decode(packet, left: &left, right: &right)
            }
            if packetIndex > 2 && page.header.granulePosition >= 0 {
                if firstAudioGranule == nil { firstAudioGranule = page.header.granulePosition }
                if page.header.granulePosition < lastGranule { granuleRegressions += 1 }
                lastGranule = page.header.granulePosition
            }
        }
    }

    package func amplitudes(left isLeft: Bool, frequency: Double) -> [String] {
        let samples = isLeft ? left : right
        return stride(from: 0, to: samples.count - 9_600, by: 9_600).map {
            String(format: "%.2f", toneAmplitude(samples, frequency: frequency, rate: 48_000, range: $0..<$0 + 9_600))
        }
    }

    /// Median tone amplitude over consecutive 0.2 s windows (robust to a phase jump where a looped input restarts).
    package func medianAmplitude(left isLeft: Bool, frequency: Double, skip: Int = 4_800) -> Double {
        let samples = isLeft ? left : right
        var values: [Double] = []
        var start = skip
        while start + 9_600 <= samples.count {
            values.append(toneAmplitude(samples, frequency: frequency, rate: 48_000, range: start..<start + 9_600))
            start += 9_600
        }
        guard !values.isEmpty else { return 0 }
        return values.sorted()[values.count / 2]
    }
}

/// An MP3 body with ICY metadata every `interval` bytes (the title in the first block, empty blocks after).
package func icyStream(_ audio: [UInt8], interval: Int, title: String) -> [UInt8] {
    icyStream(audio, interval: interval) { $0 == 0 ? title : nil }
}

/// An MP3 body with ICY metadata every `interval` bytes: block `n` (from 0) carries `title(n)`, or nothing.
package func icyStream(_ audio: [UInt8], interval: Int, title: (Int) -> String?) -> [UInt8] {
    var out: [UInt8] = []
    var offset = 0
    var block = 0
    while offset + interval <= audio.count {
        out += audio[offset..<offset + interval]
        offset += interval
        if let title = title(block) {
            var text = Array("StreamTitle='\(title)';".utf8)
            let blocks = (text.count + 15) / 16
            text += Array(repeating: 0, count: blocks * 16 - text.count)
            out.append(UInt8(blocks))
            out += text
        } else {
            out.append(0)
        }
        block += 1
    }
    return out + audio[offset...]
}

/// A client connected to a listening socket of the test's own, and the server's side of it, accepted and
/// non-blocking: what a front end hands a service.
package func acceptedConnection(receiveBuffer: Int32? = nil) throws -> (client: ListenerClient, accepted: Int32) {
    guard let any = SocketAddress(host: "127.0.0.1", port: 0) else { throw SystemError("127.0.0.1") }
    let listening = try listeningSocket(on: any, backlog: 4, purpose: "test")
    let client = try ListenerClient(
        port: try SocketAddress.local(of: listening.rawValue).port, receiveBuffer: receiveBuffer)
    let deadline = monotonicNow() + 5
    while monotonicNow() < deadline {
        let accepted = Glibc.accept(listening.rawValue, nil, nil)
        if accepted >= 0 {
            try setNonblocking(accepted)
            return (client, accepted)
        }
        if errno != EINTR && errno != EAGAIN { break }
    }
    throw SystemError("accept")
}

/// How a connection ended, for a test's message: `ListenerClient.ending(within:)`'s value in words.
package func endingName(_ ending: Int32?) -> String {
    switch ending {
    case nil: "no end yet"
    case 0: "EOF"
    case let error?: String(cString: strerror(error))
    }
}
