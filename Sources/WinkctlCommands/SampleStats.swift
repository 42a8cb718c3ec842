/// Mean, percentiles and maximum of a series of samples (milliseconds, seconds: any unit), kept in a
/// buffer that is reused across `reset()`s so recording in a frame loop does not allocate once warm.
///
/// Percentiles use the nearest-rank method (the smallest sample such that at least p% of the samples
/// are less than or equal to it; NIST/Hyndman & Fan definition 1), so every reported value was observed.
/// Not thread-safe.
public struct SampleStats: Sendable, Equatable {
    private var samples: [Double] = []
    private var sum = 0.0
    private var sorted = true

    /// Empty statistics, with room for `capacity` samples reserved.
    public init(capacity: Int = 0) {
        samples.reserveCapacity(capacity)
    }

    /// Samples added since the last `reset()`.
    public var count: Int { samples.count }

    /// Adds one sample.
    public mutating func add(_ value: Double) {
        if let last = samples.last, value < last { sorted = false }
        samples.append(value)
        sum += value
    }

    /// Forgets the samples, keeping the buffer's capacity.
    public mutating func reset() {
        samples.removeAll(keepingCapacity: true)
        sum = 0
        sorted = true
    }

    /// The arithmetic mean, 0 without samples.
    public var mean: Double { samples.isEmpty ? 0 : sum / Double(samples.count) }

    /// The sum of the samples.
    public var total: Double { sum }

    /// The largest sample, 0 without samples.
    public var maximum: Double { samples.max() ?? 0 }

    /// The nearest-rank `p`-th percentile (0 < p <= 100), 0 without samples. Sorts the buffer in place
    /// the first time after new samples.
    public mutating func percentile(_ p: Double) -> Double {
        guard !samples.isEmpty else { return 0 }
        if !sorted {
            samples.sort()
            sorted = true
        }
        let rank = Int((p / 100 * Double(samples.count)).rounded(.up))
        return samples[min(samples.count, max(1, rank)) - 1]
    }
}
