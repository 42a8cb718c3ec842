import Capture
import CWinkVision
@testable import FaceTracking
import Foundation
import Testing
import WinkCore

/// The eye-state model (`wv_eye_closure`): each eye's closed probability from its own pixels, so that a
/// wink is told from a blink where the 68 landmarks pull both eyes together.
@Suite(.serialized)
struct EyeStateTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/fixtures")
    static let predictor: ShapePredictor = {
        do { return try ShapePredictor(path: ShapePredictor.debianModelPath) } catch { fatalError("\(error)") }
    }()

    /// (left, right) closed probability per frame of a clip, by frame index.
    func probabilities(_ relative: String, mirrored: Bool = false) throws -> [Int: (left: Float, right: Float)] {
        let source = try openMediaFile(path: Self.fixtures.appendingPathComponent(relative).path)
        var settings = TrackerSettings()
        settings.mirrored = mirrored
        let tracker = FaceTracker(predictor: Self.predictor, settings: settings)
        let buffer = PixelBuffer()
        var out: [Int: (Float, Float)] = [:]
        while let info = try source.read(into: buffer) {
            if let face = try tracker.process(buffer) {
                out[info.index] = (face.leftEye.closedProbability, face.rightEye.closedProbability)
            }
        }
        return out
    }

    /// liveportrait_d3 (a woman, not the fixtures' man): the left eye winks at 6-20 and the right at 32-47
    /// (labels); both close at 48-51. The model sees the closed eye closed and the other open.
    @Test func winksAreTheClosedEyeOnly() throws {
        let p = try probabilities("people/video/liveportrait_d3.mp4")
        func share(_ frames: ClosedRange<Int>, _ holds: ((left: Float, right: Float)) -> Bool) -> Double {
            let seen = frames.compactMap { p[$0] }
            return Double(seen.filter(holds).count) / Double(max(1, seen.count))
        }
        #expect(share(8...18) { $0.left > 0.9 && $0.right < 0.3 } >= 0.9, "left wink")
        #expect(share(34...45) { $0.right > 0.9 && $0.left < 0.3 } >= 0.9, "right wink")
        #expect(share(48...51) { $0.left > 0.9 && $0.right > 0.9 } == 1, "both closed")
        #expect(share(0...3) { $0.left < 0.1 && $0.right < 0.1 } == 1, "both open")
    }

    /// A selfie-mirrored source swaps the image's sides: the person's own left eye is still the one that winks.
    @Test func mirroringKeepsThePersonsOwnSide() throws {
        let p = try probabilities("people/video/liveportrait_d3.mp4", mirrored: true)
        let frames = (8...18).compactMap { p[$0] }
        #expect(frames.filter { $0.right > 0.9 && $0.left < 0.3 }.count >= frames.count * 9 / 10,
                "declared mirrored, the image's right eye is the person's right: \(frames)")
    }

    /// The patches are 48x24 and the features have the trained model's length; a degenerate eye is refused.
    @Test func patchesAndFeatures() {
        #expect(EyeStateFeatures.count == 372)
        var xy = [Float](repeating: 10, count: 136)  // every landmark on one point: no eye width
        var gray = [UInt8](repeating: 128, count: 64 * 64)
        var left = [UInt8](repeating: 0, count: 48 * 24), right = left
        #expect(wv_eye_patches(&gray, 64, 64, 64, &xy, &left, &right) == WV_BAD_ARGUMENT)
        var a: Float = 0, b: Float = 0
        #expect(wv_eye_closure(&gray, 64, 64, 64, &xy, &a, &b) == WV_BAD_ARGUMENT)
    }
}
