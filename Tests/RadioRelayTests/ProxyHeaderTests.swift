import RadioRelayTestSupport
import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// `ProxyHeader.parse`, `ProxyHeaderReader` and `ProxyHeaderWait` as pure values: every byte split of every kind of
/// header, the refusals, consuming exactly the header, and the wait's bound and deadline on virtual time.
@Suite struct ProxyHeaderTests {
    static let client = ProxyHeaderBytes.endpoint("203.0.113.7", 51234)
    static let balancer = ProxyHeaderBytes.endpoint("10.0.0.2", 8000)
    static let client6 = ProxyHeaderBytes.endpoint("2001:db8::7", 443)
    static let balancer6 = ProxyHeaderBytes.endpoint("2001:db8::1", 8000)
    static let request = Array("GET /main.opus HTTP/1.1\r\nHost: radio\r\n\r\n".utf8)

    /// `header` decides nothing until its last byte, then `expected`, whatever follows it.
    static func expectEverySplit(_ header: [UInt8], _ expected: ProxyHeader.Result) {
        for count in 0..<header.count {
            #expect(ProxyHeader.parse(header[..<count]) == .incomplete, "\(count) of \(header.count) bytes")
        }
        #expect(ProxyHeader.parse(header) == expected)
        #expect(ProxyHeader.parse(header + request) == expected)
        #expect(ProxyHeader.parse(header + [UInt8](repeating: 0xFF, count: 600)) == expected)
        #expect(expected.length == header.count)
    }

    /// `bytes` is refused as soon as its `decidedAt`-th byte is in (undecided before, when `decidedAt` > 1).
    static func expectRefused(_ bytes: [UInt8], decidedAt: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        for count in 0..<decidedAt {
            #expect(ProxyHeader.parse(bytes[..<count]) == .incomplete, "\(count) bytes", sourceLocation: sourceLocation)
        }
        for count in decidedAt...bytes.count {
            #expect(ProxyHeader.parse(bytes[..<count]).isInvalid, "\(count) bytes", sourceLocation: sourceLocation)
        }
    }

    // MARK: Version 2

    @Test func v2OverIPv4AndIPv6InEverySplit() {
        let v4 = ProxyHeaderBytes.v2(source: Self.client, destination: Self.balancer)
        #expect(v4.count == 28)
        Self.expectEverySplit(v4, .proxied(source: Self.client, destination: Self.balancer, length: 28))
        let v6 = ProxyHeaderBytes.v2(source: Self.client6, destination: Self.balancer6)
        #expect(v6.count == 52)
        Self.expectEverySplit(v6, .proxied(source: Self.client6, destination: Self.balancer6, length: 52))
        #expect(Self.client.socketAddress.description == "203.0.113.7:51234")
        #expect(Self.client6.socketAddress.description == "[2001:db8::7]:443")
    }

    @Test func v2LocalIsTheBalancersOwnConnectionWhateverItCarries() {
        // HAProxy's health check: LOCAL, UNSPEC, no address.
        Self.expectEverySplit(ProxyHeaderBytes.v2Local, .local(length: 16))
        let withAddresses = ProxyHeaderBytes.v2(source: Self.client, destination: Self.balancer, local: true)
        Self.expectEverySplit(withAddresses, .local(length: 28))
        // Its length is honoured even when it makes no sense for the family.
        Self.expectEverySplit(
            ProxyHeaderBytes.v2(command: 0, family: 0x21, addressBlock: [1, 2, 3]), .local(length: 19))
    }

    @Test func v2WithoutAnIPSourceUsesTheConnectionsOwn() {
        Self.expectEverySplit(ProxyHeaderBytes.v2(command: 1, family: 0x00, addressBlock: []), .unknown(length: 16))
        let unix = [UInt8](repeating: 0x2F, count: 216)
        Self.expectEverySplit(ProxyHeaderBytes.v2(command: 1, family: 0x31, addressBlock: unix), .unknown(length: 232))
        Self.expectEverySplit(ProxyHeaderBytes.v2(command: 1, family: 0x32, addressBlock: unix), .unknown(length: 232))
        // INET with an unspecified transport: the addresses are to be ignored.
        let block = Array(ProxyHeaderBytes.v2(source: Self.client, destination: Self.balancer)[16...])
        Self.expectEverySplit(ProxyHeaderBytes.v2(command: 1, family: 0x10, addressBlock: block), .unknown(length: 28))
        // UDP names its endpoints like TCP.
        Self.expectEverySplit(
            ProxyHeaderBytes.v2(command: 1, family: 0x12, addressBlock: block),
            .proxied(source: Self.client, destination: Self.balancer, length: 28))
    }

