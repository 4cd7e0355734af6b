import Glibc
import RadioRelay
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem
import RadioRelayTestSupport

// The checks behind the PROXY header fuzz target (ProxyFuzz.swift lists the invariants).

/// What a result says, without an invalid result's reason (two inputs may be refused for different reasons).
func shape(_ result: ProxyHeader.Result) -> ProxyHeader.Result {
    result.isInvalid ? .invalid("") : result
}

/// The input through a `ProxyHeaderReader` as a socket would deliver it, `chunk` bytes at a time: each step peeks at
/// what has arrived and not been consumed. Returns the decision and how many bytes were consumed in all.
func readInChunks(_ input: [UInt8], chunk: Int) -> (result: ProxyHeader.Result, consumed: Int) {
    var reader = ProxyHeaderReader()
    var arrived = 0
    var consumed = 0
    while true {
        arrived = min(input.count, arrived + chunk)
        let peeked = input[consumed..<arrived].prefix(reader.room)
        let (consume, result) = reader.take(peeked)
        consumed += consume
        if result != .incomplete || arrived == input.count { return (result, consumed) }
    }
}

func checkProxy(_ whole: [UInt8]) -> [String] {
    var failures: [String] = []
    let input = Array(whole.prefix(ProxyHeader.maxLength + 64))
    let result = ProxyHeader.parse(input)
    let isV1 = input.first == UInt8(ascii: "P")
    let bound = isV1 ? ProxyHeader.maxV1Length : ProxyHeader.maxV2Length
    // Bounded: no header is longer than its version allows, so that many bytes always decide.
    if result == .incomplete && input.count >= bound {
        failures.append("\(input.count) bytes still incomplete (bound \(bound))")
    }
    if let length = result.length {
        let shortest = isV1 ? 15 : 16
        if length > input.count || length > bound || length < shortest {
            failures.append("header length \(length) of \(input.count) bytes, bound \(bound)")
        } else {
            // Exact: the header alone gives the same result, one byte less is incomplete.
            if ProxyHeader.parse(input[..<length]) != result { failures.append("the header alone differs") }
            if ProxyHeader.parse(input[..<(length - 1)]) != .incomplete {
                failures.append("the header without its last byte is decided")
            }
        }
    }
    // Stable: a prefix is undecided or already says what the whole says.
    for count in 0..<input.count {
        let partial = ProxyHeader.parse(input[..<count])
        if partial != .incomplete && shape(partial) != shape(result) {
            failures.append("\(count) bytes gave \(partial), \(input.count) gave \(result)")
            break
        }
    }
    // Read off a socket in any chunking: the same decision, and exactly the header consumed (all that arrived while
    // incomplete, nothing when invalid).
    for chunk in [1, 2, 7, 16, 100, input.count + 1] where chunk > 0 {
        let (read, consumed) = readInChunks(input, chunk: chunk)
        if shape(read) != shape(result) { failures.append("chunks of \(chunk): \(read), whole: \(result)") }
        let expected: Int? =
            switch result {
            case .incomplete: input.count
            case .invalid: nil
            default: result.length
            }
        if let expected, consumed != expected {
            failures.append("chunks of \(chunk): consumed \(consumed), expected \(expected)")
        }
        if expected == nil && consumed >= input.count && !input.isEmpty {
            failures.append("chunks of \(chunk): an invalid input was consumed whole (\(consumed) bytes)")
        }
    }
    // A proxied result names two endpoints of one family, which both writers encode back to the same.
    if case .proxied(let source, let destination, _) = result {
        if ![4, 16].contains(source.ip.count) || source.ip.count != destination.ip.count {
            failures.append("endpoints of \(source.ip.count) and \(destination.ip.count) bytes")
        } else {
            for (label, bytes) in [
                ("v2", ProxyHeaderBytes.v2(source: source, destination: destination)),
                ("v1", ProxyHeaderBytes.v1(source: source, destination: destination)),
            ] {
                let again = ProxyHeader.parse(bytes)
                if again != .proxied(source: source, destination: destination, length: bytes.count) {
                    failures.append("\(label) round trip of \(source) → \(destination) gave \(again)")
                }
            }
            let address = source.socketAddress
            if address.port != source.port || (address.family == AF_INET) != (source.ip.count == 4) {
                failures.append("socket address \(address) for \(source)")
            }
        }
    }
    return failures
}
