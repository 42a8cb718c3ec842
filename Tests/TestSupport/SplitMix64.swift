/// A small deterministic random generator for tests, so that a failing random case reproduces: SplitMix64
/// (Steele, Lea & Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014; the constants of
/// Vigna's reference implementation). Not thread-safe; not for anything but tests.
public struct SplitMix64: RandomNumberGenerator {
    public var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E4B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1) with 53 random bits.
    public mutating func unitDouble() -> Double { Double(next() >> 11) / Double(UInt64(1) << 53) }

    /// Uniform in [0, 1) with 24 random bits.
    public mutating func unitFloat() -> Float { Float(next() >> 40) / Float(1 << 24) }
}