    @Test func v2TLVsAreSkippedUpToTheLargestHeader() {
        let tlvs: [UInt8] = [0x01, 0x00, 0x02] + Array("h2".utf8) + [0x04, 0x00, 0x00]
        let header = ProxyHeaderBytes.v2(source: Self.client, destination: Self.balancer, tlvs: tlvs)
        Self.expectEverySplit(header, .proxied(source: Self.client, destination: Self.balancer, length: 36))
        // 536 bytes in all is the most (the spec's smallest TCP segment), 537 is refused at the length field.
        let largest = ProxyHeaderBytes.v2(
            source: Self.client6, destination: Self.balancer6, tlvs: [UInt8](repeating: 0, count: 536 - 52))
        Self.expectEverySplit(largest, .proxied(source: Self.client6, destination: Self.balancer6, length: 536))
        let oversize = ProxyHeaderBytes.v2(
            source: Self.client6, destination: Self.balancer6, tlvs: [UInt8](repeating: 0, count: 537 - 52))
        Self.expectRefused(oversize, decidedAt: 16)
        Self.expectRefused(ProxyHeader.v2Signature + [0x21, 0x11, 0xFF, 0xFF], decidedAt: 16)
    }

    @Test func v2RefusalsComeWithTheByteThatDecides() {
        let good = ProxyHeaderBytes.v2(source: Self.client, destination: Self.balancer)
        // Any signature byte changed: refused on that byte.
        for index in 0..<12 {
            var bad = good
            bad[index] ^= 0x40
            if index == 0 { continue }  // no longer the first byte of either version: covered below
            Self.expectRefused(bad, decidedAt: index + 1)
        }
        func changed(_ index: Int, to value: UInt8) -> [UInt8] {
            var bad = good
            bad[index] = value
            return bad
        }
        Self.expectRefused(changed(12, to: 0x11), decidedAt: 13)  // version 1 in the binary format
        Self.expectRefused(changed(12, to: 0x22), decidedAt: 13)  // command 2
        Self.expectRefused(changed(13, to: 0x41), decidedAt: 14)  // family 4
        Self.expectRefused(changed(13, to: 0x13), decidedAt: 14)  // transport 3
        // Shorter than the family's addresses: refused once the length is known.
        Self.expectRefused(ProxyHeaderBytes.v2(command: 1, family: 0x11, addressBlock: [1, 2, 3, 4]), decidedAt: 16)
        Self.expectRefused(
            ProxyHeaderBytes.v2(command: 1, family: 0x21, addressBlock: Array(good[16...])), decidedAt: 16)
        Self.expectRefused(
            ProxyHeaderBytes.v2(command: 1, family: 0x31, addressBlock: [UInt8](repeating: 0, count: 215)),
            decidedAt: 16)
    }

    // MARK: Version 1

    @Test func v1TextInEverySplit() {
        let v4 = ProxyHeaderBytes.v1(source: Self.client, destination: Self.balancer)
        #expect(v4 == Array("PROXY TCP4 203.0.113.7 10.0.0.2 51234 8000\r\n".utf8))
        Self.expectEverySplit(v4, .proxied(source: Self.client, destination: Self.balancer, length: v4.count))
        let v6 = ProxyHeaderBytes.v1(source: Self.client6, destination: Self.balancer6)
        Self.expectEverySplit(v6, .proxied(source: Self.client6, destination: Self.balancer6, length: v6.count))
        let longest = Array(
            "PROXY TCP6 ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 65535\r\n"
                .utf8)
        let all = ProxyHeader.Endpoint(ip: [UInt8](repeating: 0xFF, count: 16), port: 65535)
        Self.expectEverySplit(longest, .proxied(source: all, destination: all, length: 104))
        let zero = Array("PROXY TCP4 0.0.0.0 255.255.255.255 0 65535\r\n".utf8)
        Self.expectEverySplit(
            zero,
            .proxied(
                source: ProxyHeader.Endpoint(ip: [0, 0, 0, 0], port: 0),
                destination: ProxyHeader.Endpoint(ip: [255, 255, 255, 255], port: 65535), length: zero.count))
    }

    @Test func v1UnknownIgnoresTheRestOfItsLineUpTo107Bytes() {
        Self.expectEverySplit(Array("PROXY UNKNOWN\r\n".utf8), .unknown(length: 15))
        let worst = Array(("PROXY UNKNOWN " + String(repeating: "f", count: 91) + "\r\n").utf8)
        #expect(worst.count == 107)
        Self.expectEverySplit(worst, .unknown(length: 107))
        // One byte more and the CRLF cannot end within 107 bytes.
        Self.expectRefused(Array(("PROXY UNKNOWN " + String(repeating: "f", count: 92) + "\r\n").utf8), decidedAt: 106)
    }

