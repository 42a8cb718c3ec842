import WinkCore

/// A person's neutral face, learned as they use winkd.
///
/// Every frame with a usable face adds its `FaceMeasures` to a ring of the last `windowSeconds` (sampled
/// at most `samplesPerSecond` times a second). The neutral of each measure is a percentile of that
/// history chosen for how the expression moves it: the eyes are open most of the time (an upper
/// percentile of openness), the mouth is closed and unsmiling most of the time (a lower percentile of its
/// width, lift and drop). So a blink, a smile or a held expression shorter than most of the window does
/// not move the neutral, while glasses, lighting or a half-shut eye move it within the window.
/// Until `priorWeight` samples are in, the estimate is blended with the prior (a stored profile, or the
/// population average).
///
/// Not thread-safe. Allocates its ring once.
public final class Calibration {
    public struct Settings: Sendable, Equatable, Codable {
        /// How many seconds of history the neutral is taken from.
        public var windowSeconds: Double = 60
        /// At most this many samples a second go into the history.
        public var samplesPerSecond: Double = 10
        /// How many samples the prior counts as.
        public var priorWeight: Double = 8
        public init() {}
    }

    public let settings: Settings
    public private(set) var prior: FaceMeasures
    public private(set) var neutral: FaceMeasures
    private var ring: [FaceMeasures]
    private var count = 0
    private var next = 0
    private var lastSampleTime = -Double.infinity
    private var scratch: [Float]

    /// Percentile (0...1) of each measure's history that is taken as neutral.
    static let percentiles: [(WritableKeyPath<FaceMeasures, Float>, Float)] = [
        (\.eyeAspectLeft, 0.7), (\.eyeAspectRight, 0.7), (\.irisLeft, 0.7), (\.irisRight, 0.7),
        (\.jawDrop, 0.25), (\.lipGap, 0.25), (\.mouthWidth, 0.2), (\.cornerLiftLeft, 0.2),
        (\.cornerLiftRight, 0.2), (\.innerBrowHeight, 0.4), (\.browHeightLeft, 0.5), (\.browHeightRight, 0.5),
    ]

    public init(prior: FaceMeasures = CoefficientModel.populationNeutral, settings: Settings = Settings()) {
        self.settings = settings
        self.prior = prior
        neutral = prior
        let capacity = max(8, Int(settings.windowSeconds * settings.samplesPerSecond))
        ring = Array(repeating: prior, count: capacity)
        scratch = Array(repeating: 0, count: capacity)
    }

    /// Number of samples learned so far (at most the ring's capacity).
    public var samples: Int { count }

    /// Forgets the learned history (a different person, a new source) but keeps the prior.
    public func reset() {
        count = 0
        next = 0
        lastSampleTime = -.infinity
        neutral = prior
    }

    /// Adds `m` measured at `time` seconds (frame timestamp) and updates `neutral`.
    public func observe(_ m: FaceMeasures, time: Double) {
        guard time - lastSampleTime >= 1 / settings.samplesPerSecond || time < lastSampleTime else { return }
        lastSampleTime = time
        ring[next] = m
        next = (next + 1) % ring.count
        count = min(count + 1, ring.count)
        let w = Float(settings.priorWeight)
        let n = Float(count)
        for (key, p) in Self.percentiles {
            for i in 0..<count { scratch[i] = ring[i][keyPath: key] }
            scratch[0..<count].sort()
            let position = p * Float(count - 1)
            let lo = Int(position), hi = min(count - 1, lo + 1)
            let frac = position - Float(lo)
            let estimate = scratch[lo] * (1 - frac) + scratch[hi] * frac
            neutral[keyPath: key] = (w * prior[keyPath: key] + n * estimate) / (w + n)
        }
    }
}
