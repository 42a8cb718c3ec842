import Capture
import Foundation
import Testing
import WinkCore

@testable import FaceTracking

/// winkd solves head pose with its own Levenberg-Marquardt (`wv_head_pose`) instead of OpenCV's
/// `solvePnP`; on every tracked face of the fixture videos and the detected faces of the fixture photos
/// (frontal and turned), yaw, pitch and roll stay within 0.01 degrees of OpenCV's (it replicates its iterations).
@Suite(.serialized)
struct HeadPoseSolverTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/fixtures")
    static let predictor: ShapePredictor = {
        do { return try ShapePredictor(path: ShapePredictor.debianModelPath) } catch { fatalError("\(error)") }
    }()
    static let tolerance: Float = 0.01

    /// The largest yaw/pitch/roll difference (degrees) between the two solvers for `face`.
    func difference(_ face: FaceObservation, width: Int, height: Int) throws -> Float {
        var xy = [Float](repeating: 0, count: 136)
        for i in 0..<Landmarks.count {
            xy[2 * i] = face.landmarks[i].x
            xy[2 * i + 1] = face.landmarks[i].y
        }
        let ours = try #require(FaceMeasure.headPose(xy, width: width, height: height))
        let opencv = try #require(FaceMeasure.headPose(xy, width: width, height: height, opencv: true))
        #expect(ours == face.pose, "the tracker reports the solver's pose")
        return max(abs(ours.yaw - opencv.yaw), abs(ours.pitch - opencv.pitch), abs(ours.roll - opencv.roll))
    }

    @Test func videoFacesMatchSolvePnP() throws {
        var compared = 0
        var worst: Float = 0
        for video in ["single_face.mp4", "single_face_wink_left.mp4", "single_face_wink_right.mp4", "noface_face.mov"] {
            let source = try openMediaFile(path: Self.fixtures.appendingPathComponent("video/" + video).path)
            let tracker = FaceTracker(predictor: Self.predictor)
            let buffer = PixelBuffer()
            while try source.read(into: buffer) != nil {
                guard let face = try tracker.process(buffer) else { continue }
                let d = try difference(face, width: buffer.width, height: buffer.height)
                #expect(d < Self.tolerance, "\(video): pose differs from solvePnP's by \(d) degrees")
                worst = max(worst, d)
                compared += 1
            }
        }
        #expect(compared > 100)
        print("head pose: \(compared) video faces, largest difference from solvePnP \(worst) degrees")
    }

    @Test func photoFacesMatchSolvePnP() throws {
        let tracker = FaceTracker(predictor: Self.predictor)
        var compared = 0
        let directory = Self.fixtures.appendingPathComponent("images/expressions")
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        where name.hasSuffix(".jpg") {
            let buffer = PixelBuffer()
            _ = try openMediaFile(path: directory.appendingPathComponent(name).path).read(into: buffer)
            for face in try tracker.detectAll(buffer) {
                let d = try difference(face, width: buffer.width, height: buffer.height)
                #expect(
                    d < Self.tolerance, "\(name): pose (yaw \(face.pose.yaw)) differs from solvePnP's by \(d) degrees")
                compared += 1
            }
        }
        #expect(compared >= 5)
    }
}
