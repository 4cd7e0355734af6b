/// Percent-decoding (RFC 3986 §2.1) of untrusted bytes: a URL's userinfo (strict: a broken escape refuses the whole
/// text) and a query's values (lenient, `+` a space, as forms and Icecast's clients send them: a broken escape is
/// kept as it is).
package enum PercentEncoding {
    /// The decoded bytes; nil when `strict` and an escape is not two hex digits.
    package static func decode(_ bytes: some Collection<UInt8>, strict: Bool, plusIsSpace: Bool = false) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var iterator = bytes.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "+") && plusIsSpace {
                output.append(0x20)
                continue
            }
            guard byte == UInt8(ascii: "%") else {
                output.append(byte)
                continue
            }
            let high = iterator.next()
            let low = high == nil ? nil : iterator.next()
            if let high, let low, let h = hexValue(high), let l = hexValue(low) {
                output.append(h << 4 | l)
            } else if strict {
                return nil
            } else {
                output += [byte] + [high, low].compactMap { $0 }
            }
        }
        return output
    }

    package static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
