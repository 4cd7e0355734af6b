import CZlib

/// zlib's `inflate` for gzip data, fed in pieces of any size: owns one `z_stream` (`inflateInit2` through
/// `rr_inflate_init_gzip`, freed by `inflateEnd`). Several gzip members one after the other (`cat a.gz b.gz`, which
/// gzip reads as one file) are inflated in turn: at a member's end the stream is reset (`inflateReset`) for the next.
///
/// The output goes out in pieces of at most `chunk` bytes as it is made, never gathered: a small file that
/// inflates to gigabytes (a gzip bomb) costs time, bounded by the caller's limit, not memory.
final class GzipInflater {
    /// zlib keeps a pointer to its stream in its state (`inflateStateCheck` compares them): the stream must never
    /// move, so it is allocated, not a stored property.
    private let stream: UnsafeMutablePointer<z_stream>
    private var output: [UInt8]
    /// Between two members (or before the first): the data so far ends cleanly here.
    private(set) var atMemberEnd = true

    struct Failure: Error, Equatable, CustomStringConvertible {
        let code: Int32
        let message: String
        var description: String { message }
    }

    init(chunk: Int = 64 * 1024) throws(Failure) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        output = [UInt8](repeating: 0, count: max(1024, chunk))
        let code = rr_inflate_init_gzip(stream)
        guard code == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw Failure(code: code, message: "zlib cannot start (inflateInit2: \(code))")
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Inflates all of `input`, handing each piece of output to `emit`, which returns false to stop (a limit was
    /// reached: the rest of the input is left); returns false when it stopped. Throws when the data is not gzip or is
    /// corrupt; what was handed on before stays handed on.
    func inflate(_ input: UnsafeRawBufferPointer, _ emit: (UnsafeRawBufferPointer) -> Bool) throws(Failure) -> Bool {
        guard let base = input.baseAddress, !input.isEmpty else { return true }
        var offset = 0
        while offset < input.count {
            let piece = min(input.count - offset, 1 << 30)
            stream.pointee.next_in = UnsafeMutablePointer(
                mutating: base.advanced(by: offset).assumingMemoryBound(to: Bytef.self))
            stream.pointee.avail_in = uInt(piece)
            guard try pump(emit) else { return false }
            offset += piece
        }
        return true
    }

    /// Runs `inflate` until the input given is used up and nothing is left to write out, resetting at each
    /// member's end; false when `emit` stopped it.
    private func pump(_ emit: (UnsafeRawBufferPointer) -> Bool) throws(Failure) -> Bool {
        while true {
            let before = stream.pointee.avail_in
            let (code, made) = output.withUnsafeMutableBytes { buffer -> (Int32, Int) in
                guard let out = buffer.baseAddress else { return (Z_MEM_ERROR, 0) }
                stream.pointee.next_out = out.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_out = uInt(buffer.count)
                let code = CZlib.inflate(stream, Z_NO_FLUSH)
                return (code, buffer.count - Int(stream.pointee.avail_out))
            }
            if code == Z_STREAM_END {
                atMemberEnd = true
            } else if stream.pointee.avail_in < before || made > 0 {
                atMemberEnd = false
            }
            if made > 0 {
                let keepGoing = output.withUnsafeBytes { emit(UnsafeRawBufferPointer(rebasing: $0[0..<made])) }
                if !keepGoing { return false }
            }
            switch code {
            case Z_STREAM_END:
                inflateReset(stream)
                if stream.pointee.avail_in == 0 { return true }
            case Z_OK:
                // The output filled (more may be waiting), or the input is used up.
                if stream.pointee.avail_in == 0 && made < output.count { return true }
            case Z_BUF_ERROR where stream.pointee.avail_in == 0:
                return true  // no progress possible without more input
            default:
                let reason = stream.pointee.msg.map { String(cString: $0) } ?? "error \(code)"
                throw Failure(code: code, message: "not gzip data or corrupt (zlib: \(reason))")
            }
        }
    }
}
