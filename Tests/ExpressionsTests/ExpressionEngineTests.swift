import Expressions
import Testing
import WinkCore

struct ExpressionEngineTests {
    static let face: FaceObservation = {
        let points = InlineArray<68, PixelPoint> { i in PixelPoint(Float(i % 17) * 6, Float(i / 17) * 20) }
        let eye = EyeEvidence(closedProbability: 0.01, aspectRatio: 0.3)
        return FaceObservation(
            landmarks: Landmarks(points: points), box: PixelRect(x: 0, y: 0, width: 100, height: 80),
            pose: .frontal, leftEye: eye, rightEye: eye,
            quality: FaceQuality(
                interocularPixels: 100, medianBrightness: 120, visibleFraction: 1, eyesVisibleFraction: 1,
                mouthVisibleFraction: 1))
    }()

    /// Frames `first..<end` at 30 fps, with the face or without it.
    func play(_ engine: ExpressionEngine, _ frames: Range<Int>, face: Bool, start: Double = 0) {
        for i in frames {
            let info = FrameInfo(index: i, time: start + Double(i) / 30, monotonicNanoseconds: UInt64(i) * 33_333_333)
            engine.process(frame: info, face: face ? Self.face : nil)
        }
    }

    @Test func aFaceFoundAfterForgetAfterAbsenceIsLearnedAfresh() {
        let engine = ExpressionEngine(rows: AnalyzerRow.defaultTable)
        play(engine, 0..<60, face: true)  // 2 s at up to 10 samples a second
        let learned = engine.calibration.samples
        #expect(learned >= 10)
        play(engine, 60..<149, face: false)  // 89 frames: 2.97 s away
        play(engine, 149..<150, face: true)
        #expect(engine.calibration.samples == learned + 1, "under 3 s away: the same person, kept")
        play(engine, 150..<240, face: false)  // 90 frames: 3 s away
        play(engine, 240..<241, face: true)
        #expect(engine.calibration.samples == 1, "3 s away: learned afresh from its first frame")
    }

    @Test func timeGoingBackIsANewSourceAndForgets() {
        let engine = ExpressionEngine(rows: AnalyzerRow.defaultTable)
        play(engine, 0..<60, face: true)
        play(engine, 60..<64, face: false)
        // The source starts again from 0 s (a looped file, a camera reopened): the face found is learned anew.
        play(engine, 0..<1, face: true, start: 0)
        #expect(engine.calibration.samples == 1)
    }

    @Test func theSettingIsTheEnginesCalibrations() {
        var settings = Calibration.Settings()
        settings.forgetAfterAbsence = 1
        let engine = ExpressionEngine(rows: AnalyzerRow.defaultTable, calibration: Calibration(settings: settings))
        play(engine, 0..<60, face: true)
        let learned = engine.calibration.samples
        play(engine, 60..<89, face: false)  // 0.97 s away
        play(engine, 89..<90, face: true)
        #expect(learned >= 10 && engine.calibration.samples == learned + 1)
        play(engine, 90..<120, face: false)  // 1 s away
        play(engine, 120..<121, face: true)
        #expect(engine.calibration.samples == 1)
    }
}
