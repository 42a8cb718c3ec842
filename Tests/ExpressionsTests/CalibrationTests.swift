import Expressions
import Testing
import TestSupport
import WinkCore

struct CalibrationTests {
    @Test func neutralIgnoresBriefExpressionsButFollowsLastingChanges() {
        var neutral = CoefficientModel.populationNeutral
        neutral.mouthWidth = 0.6
        let calibration = Calibration(prior: CoefficientModel.populationNeutral)
        var m = neutral
        var t = 0.0
        // 20 s neutral, with a 1 s smile every 5 s.
        for i in 0..<600 {
            m.mouthWidth = (i % 150) < 30 ? 0.83 : 0.6
            calibration.observe(m, time: t)
            t += 1.0 / 30
        }
        #expect(abs(calibration.neutral.mouthWidth - 0.6) < 0.01)
        // Half-shut eyes for the whole window (glasses, tiredness): the neutral follows within the window.
        m.eyeAspectLeft = 0.2
        for _ in 0..<1800 {
            calibration.observe(m, time: t)
            t += 1.0 / 30
        }
        #expect(abs(calibration.neutral.eyeAspectLeft - 0.2) < 0.02)
    }

    /// Lids lowered while looking down for most of the window (liveportrait_d3: the eye-state model reads
    /// 0.3-1.0 for seconds) are not an open eye: the learned closed-probability stays at most 0.2, so a
    /// half-closed eye still counts as closing against it; a level an open eye reads (glare on glasses) is
    /// learned as it is.
    @Test func loweredLidsAreNotLearnedAsOpenEyes() {
        let model = CoefficientModel()
        let calibration = Calibration(prior: CoefficientModel.populationNeutral)
        var m = CoefficientModel.populationNeutral
        m.eyeClosedLeft = 0.6
        m.eyeClosedRight = 0.9
        var t = 0.0
        for _ in 0..<300 {  // 10 s looking down from the start
            calibration.observe(m, time: t)
            t += 1.0 / 30
        }
        #expect(calibration.neutral.eyeClosedLeft == 0.2 && calibration.neutral.eyeClosedRight == 0.2)
        // The left eye half closed (0.6) reads as closing, not as neutral: 0.85 x (0.6 - 0.2 - 0.1) / 0.8.
        var half = calibration.neutral
        half.eyeClosedLeft = 0.6
        let c = model.coefficients(half, neutral: calibration.neutral)
        #expect(abs(c[.eyeBlinkLeft] - 0.85 * 0.3 / 0.8) < 1e-5, "\(c[.eyeBlinkLeft])")
        // Open eyes reading 0.08 (glare on glasses) are learned as they are.
        m.eyeClosedLeft = 0.08
        m.eyeClosedRight = 0.08
        for _ in 0..<1800 {
            calibration.observe(m, time: t)
            t += 1.0 / 30
        }
        #expect(abs(calibration.neutral.eyeClosedLeft - 0.08) < 1e-3)
        // A stored profile above the bound is bounded too.
        var prior = CoefficientModel.populationNeutral
        prior.eyeClosedRight = 0.7
        #expect(Calibration(prior: prior).neutral.eyeClosedRight == 0.2)
    }

    @Test func coefficientsAreRelativeToNeutralAndScaleFree() {
        let model = CoefficientModel()
        var n = CoefficientModel.populationNeutral
        n.jawDrop = 1.0
        var m = n
        m.jawDrop = 1.0 + model.jawSpan / 2
        // Half the jaw span, lips not parted beyond neutral: 0.85 (the jaw's weight) x 0.5.
        #expect(abs(model.coefficients(m, neutral: n)[.jawOpen] - 0.425) < 1e-5)
        m.lipGap = n.lipGap + 0.3
        #expect(abs(model.coefficients(m, neutral: n)[.jawOpen] - 0.575) < 1e-5)
        m.lipGap = n.lipGap
        m.jawDrop = 0.9
        #expect(model.coefficients(m, neutral: n)[.jawOpen] == 0)
        // Closed eye: a low aspect ratio and a closed probability near 1 give eyeBlink 1; the other eye stays 0.
        m = n
        m.eyeAspectLeft = n.eyeAspectLeft * 0.4
        m.eyeClosedLeft = 0.98
        let c = model.coefficients(m, neutral: n)
        #expect(c[.eyeBlinkLeft] == 1)
        #expect(c[.eyeBlinkRight] == 0)
    }

