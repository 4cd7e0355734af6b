extension FixedWidthInteger {
    /// `self + other`, or the bound the sum passed: for counts and sums of values that input chose (an access log's
    /// seconds, a marker's count), where `+` would trap.
    package func saturatingAdding(_ other: Self) -> Self {
        let (sum, overflow) = addingReportingOverflow(other)
        guard overflow else { return sum }
        return other > 0 ? .max : .min
    }

    /// `self * other`, or the bound the product passed.
    package func saturatingMultiplied(by other: Self) -> Self {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        guard overflow else { return product }
        return (self < 0) != (other < 0) ? .min : .max
    }
}
