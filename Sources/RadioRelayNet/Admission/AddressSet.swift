import RadioRelaySystem

/// A set of IPv4 and IPv6 networks (`allow`, `deny`), kept as sorted, merged intervals of the 128-bit address space
/// (an IPv4 network as its IPv4-mapped form, as `AddressRange` keeps it): a lookup is a binary search, so a list of
/// a hundred thousand networks costs a listener about seventeen comparisons, whoever opens connections.
package struct AddressSet: Sendable, Equatable, CustomStringConvertible {
    /// An address as one 128-bit number, compared word by word.
    struct Point: Comparable, Sendable {
        var high: UInt64
        var low: UInt64

        static func < (lhs: Self, rhs: Self) -> Bool {
            lhs.high != rhs.high ? lhs.high < rhs.high : lhs.low < rhs.low
        }

        /// The next address; nil after the last.
        var next: Point? {
            if low != .max { return Point(high: high, low: low + 1) }
            return high == .max ? nil : Point(high: high + 1, low: 0)
        }
    }

    /// Disjoint, non-adjacent intervals (first and last address, inclusive), in order.
    private(set) var intervals: [(first: Point, last: Point)] = []
    /// The networks as they were written, for messages.
    package let ranges: [AddressRange]

    /// The most networks one list takes (a country's blocks are some thousands; the whole of one is under this).
    package static let limit = 500_000

    package init(_ ranges: [AddressRange]) {
        self.ranges = ranges
        var spans = ranges.map { range -> (first: Point, last: Point) in
            let (maskHigh, maskLow) = AddressRange.mask(range.bits)
            let first = Point(high: range.high, low: range.low)
            return (first, Point(high: range.high | ~maskHigh, low: range.low | ~maskLow))
        }
        spans.sort { $0.first < $1.first }
        for span in spans {
            if let last = intervals.last, last.last.next.map({ span.first <= $0 }) ?? true {
                if last.last < span.last { intervals[intervals.count - 1].last = span.last }
            } else {
                intervals.append(span)
            }
        }
    }

    package var isEmpty: Bool { intervals.isEmpty }

    /// Whether `address` (of either family) is in one of the networks.
    package func contains(_ address: SocketAddress) -> Bool {
        guard let (high, low) = AddressRange.bits(of: address) else { return false }
        let point = Point(high: high, low: low)
        // The last interval that starts at or before the address.
        var lower = 0
        var upper = intervals.count
        while lower < upper {
            let middle = lower + (upper - lower) / 2
            if point < intervals[middle].first { upper = middle } else { lower = middle + 1 }
        }
        guard lower > 0 else { return false }
        return !(intervals[lower - 1].last < point)
    }

    package var description: String {
        ranges.count <= 4
            ? ranges.map(\.description).joined(separator: ", ") : "\(ranges.count) networks"
    }

    package static func == (lhs: Self, rhs: Self) -> Bool { lhs.ranges == rhs.ranges }
}
