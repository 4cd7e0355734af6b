// libFuzzer target for the two header parsers (see CONTRIBUTING.md, "Fuzz"): `ResponseHeaders`, the upstream's
// response headers, and `HTTPRequestHead`, the HTTP servers' request heads (RequestHeadChecks.swift).
//
// Built with -DFUZZING (and -sanitize=fuzzer,address) this file only defines `LLVMFuzzerTestOneInput`; built plainly
// it has a `@main` that replays a corpus (default Tests/FuzzCorpus/Header) through the same checks.
//
// An input is what libcurl's header callback would see: the bytes, split after each LF into lines (each keeping its
// terminator), are fed one line per call. Invariants:
//   1. never traps, whatever the bytes;
//   2. the result equals that of an independent reference model of the contract (status lines reset, token names
//      lowercased, values trimmed and decoded, the last of a name wins, malformed and over-bound lines counted);
//   3. names are non-empty tokens without an upper-case letter; values have no leading or trailing space, tab, CR or
//      LF, and no LF inside;
//   4. bounded: at most 100 header lines and 64 KiB of names and values kept per response;
//   5. the same lines give the same result whatever their terminators (CR LF, LF, none);
//   6. only the last response counts: a fresh value fed the lines after the last status line has the same headers
//      and counts;
//   7. `icy-metaint` validation (of the header, and of the whole input as a value) returns a number in 1…65 535 that
//      is the trimmed text's value, or an error naming the value without a control or bidi character, at most 40
//      characters of it.
// The same input as a request head (`HTTPRequestHead.parse`, limit 8 KiB):
//   8. never traps; fed in pieces of 1, 3, 64 and 1 000 bytes through `HTTPHeadScan`, a parse at the first point the
//      scan allows decides the same request as the whole input;
//   9. an accepted request has an absolute path (or `OPTIONS *`), an authority only as a plain host[:port],
//      lowercase field names;
//  10. framing (RFC 9112), against a plain model of the field lines: never two `Host` fields, never `Content-Length`
//      values that differ or are not numbers, never a length beside `Transfer-Encoding`; `hasBody` exactly when a
//      length above 0 or a `Transfer-Encoding` is announced, and then the public router never keeps the connection.

import RadioRelay
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem
import RadioRelayTestSupport

#if !FUZZING
    import Foundation
#endif

@_cdecl("LLVMFuzzerTestOneInput")
public func headerFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: size > 0 ? data : nil, count: size)
    let failures = checkHeaders(Array(input)) + checkRequestHead(Array(input))
    if !failures.isEmpty {
        let shown = failures.prefix(20) + (failures.count > 20 ? ["… \(failures.count - 20) more"] : [])
        fatalError("ResponseHeaders or HTTPRequestHead invariant failed:\n" + shown.joined(separator: "\n"))
    }
    return 0
}

#if !FUZZING
    /// Replays a corpus (default Tests/FuzzCorpus/Header): see `FuzzReplay`.
    @main
    struct HeaderFuzzReplay {
        static func main() {
            FuzzReplay.run(
                target: "HeaderFuzz", arguments: Array(CommandLine.arguments.dropFirst()),
                defaultRoot: "Tests/FuzzCorpus/Header",
                check: { checkHeaders($0) + checkRequestHead($0) })
        }
    }
#endif
