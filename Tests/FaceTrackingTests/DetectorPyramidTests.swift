import Capture
import FaceTracking
import Foundation
import Testing
import WinkCore

/// `FaceDetector.detect(maximumWidth:)` stops dlib's image pyramid early (the tracker's region check uses
/// it, since it rejects boxes 1.6 predicted widths or wider anyway): every box up to the limit is still
/// found as without it, and only the pyramid levels whose nominal boxes are at most the limit are
/// searched (dlib's boxes vary a few percent about a level's nominal width; the first level, 73 px at
/// the detection scale, is always searched).
struct DetectorPyramidTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/fixtures")

    func frame(_ relative: String) throws -> PixelBuffer {
        let buffer = PixelBuffer()
        _ = try openMediaFile(path: Self.fixtures.appendingPathComponent(relative).path).read(into: buffer)
        return buffer
    }

    @Test func boxesUpToTheLimitAreFoundAsWithoutIt() throws {
        let detector = FaceDetector()
        var checked = 0
        for (image, scale) in [
            ("images/expressions/single_face.jpg", Float(0.5)), ("images/expressions/multi_face.jpg", 1),
            ("images/expressions/45-m7-di-ph.jpg", 0.5), ("video/single_face.mp4", 0.7),
            ("video/single_face.mp4", 1.0), ("video/single_face_wink_left.mp4", 0.5),
        ] {
            let buffer = try frame(image)
            let all = try detector.detect(in: buffer, scale: scale)
            #expect(!all.isEmpty, "\(image) at \(scale): no face")
            for box in all {
                let limited = try detector.detect(in: buffer, scale: scale, maximumWidth: box.width * 1.02)
                #expect(limited.contains(box), "\(image) at \(scale): \(box) lost with the limit (found \(limited))")
                let limit = box.width * 0.8
                let smaller = try detector.detect(in: buffer, scale: scale, maximumWidth: limit)
                // A box the unlimited search also returns, or one that a wider box on the same face (now not
                // looked for) had suppressed there.
                func explained(_ b: PixelRect) -> Bool {
                    all.contains(b) || all.contains { $0.width > limit && $0.intersects(b) }
                }
                #expect(
                    smaller.allSatisfy { $0.width <= max(limit, 73 / scale) * 1.1 && explained($0) },
                    "\(image) at \(scale): a box from beyond the limit \(limit): \(smaller), without it \(all)")
                checked += 1
            }
        }
        #expect(checked >= 6)
    }
}

extension PixelRect {
    func intersects(_ other: PixelRect) -> Bool {
        x < other.x + other.width && other.x < x + width && y < other.y + other.height && other.y < y + height
    }
}
