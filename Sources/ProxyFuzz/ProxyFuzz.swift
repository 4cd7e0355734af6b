// libFuzzer target for `ProxyHeader` and `ProxyHeaderReader`, the PROXY protocol header a load balancer sends before
// a relayed connection (see CONTRIBUTING.md, "Fuzz").
//
// Built with -DFUZZING (and -sanitize=fuzzer,address) this file only defines `LLVMFuzzerTestOneInput`; built plainly
// it has a `@main` that replays a corpus (default Tests/FuzzCorpus/Proxy) through the same checks.
//
// An input is a connection's first bytes (its first 600 are looked at). Invariants:
//   1. never traps, whatever the bytes;
//   2. bounded: 107 bytes (a v1 line) or 536 (a v2 header) always decide; a decided header is 15 to 107 (v1) or
//      16 to 536 (v2) bytes and no longer than the input;
//   3. exact: the header's bytes alone give the same result, and one byte less is incomplete (nothing after the
//      header is looked at);
//   4. stable: every prefix of the input is incomplete or decides what the whole input decides;
//   5. read off a socket in chunks of 1, 2, 7, 16, 100 bytes or all at once, `ProxyHeaderReader` decides the same
//      and consumes exactly the header (all of an incomplete one, never all of an invalid one);
//   6. a proxied header names two endpoints of one family (4 or 16 bytes), which the tests' v1 and v2 writers
//      encode into headers that parse back to the same endpoints; the socket address made from the source has its
//      family and port.

import Glibc
import RadioRelay
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem
import RadioRelayTestSupport

#if !FUZZING
    import Foundation
#endif

@_cdecl("LLVMFuzzerTestOneInput")
public func proxyFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: size > 0 ? data : nil, count: size)
    let failures = checkProxy(Array(input))
    if !failures.isEmpty {
        let shown = failures.prefix(20) + (failures.count > 20 ? ["… \(failures.count - 20) more"] : [])
        fatalError("ProxyHeader invariant failed:\n" + shown.joined(separator: "\n"))
    }
    return 0
}

#if !FUZZING
    /// Replays a corpus (default Tests/FuzzCorpus/Proxy): see `FuzzReplay`.
    @main
    struct ProxyFuzzReplay {
        static func main() {
            FuzzReplay.run(
                target: "ProxyFuzz", arguments: Array(CommandLine.arguments.dropFirst()),
                defaultRoot: "Tests/FuzzCorpus/Proxy",
                check: checkProxy)
        }
    }
#endif
