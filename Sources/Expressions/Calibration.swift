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
    /// How the neutral is learned; times in seconds, rates in samples a second.
    public struct Settings: Sendable, Equatable, Codable {
        /// How many seconds of history the neutral is taken from.
        public var windowSeconds: Double = 60
        /// At most this many samples a second go into the history.
        public var samplesPerSecond: Double = 10
        /// How many samples the prior counts as.
        public var priorWeight: Double = 8
        /// At most this many samples a second go into the history while an expression is under way (an
        /// analyzer row pending or active): a smile held, eyes held shut or a recording that starts with
        /// either then moves the neutral ten times more slowly than a relaxed face does, so it is not learned
        /// as neutral within its first minutes; a face that only looks expressive to the population prior
        /// (a naturally wide mouth) is still learned, in tens of seconds instead of seconds.
        public var expressiveSamplesPerSecond: Double = 1
        /// The highest closed-probability (0...1, the eye-state model's `eyeClosedLeft`/`Right`) the
        /// neutral may take. The model judges each eye against eyes of many people, so an open eye reads
        /// near 0 on everyone (at most 0.02 as learned on each of the 12 people of the fixtures, glasses
        /// included, once a few seconds are in); what lifts the learned level is lids lowered for most of
        /// the window, as while looking down for seconds (0.6 within 5 s on liveportrait_d3). Learned as
        /// neutral, that hides the half-closed other eye from the wink rows' "other eye open" cap, and the
        /// far eye of a downcast face reads as a wink. 0.2 leaves ten times the open-eye level for glare on
        /// glasses or a dark room.
        public var maximumNeutralEyeClosed: Double = 0.2
        /// Seconds without a face after which the next face found is learned afresh from the prior (the
        /// stored profile, or the population average): whoever sits down may be somebody else, and a neutral
        /// learned on another person's mouth reads a wider one as a smile for most of the window (9 false
        /// smiles on the people clips played back to back 4 s apart, against 1 with each person learned afresh;
        /// `Scripts/heldout/make_people_session.py`). Learning the same person again costs what a start does
        /// (a smile held on return is not seen: one of 22 when each clip comes back), so a shorter absence
        /// keeps what was learned: a head turned past the detector, bending down for something, a hand or a
        /// few seconds of a covered lens; a seat changes hands in more than 3 s. Also forgotten when time
        /// went back (a new source, a looped file). 0: after every loss; 86,400 (the configuration's most):
        /// in effect never.
        public var forgetAfterAbsence: Double = 3
        /// The defaults above.
        public init() {}
    }

    /// The settings it was made with.
    public let settings: Settings
    /// The neutral learning starts from (a stored profile's, or the population's).
    public private(set) var prior: FaceMeasures
    /// The current neutral estimate (`FaceMeasures` units).
    public private(set) var neutral: FaceMeasures
    private var ring: [FaceMeasures]
    private var count = 0
    private var next = 0
    private var lastSampleTime = -Double.infinity
    /// For each entry of `percentiles` (row k = elements k * capacity ..< (k + 1) * capacity), that
    /// measure's values in `ring`, ascending in their first `count` places (NaN after every number).
    /// Kept up to date by one binary-search removal and insertion per sample instead of a sort per
    /// measure per sample: the same sorted values, so the same percentiles, in O(capacity) not
    /// O(capacity log capacity).
    private var sorted: [Float]

    /// Percentile (0...1) of each measure's history that is taken as neutral.
    static let percentiles: [(WritableKeyPath<FaceMeasures, Float>, Float)] = [
        (\.eyeAspectLeft, 0.7), (\.eyeAspectRight, 0.7), (\.eyeClosedLeft, 0.3), (\.eyeClosedRight, 0.3),
        (\.jawDrop, 0.25), (\.lipGap, 0.25), (\.mouthWidth, 0.2), (\.cornerLiftLeft, 0.2),
        (\.cornerLiftRight, 0.2), (\.innerBrowHeight, 0.4), (\.browHeightLeft, 0.5), (\.browHeightRight, 0.5),
    ]

    /// A calibration starting from `prior`, its ring of `windowSeconds * samplesPerSecond` (at least 8) allocated.
    public init(prior: FaceMeasures = CoefficientModel.populationNeutral, settings: Settings = Settings()) {
        self.settings = settings
        self.prior = prior
        neutral = Self.bounded(prior, settings)
        let capacity = max(8, Int(settings.windowSeconds * settings.samplesPerSecond))
        ring = Array(repeating: prior, count: capacity)
        sorted = Array(repeating: 0, count: capacity * Self.percentiles.count)
    }

    /// Number of samples learned so far (at most the ring's capacity).
    public var samples: Int { count }

    /// Forgets the learned history (a different person, a new source) but keeps the prior.
    public func reset() {
        count = 0
        next = 0
        lastSampleTime = -.infinity
        neutral = Self.bounded(prior, settings)
    }

    /// Adds `m` measured at `time` seconds (frame timestamp) and updates `neutral`. Samples closer than
    /// 1 / `samplesPerSecond` (1 / `expressiveSamplesPerSecond` when `expressive`: an expression is under
    /// way) to the last one are ignored (unless time went backwards). No allocation.
    public func observe(_ m: FaceMeasures, time: Double, expressive: Bool = false) {
        let rate = expressive ? settings.expressiveSamplesPerSecond : settings.samplesPerSecond
        guard time - lastSampleTime >= 1 / rate || time < lastSampleTime else { return }
        lastSampleTime = time
        let capacity = ring.count
        let evicted: FaceMeasures? = count == capacity ? ring[next] : nil
        ring[next] = m
        next = (next + 1) % capacity
        let kept = evicted == nil ? count : count - 1  // values left in each row once the evicted one is out
        count = min(count + 1, capacity)
        let w = Float(settings.priorWeight)
        let n = Float(count)
        sorted.withUnsafeMutableBufferPointer { all in
            for (k, (key, p)) in Self.percentiles.enumerated() {
                let row = all.baseAddress! + k * capacity
                if let evicted { Self.remove(evicted[keyPath: key], from: row, count: kept + 1) }
                Self.insert(m[keyPath: key], into: row, count: kept)
                let position = p * Float(count - 1)
                let lo = Int(position), hi = min(count - 1, lo + 1)
                let frac = position - Float(lo)
                let estimate = row[lo] * (1 - frac) + row[hi] * frac
                neutral[keyPath: key] = (w * prior[keyPath: key] + n * estimate) / (w + n)
            }
        }
        neutral = Self.bounded(neutral, settings)
    }

    /// `m` with its closed-probabilities at most `settings.maximumNeutralEyeClosed`.
    private static func bounded(_ m: FaceMeasures, _ settings: Settings) -> FaceMeasures {
        var m = m
        let cap = Float(settings.maximumNeutralEyeClosed)
        m.eyeClosedLeft = min(m.eyeClosedLeft, cap)
        m.eyeClosedRight = min(m.eyeClosedRight, cap)
        return m
    }

    /// The order of `sorted`'s rows: ascending, NaN after every number.
    @inline(__always)
    private static func precedes(_ a: Float, _ b: Float) -> Bool { a < b || (b.isNaN && !a.isNaN) }

    /// The first index of `row[0..<count]` whose value does not precede `value`.
    private static func lowerBound(_ value: Float, in row: UnsafeMutablePointer<Float>, count: Int) -> Int {
        var lo = 0, hi = count
        while lo < hi {
            let mid = (lo + hi) / 2
            if precedes(row[mid], value) { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// Removes one occurrence of `value` from the ascending `row[0..<count]` (which holds it).
    private static func remove(_ value: Float, from row: UnsafeMutablePointer<Float>, count: Int) {
        var i = min(lowerBound(value, in: row, count: count), count - 1)
        while i < count - 1 {
            row[i] = row[i + 1]
            i += 1
        }
    }

    /// Inserts `value` into the ascending `row[0..<count]`, which has room for one more.
    private static func insert(_ value: Float, into row: UnsafeMutablePointer<Float>, count: Int) {
        let i = lowerBound(value, in: row, count: count)
        var j = count
        while j > i {
            row[j] = row[j - 1]
            j -= 1
        }
        row[i] = value
    }
}