    /// The incremental percentiles equal the original sort-per-sample algorithm's, bit for bit, on random
    /// sequences with repeated values, signed zeros, skipped samples, time going backwards and a ring that
    /// wraps several times.
    @Test func incrementalPercentilesEqualSortingEverySample() {
        var rng = SplitMix64(seed: 0x5eed)
        for trial in 0..<4 {
            var settings = Calibration.Settings()
            settings.windowSeconds = [1, 3, 6, 60][trial % 4]
            settings.samplesPerSecond = 10
            settings.maximumNeutralEyeClosed = .infinity  // the bound is tested on its own (below)
            let calibration = Calibration(prior: CoefficientModel.populationNeutral, settings: settings)
            var reference = SortingCalibration(prior: CoefficientModel.populationNeutral, settings: settings)
            var t = 0.0
            for step in 0..<1200 {
                var m = FaceMeasures()
                for key in SortingCalibration.keys {
                    // Few distinct values (ties), zeros of both signs, and a wide spread.
                    let r = rng.next() % 10
                    m[keyPath: key] = r == 0 ? -0.0 : r == 1 ? 0.0 : r < 5 ? Float(rng.next() % 4) / 4
                        : Float(Int(rng.next() % 20_001) - 10_000) / 997
                }
                t += step % 97 == 0 ? -2.5 : [0.05, 0.1, 0.1, 0.2][Int(rng.next() % 4)]
                if step == 600 { calibration.reset(); reference.reset() }
                calibration.observe(m, time: t)
                reference.observe(m, time: t)
                #expect(calibration.samples == reference.count)
                let keys = SortingCalibration.keys
                #expect(keys.map { calibration.neutral[keyPath: $0] } == keys.map { reference.neutral[keyPath: $0] },
                        "trial \(trial) step \(step)")
            }
        }
    }
}

/// The calibration's original algorithm (a full sort per measure per sample), as the reference for
/// `incrementalPercentilesEqualSortingEverySample`.
private struct SortingCalibration {
    static let percentiles: [(WritableKeyPath<FaceMeasures, Float>, Float)] = [
        (\.eyeAspectLeft, 0.7), (\.eyeAspectRight, 0.7), (\.eyeClosedLeft, 0.3), (\.eyeClosedRight, 0.3),
        (\.jawDrop, 0.25), (\.lipGap, 0.25), (\.mouthWidth, 0.2), (\.cornerLiftLeft, 0.2),
        (\.cornerLiftRight, 0.2), (\.innerBrowHeight, 0.4), (\.browHeightLeft, 0.5), (\.browHeightRight, 0.5),
    ]
    static var keys: [WritableKeyPath<FaceMeasures, Float>] { percentiles.map(\.0) }
    let settings: Calibration.Settings
    let prior: FaceMeasures
    var neutral: FaceMeasures
    var ring: [FaceMeasures]
    var count = 0
    var next = 0
    var lastSampleTime = -Double.infinity

    init(prior: FaceMeasures, settings: Calibration.Settings) {
        self.settings = settings
        self.prior = prior
        neutral = prior
        ring = Array(repeating: prior, count: max(8, Int(settings.windowSeconds * settings.samplesPerSecond)))
    }

    mutating func reset() {
        count = 0
        next = 0
        lastSampleTime = -.infinity
        neutral = prior
    }

    mutating func observe(_ m: FaceMeasures, time: Double) {
        guard time - lastSampleTime >= 1 / settings.samplesPerSecond || time < lastSampleTime else { return }
        lastSampleTime = time
        ring[next] = m
        next = (next + 1) % ring.count
        count = min(count + 1, ring.count)
        let w = Float(settings.priorWeight)
        let n = Float(count)
        for (key, p) in Self.percentiles {
            var scratch = (0..<count).map { ring[$0][keyPath: key] }
            scratch.sort()
            let position = p * Float(count - 1)
            let lo = Int(position), hi = min(count - 1, lo + 1)
            let frac = position - Float(lo)
            let estimate = scratch[lo] * (1 - frac) + scratch[hi] * frac
            neutral[keyPath: key] = (w * prior[keyPath: key] + n * estimate) / (w + n)
        }
    }
}

