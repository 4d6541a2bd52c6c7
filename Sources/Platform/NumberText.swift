/// Numbers as the operator's tool prints them, without Foundation's `String(format:)`.
extension Double {
    /// Rounded to `decimals` places, half away from zero: `3.14159.fixed(2)` is "3.14".
    public func fixed(_ decimals: Int) -> String {
        guard isFinite else { return description }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(self) * scale).rounded(.toNearestOrAwayFromZero)
        guard scaled < 9e18 else { return description }
        let units = UInt64(scaled)
        let whole = String(units / UInt64(scale))
        let sign = self < 0 && units > 0 ? "-" : ""
        guard decimals > 0 else { return sign + whole }
        return sign + whole + "." + Int(units % UInt64(scale)).zeroPadded(decimals)
    }
}

extension BinaryInteger {
    /// At least `width` digits, zeros in front: `7.zeroPadded(3)` is "007".
    public func zeroPadded(_ width: Int) -> String {
        let digits = String(self.magnitude)
        let padded = String(repeating: "0", count: max(0, width - digits.count)) + digits
        return self < 0 ? "-" + padded : padded
    }
}

extension String {
    /// Spaces after, to at least `width` characters.
    public func paddedRight(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
