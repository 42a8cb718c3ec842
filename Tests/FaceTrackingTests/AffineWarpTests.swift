import Capture
import Foundation
import TestSupport
import Testing
import WinkCore

@testable import FaceTracking

/// The tracker's upright crop and the eye patches are resampled by winkd's own bilinear warp
/// (`wv_warp_affine`), which must give OpenCV's `warpAffine` result byte for byte: scales from 0.3 to 3,
/// any roll, maps reaching past every edge of the frame (border replicated), tiny images (the scalar
/// path), and widths that are not a multiple of the 8-pixel vector step.
struct AffineWarpTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/fixtures")

    func expectSameAsOpenCV(
        _ source: PixelBuffer, _ m: (Float, Float, Float, Float, Float, Float), width: Int,
        height: Int, _ what: String
    ) {
        let ours = PixelBuffer()
        let opencv = PixelBuffer()
        ours.resize(width: width, height: height)
        opencv.resize(width: width, height: height)
        #expect(AffineWarp.warp(source, matrix: m, into: ours))
        #expect(AffineWarp.warp(source, matrix: m, into: opencv, opencv: true))
        let differing = (0..<width * height).filter { ours.gray[$0] != opencv.gray[$0] }.count
        #expect(differing == 0, "\(what): \(differing) of \(width * height) bytes differ from OpenCV's, matrix \(m)")
    }

    @Test func videoFramesGiveOpenCVsBytes() throws {
        let source = try openMediaFile(path: Self.fixtures.appendingPathComponent("video/single_face.mp4").path)
        let frame = PixelBuffer()
        _ = try source.read(into: frame)
        var random = SplitMix64(seed: 42)
        for trial in 0..<300 {
            let s = 0.3 + 2.7 * random.unitFloat()
            let roll = (random.unitFloat() - 0.5) * 7
            let c = cos(roll) * s
            let n = sin(roll) * s
            let cx = random.unitFloat() * Float(frame.width + 300) - 150
            let cy = random.unitFloat() * Float(frame.height + 300) - 150
            let side = [320, 48, 37, 250][trial % 4]
            let rows = trial % 4 == 1 ? 32 : side
            let h = Float(side) / 2
            let m = trial % 5 == 0 ? (s, 0, cx, 0, s, cy) : (c, -n, cx - (c - n) * h, n, c, cy - (n + c) * h)
            expectSameAsOpenCV(frame, m, width: side, height: rows, "frame, trial \(trial)")
        }
    }

    @Test func tinyAndNoisyImagesGiveOpenCVsBytes() {
        var random = SplitMix64(seed: 7)
        for (w, h) in [(1, 1), (2, 1), (3, 2), (4, 3), (5, 5), (17, 9), (64, 40)] {
            let image = PixelBuffer()
            image.resize(width: w, height: h)
            for i in 0..<w * h { image.gray[i] = UInt8(truncatingIfNeeded: random.next()) }
            for trial in 0..<20 {
                let s = 0.1 + 1.5 * random.unitFloat()
                let roll = (random.unitFloat() - 0.5) * 7
                let c = cos(roll) * s
                let n = sin(roll) * s
                let m = (c, -n, random.unitFloat() * Float(w + 4) - 2, n, c, random.unitFloat() * Float(h + 4) - 2)
                expectSameAsOpenCV(image, m, width: 8 + trial, height: 5 + trial % 3, "\(w)x\(h) image, trial \(trial)")
            }
        }
    }
}
