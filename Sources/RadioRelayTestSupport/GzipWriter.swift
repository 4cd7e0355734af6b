import CZlib

/// gzip data made with zlib's `deflate` (`rr_deflate_init_gzip`), for the tests of the access log reader: rotated
/// logs, several members, and data that inflates to far more than it is (a gzip bomb) without writing that much.
package enum GzipWriter {
    /// One gzip member holding `bytes`.
    package static func compress(_ bytes: [UInt8], level: Int32 = 6) -> [UInt8] {
        compress(level: level) { feed in feed(bytes) }
    }

    /// One gzip member holding what `produce` feeds it, piece by piece (a piece is not kept once compressed).
    package static func compress(level: Int32 = 6, _ produce: ((([UInt8]) -> Void)) -> Void) -> [UInt8] {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer {
            deflateEnd(stream)
            stream.deinitialize(count: 1)
            stream.deallocate()
        }
        precondition(rr_deflate_init_gzip(stream, level) == Z_OK, "deflateInit2 failed")
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        func run(_ input: [UInt8], flush: Int32) {
            var input = input
            input.withUnsafeMutableBufferPointer { source in
                stream.pointee.next_in = source.baseAddress
                stream.pointee.avail_in = uInt(source.count)
                repeat {
                    let made = chunk.withUnsafeMutableBufferPointer { buffer -> Int in
                        stream.pointee.next_out = buffer.baseAddress
                        stream.pointee.avail_out = uInt(buffer.count)
                        let code = deflate(stream, flush)
                        precondition(code == Z_OK || code == Z_STREAM_END || code == Z_BUF_ERROR, "deflate \(code)")
                        return buffer.count - Int(stream.pointee.avail_out)
                    }
                    out += chunk[0..<made]
                } while stream.pointee.avail_out == 0 || (flush == Z_FINISH && stream.pointee.avail_in > 0)
            }
        }
        produce { run($0, flush: Z_NO_FLUSH) }
        run([], flush: Z_FINISH)
        return out
    }
}
