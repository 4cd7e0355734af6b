/// ISO BMFF boxes written into one byte array (ISO/IEC 14496-12): big-endian fields, and boxes whose 32-bit size
/// is filled in once their body is written. Only what a CMAF audio track needs; nothing here reads input.
package struct MP4Writer {
    package private(set) var bytes: [UInt8] = []

    package init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    package mutating func u8(_ value: UInt8) { bytes.append(value) }

    package mutating func u16(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    package mutating func u32(_ value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) }
    }

    package mutating func u64(_ value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) }
    }

    package mutating func zeros(_ count: Int) { bytes.append(contentsOf: repeatElement(0, count: count)) }

    /// A four-character code (exactly four ASCII characters, as every box type and brand here is).
    package mutating func fourCC(_ code: StaticString) {
        code.withUTF8Buffer { buffer in
            for index in 0..<4 { bytes.append(index < buffer.count ? buffer[index] : 0x20) }
        }
    }

    package mutating func append(_ other: [UInt8]) { bytes.append(contentsOf: other) }

    /// A box: its size and type, then what `body` writes.
    package mutating func box(_ type: StaticString, _ body: (inout MP4Writer) -> Void) {
        let start = bytes.count
        u32(0)
        fourCC(type)
        body(&self)
        let size = UInt32(clamping: bytes.count - start)
        bytes[start] = UInt8(truncatingIfNeeded: size >> 24)
        bytes[start + 1] = UInt8(truncatingIfNeeded: size >> 16)
        bytes[start + 2] = UInt8(truncatingIfNeeded: size >> 8)
        bytes[start + 3] = UInt8(truncatingIfNeeded: size)
    }

    /// A full box: a box whose body starts with a version byte and 24 bits of flags.
    package mutating func fullBox(
        _ type: StaticString, version: UInt8 = 0, flags: UInt32 = 0, _ body: (inout MP4Writer) -> Void
    ) {
        box(type) { writer in
            writer.u32(UInt32(version) << 24 | (flags & 0x00FF_FFFF))
            body(&writer)
        }
    }

    /// The identity matrix of `mvhd` and `tkhd`.
    package mutating func unityMatrix() {
        for value: UInt32 in [0x0001_0000, 0, 0, 0, 0x0001_0000, 0, 0, 0, 0x4000_0000] { u32(value) }
    }
}
