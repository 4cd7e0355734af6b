/// Where a request head received in pieces stands, so that `HTTPRequestHead.parse` runs only when it can decide:
/// once when the request line ends (a malformed one is refused at once), when a header line ends malformed (the
/// same), once when the head's empty line comes, or at the size limit. Each byte is looked at once here, so the work
/// for a head is linear in its bytes however it is cut into reads — re-parsing from the start on every read would be
/// quadratic in the number of header lines.
package struct HTTPHeadScan: Sendable {
    private var scanned = 0
    private var lineStart = 0
    private var sawRequestLine = false

    package init() {}

    /// Bytes looked at so far: once `shouldParse` said yes at the end of a head, the head's length.
    package var scannedBytes: Int { scanned }

    /// Looks at the bytes of `bytes` after those seen before (up to `limit`); true when a parse can decide now.
    package mutating func shouldParse(_ bytes: [UInt8], limit: Int) -> Bool {
        let end = min(bytes.count, max(0, limit))
        var decide = false
        var index = scanned
        while index < end {
            let byte = bytes[index]
            if !sawRequestLine && index == lineStart && (byte == HTTPRequestHead.cr || byte == HTTPRequestHead.lf) {
                lineStart = index + 1  // empty lines before the request line, skipped as `parse` skips them
            } else if byte == HTTPRequestHead.lf {
                let line = HTTPRequestHead.trimmed(bytes[lineStart..<index])
                if !sawRequestLine {
                    sawRequestLine = true
                    decide = true  // the request line, checked at once
                } else if line.isEmpty || HTTPRequestHead.fieldProblem(line) != nil {
                    // The end of the head, or a malformed header line, refused at once as a whole head would be.
                    scanned = index + 1
                    return true
                }
                lineStart = index + 1
            }
            index += 1
        }
        scanned = end
        return decide || bytes.count >= limit
    }

}
