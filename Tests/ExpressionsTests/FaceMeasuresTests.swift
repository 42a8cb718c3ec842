import Expressions
import Foundation
import Testing
import WinkCore

/// `FaceMeasures` on a face turned away from the camera: the measures must be the frontal face's, since a
/// turn is not an expression. Before, vertical lengths were divided by the foreshortened eye-corner
/// distance (a 35-degree turn read as a jaw dropped by 22%) and horizontal ones divided by cos(yaw) once
/// more (a wider mouth: a smile on pcavs_vox_Audio_Source_00104's head turns).
struct FaceMeasuresTests {
    /// A frontal face (frame pixels, y down): the iBUG-68 points the measures use placed as on a real
    /// face, the rest on the nose tip. `turn` scales every x about the nose by cos(yaw), as a head turned
    /// by `yaw` degrees looks through a distant camera.
    func face(yaw: Float) -> FaceObservation {
        var xy = [Int: (Float, Float)]()
        xy[36] = (200, 250); xy[39] = (240, 252); xy[42] = (280, 252); xy[45] = (320, 250)  // eye corners
        xy[37] = (213, 244); xy[38] = (227, 244); xy[43] = (293, 244); xy[44] = (307, 244)  // upper lids
        xy[19] = (220, 215); xy[21] = (245, 222); xy[22] = (275, 222); xy[24] = (300, 215)  // brows
        xy[30] = (260, 320); xy[8] = (260, 420)  // nose tip, chin
        xy[48] = (228, 360); xy[54] = (292, 356); xy[51] = (260, 350); xy[57] = (260, 378)  // mouth
        xy[61] = (250, 362); xy[62] = (260, 361); xy[63] = (270, 362)
        xy[65] = (270, 368); xy[66] = (260, 369); xy[67] = (250, 368)
        let c = cos(yaw * .pi / 180)
        let points = InlineArray<68, PixelPoint> { i in
            let (x, y) = xy[i] ?? (260, 320)
            return PixelPoint(260 + (x - 260) * c, y)
        }
        let eye = EyeEvidence(closedProbability: 0.1, aspectRatio: 0.3)
        return FaceObservation(
            landmarks: Landmarks(points: points), box: PixelRect(x: 180, y: 200, width: 160, height: 230),
            pose: HeadPose(yaw: yaw, pitch: 0, roll: 0), leftEye: eye, rightEye: eye,
            quality: FaceQuality(
                interocularPixels: 120 * c, medianBrightness: 120, visibleFraction: 1, eyesVisibleFraction: 1,
                mouthVisibleFraction: 1))
    }

    @Test func aTurnedHeadMeasuresAsTheFrontalOne() {
        let frontal = FaceMeasures(face(yaw: 0))
        #expect(abs(frontal.jawDrop - 100 / 120) < 1e-5 && abs(frontal.mouthWidth - 64 / 120) < 1e-5)
        for yaw: Float in [-40, -25, 15, 35] {
            let turned = FaceMeasures(face(yaw: yaw))
            let pairs: [(String, Float, Float)] = [
                ("jawDrop", turned.jawDrop, frontal.jawDrop), ("lipGap", turned.lipGap, frontal.lipGap),
                ("mouthWidth", turned.mouthWidth, frontal.mouthWidth),
                ("cornerLiftLeft", turned.cornerLiftLeft, frontal.cornerLiftLeft),
                ("cornerLiftRight", turned.cornerLiftRight, frontal.cornerLiftRight),
                ("innerBrowHeight", turned.innerBrowHeight, frontal.innerBrowHeight),
                ("browHeightLeft", turned.browHeightLeft, frontal.browHeightLeft),
                ("browHeightRight", turned.browHeightRight, frontal.browHeightRight),
            ]
            for (name, got, want) in pairs {
                #expect(abs(got - want) < 1e-4, "yaw \(yaw): \(name) \(got), frontal \(want)")
            }
        }
    }
}
