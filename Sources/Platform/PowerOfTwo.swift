extension Int {
    /// The least power of two at least `self` (1 for 0): the size of an open-addressing table.
    public var nextPowerOfTwo: Int { self <= 1 ? 1 : 1 << (Int.bitWidth - (self - 1).leadingZeroBitCount) }
}
