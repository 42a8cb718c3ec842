import Capture
import FaceTracking
import Foundation
import Testing
import WinkCore

/// winkd evaluates dlib's 68-point model from flat arrays (ShapeRegression.cpp). These tests hold it to
/// dlib's own `shape_predictor::operator()` on the same model: every landmark equal, for detected boxes,
/// boxes off the face, boxes partly or wholly outside the image, and faces from photos and video.
@Suite(.serialized)
struct ShapeRegressionTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/fixtures")
    static let predictor: ShapePredictor = {
        do { return try ShapePredictor(path: ShapePredictor.debianModelPath) } catch { fatalError("\(error)") }
    }()

    func frames(_ relative: String, every step: Int = 1, limit: Int = 1) throws -> [PixelBuffer] {
        let source = try openMediaFile(path: Self.fixtures.appendingPathComponent(relative).path)
        var out: [PixelBuffer] = []
        var index = 0
        while out.count < limit {
            let buffer = PixelBuffer()
            guard try source.read(into: buffer) != nil else { break }
            if index % step == 0 { out.append(buffer) }
            index += 1
        }
        return out
    }

    /// Boxes around `box` that send the trees down other paths, including off the image's edges.
    func variants(of box: PixelRect, in buffer: PixelBuffer) -> [PixelRect] {
        let w = Float(buffer.width)
        let h = Float(buffer.height)
        return [
            box,
            PixelRect(x: box.x + 7.4, y: box.y - 5.6, width: box.width * 1.1, height: box.height * 1.1),
            PixelRect(x: box.x + box.width * 0.3, y: box.y, width: box.width * 0.5, height: box.height * 0.5),
            PixelRect(
                x: box.x - box.width * 0.5, y: box.y - box.height * 0.5, width: box.width * 2, height: box.height * 2),
            PixelRect(x: -box.width * 0.4, y: h - box.height * 0.6, width: box.width, height: box.height),
            PixelRect(x: w + 10, y: h + 10, width: box.width, height: box.height),  // wholly outside
            PixelRect(x: 3, y: 3, width: 2.5, height: 2.5),
        ]
    }

    func expectSame(_ buffer: PixelBuffer, _ box: PixelRect, _ what: String) throws {
        let ours = try Self.predictor.landmarks(in: buffer, box: box)
        let dlibs = try Self.predictor.dlibLandmarks(in: buffer, box: box)
        let differing = (0..<Landmarks.count).filter { ours[$0] != dlibs[$0] }
        #expect(differing.isEmpty, "\(what) box \(box): landmarks \(differing) differ from dlib's")
    }

    @Test func photosGiveDlibsLandmarksExactly() throws {
        var compared = 0
        for image in [
            "images/expressions/single_face.jpg", "images/expressions/multi_face.jpg",
            "images/expressions/0-f1-su-ph.jpg", "images/expressions/45-m7-di-ph.jpg",
            "images/dlib/2008_002470.jpg", "images/dlib/bald_guys.jpg",
        ] {
            let buffer = try #require(try frames(image).first)
            let boxes = try FaceDetector().detect(in: buffer, scale: 1, upsample: 1)
            #expect(!boxes.isEmpty, "\(image): no face")
            for box in boxes {
                for variant in variants(of: box, in: buffer) {
                    try expectSame(buffer, variant, image)
                    compared += 1
                }
            }
        }
        #expect(compared >= 60)
    }

    @Test func videoFramesGiveDlibsLandmarksExactly() throws {
        for clip in ["video/single_face_wink_left.mp4", "video/single_face_wink_right.mp4"] {
            var compared = 0
            for buffer in try frames(clip, every: 9, limit: 12) {
                for box in try FaceDetector().detect(in: buffer, scale: 1, upsample: 0) {
                    try expectSame(buffer, box, clip)
                    compared += 1
                }
            }
            #expect(compared >= 3, "\(clip)")
        }
    }

    @Test func unusableBoxesAreRefusedNotEvaluated() throws {
        let buffer = try #require(try frames("images/expressions/single_face.jpg").first)
        for box in [
            PixelRect(x: 10, y: 10, width: 1, height: 40), PixelRect(x: .nan, y: 0, width: 50, height: 50),
            PixelRect(x: 0, y: 0, width: .infinity, height: 50), PixelRect(x: 1e9, y: 0, width: 50, height: 50),
        ] {
            #expect(throws: FaceTrackingError.self) { try Self.predictor.landmarks(in: buffer, box: box) }
        }
    }
}
