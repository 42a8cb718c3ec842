import Expressions
import Testing
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
        // Closed eye: low aspect ratio and low iris contrast give eyeBlink 1; the other eye stays 0.
        m = n
        m.eyeAspectLeft = n.eyeAspectLeft * 0.4
        m.irisLeft = n.irisLeft - 0.3
        let c = model.coefficients(m, neutral: n)
        #expect(c[.eyeBlinkLeft] == 1)
        #expect(c[.eyeBlinkRight] == 0)
    }
}
