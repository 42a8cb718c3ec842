import Expressions
import Testing
import WinkCore

struct QualityGateTests {
    func face(yaw: Float = 0, eyesVisible: Float = 1, mouthVisible: Float = 1) -> FaceObservation {
        let points = InlineArray<68, PixelPoint> { i in PixelPoint(Float(i), Float(i)) }
        let eye = EyeEvidence(closedProbability: 0, aspectRatio: 0.3)
        return FaceObservation(
            landmarks: Landmarks(points: points), box: PixelRect(x: 0, y: 0, width: 68, height: 68),
            pose: HeadPose(yaw: yaw, pitch: 0, roll: 0), leftEye: eye, rightEye: eye,
            quality: FaceQuality(
                interocularPixels: 100, medianBrightness: 120, visibleFraction: min(eyesVisible, mouthVisible),
                eyesVisibleFraction: eyesVisible, mouthVisibleFraction: mouthVisible))
    }

    @Test func eachGateNeedsItsOwnRegionInView() {
        let gate = QualityGate()
        #expect(gate.gates(for: face()) == AnalyzerTable.Gates(eyes: true, mouth: true))
        // The chin cut off by the bottom of the frame: blinks and winks are still seen.
        #expect(gate.gates(for: face(mouthVisible: 0.8)) == AnalyzerTable.Gates(eyes: true, mouth: false))
        // An eye leaving the side of the frame closes the eye gate.
        #expect(gate.gates(for: face(eyesVisible: 0.85)) == AnalyzerTable.Gates(eyes: false, mouth: true))
        // A head turned 35 degrees: the eye-state model still judges each eye, the mouth's widths are foreshortened.
        #expect(gate.gates(for: face(yaw: 35)) == AnalyzerTable.Gates(eyes: true, mouth: false))
    }
}