    @Test(arguments: [
        ("PROXY TCP4 203.0.113.07 10.0.0.2 1 2\r\n", 38),  // a leading zero in an address
        ("PROXY TCP4 203.0.113.7 10.0.0.2 01 2\r\n", 38),  // in a port
        ("PROXY TCP4 203.0.113.7 10.0.0.2 65536 2\r\n", 41),  // a port out of range
        ("PROXY TCP4 203.0.113.256 10.0.0.2 1 2\r\n", 39),  // an address byte out of range
        ("PROXY TCP4 203.0.113 10.0.0.2 1 2\r\n", 35),  // three numbers
        ("PROXY TCP4  203.0.113.7 10.0.0.2 1 2\r\n", 38),  // two spaces
        ("PROXY TCP4 203.0.113.7 10.0.0.2 1 2 \r\n", 38),  // a trailing space
        ("PROXY TCP4 203.0.113.7 10.0.0.2 1\r\n", 35),  // a field short
        ("PROXY TCP4 2001:db8::7 10.0.0.2 1 2\r\n", 37),  // an IPv6 address as TCP4
        ("PROXY TCP6 203.0.113.7 2001:db8::1 1 2\r\n", 40),  // an IPv4 address as TCP6
        ("PROXY TCP6 2001:db8:::7 ::1 1 2\r\n", 33),  // not an IPv6 address
        ("PROXY TCP5 203.0.113.7 10.0.0.2 1 2\r\n", 10),  // another protocol, refused at its first wrong byte
        ("PROXY TCP4\r\n", 11),
        ("PROXY UNKNOWX\r\n", 13),
        ("PROXY TCP4 203.0.113.7 10.0.0.2 1 2\n", 36),  // a bare LF
        ("PROXY TCP4 203.0.113.7 10.0.0.2 1 2\rX", 37),  // a bare CR
        ("PROXY\r\n", 6),  // no space after PROXY
        ("proxy TCP4 203.0.113.7 10.0.0.2 1 2\r\n", 1),  // lower case
        ("PRoXY TCP4 203.0.113.7 10.0.0.2 1 2\r\n", 3),
    ])
    func v1Refusals(line: String, decidedAt: Int) {
        Self.expectRefused(Array(line.utf8), decidedAt: decidedAt)
    }

    @Test func whatIsNoPROXYHeaderIsRefusedAtItsFirstByte() {
        Self.expectRefused(Self.request, decidedAt: 1)
        Self.expectRefused([0x16, 0x03, 0x01, 0x00, 0xA5, 0x01], decidedAt: 1)  // a TLS ClientHello
        Self.expectRefused([0x00], decidedAt: 1)
        // A v1 line that runs on without a CR.
        Self.expectRefused(Array(("PROXY TCP4 " + String(repeating: "1", count: 120)).utf8), decidedAt: 106)
        #expect(ProxyHeader.parse([UInt8]()) == .incomplete)
    }

    // MARK: Reading off a socket

    /// The header and a request, delivered in two parts split at every byte: the reader decides like the parser and
    /// consumes exactly the header, leaving the request.
    @Test func theReaderConsumesExactlyTheHeaderInEverySplit() {
        let headers = [
            ProxyHeaderBytes.v2(source: Self.client, destination: Self.balancer, tlvs: [0x04, 0x00, 0x01, 0x00]),
            ProxyHeaderBytes.v1(source: Self.client6, destination: Self.balancer6),
            ProxyHeaderBytes.v2Local,
        ]
        for header in headers {
            let input = header + Self.request
            let expected = ProxyHeader.parse(input)
            for split in 0...input.count {
                var reader = ProxyHeaderReader()
                var socket = Array(input[..<split])  // what has arrived and is not consumed
                var first = reader.take(socket.prefix(reader.room))
                socket.removeFirst(first.consume)
                if first.result == .incomplete {
                    #expect(socket.isEmpty, "split \(split): an incomplete step consumes all it saw")
                }
                socket += input[split...]  // the rest arrives
                if first.result == .incomplete {
                    first = reader.take(socket.prefix(reader.room))
                    socket.removeFirst(first.consume)
                }
                #expect(first.result == expected, "split \(split)")
                #expect(socket == Self.request, "split \(split): the request is left whole")
                #expect(reader.received == header)
            }
        }
        // Refused: nothing consumed by the refusing step.
        var reader = ProxyHeaderReader()
        let started = reader.take(Array("PROXY ".utf8))
        #expect(started == (6, .incomplete))
        let refused = reader.take(Array("GET ".utf8))
        #expect(refused.consume == 0 && refused.result.isInvalid)
    }

    // MARK: The wait

    @Test func theWaitIsBoundedAndEachConnectionHasItsDeadline() {
        var wait = ProxyHeaderWait<Int32, String>(capacity: 2, timeout: 3)
        #expect(wait.isEmpty && wait.nextDeadline == nil)
        let entered = [wait.enter(7, "a", now: 10), wait.enter(8, "b", now: 11), wait.enter(9, "c", now: 11)]
        #expect(entered == [true, true, false], "the third finds it full")
        #expect(wait.count == 2 && wait[9] == nil && wait[8] == "b")
        #expect(wait.nextDeadline == 13)
        let expired = [wait.expire(now: 12.99), wait.expire(now: 13)]
        #expect(expired == [[], ["a"]])
        #expect(wait.nextDeadline == 14)
        let again = wait.enter(9, "c", now: 13.5)
        #expect(again, "room again")
        let left = [wait.leave(8), wait.leave(8)]
        #expect(left == ["b", nil])
        #expect(wait.nextDeadline == 16.5)
        let rest = wait.expire(now: 100)
        #expect(rest == ["c"])
        #expect(wait.isEmpty && wait.nextDeadline == nil)
        let defaults = ProxyHeaderWait<Int32, String>()
        #expect(defaults.capacity == 1024 && defaults.timeout == 3)
    }
}
