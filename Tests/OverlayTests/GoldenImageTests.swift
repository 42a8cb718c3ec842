import Foundation
import Overlay
import Testing
import WinkCore

/// Compares `frame`, shrunk by `scale` (box filter), with the golden PNG `Golden/<name>.png`, in the manner of
/// swift-argument-parser's `assertSnapshot`: with `WINK_RECORD_GOLDEN=1` in the environment, or when the
/// golden file does not exist yet, the image is (re)recorded and the test fails once, asking for a re-run.
///
/// Tolerance: at most 0.02 % of the pixels (about 10 of a 250x190 image) may differ by more than `tolerance`
/// levels in any channel (room for another libjpeg decoding the photo or another OpenCV's rounding), and the
/// mean difference must stay < 0.5; a layer moved or faded by any visible amount fails.
func assertGolden(
    _ frame: PixelBuffer, named name: String, scale: Int = 2, tolerance: Int = 3,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let small = shrink(frame, by: scale)
    let path = Paths.golden.appendingPathComponent(name + ".png").path
    let record = ProcessInfo.processInfo.environment["WINK_RECORD_GOLDEN"] == "1"
    if record || !FileManager.default.fileExists(atPath: path) {
        try FileManager.default.createDirectory(at: Paths.golden, withIntermediateDirectories: true)
        try writeImage(small, to: path)
        Issue.record(
            Comment(rawValue: "Recorded golden image \(path); re-run without WINK_RECORD_GOLDEN to compare."),
            sourceLocation: sourceLocation)
        return
    }
    let golden = try OverlayImage.decode(path: path)
    guard golden.width == small.width, golden.height == small.height else {
        Issue.record(
            Comment(rawValue: "\(name): size \(small.width)x\(small.height), golden \(golden.width)x\(golden.height)"),
            sourceLocation: sourceLocation)
        return
    }
    var off = 0
    var total = 0
    for y in 0..<small.height {
        for x in 0..<small.width {
            let a = small.pixel(x, y)
            let g = golden[x, y]
            let d = [abs(Int(a.x) - Int(g.z)), abs(Int(a.y) - Int(g.y)), abs(Int(a.z) - Int(g.x))]
            total += d.reduce(0, +)
            if d.max()! > tolerance { off += 1 }
        }
    }
    let pixels = small.width * small.height
    let mean = Double(total) / Double(3 * pixels)
    if Double(off) > 0.0002 * Double(pixels) || mean >= 0.5 {
        let actual = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-actual.png").path
        try? writeImage(small, to: actual)
        let message =
            "\(name): \(off) of \(pixels) pixels differ by more than \(tolerance) (mean \(mean)); "
            + "actual image written to \(actual)"
        Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
    }
}

/// `frame` shrunk by an integer factor with a box filter (rounded means).
func shrink(_ frame: PixelBuffer, by scale: Int) -> PixelBuffer {
    let w = frame.width / scale
    let h = frame.height / scale
    let out = PixelBuffer(wantsColor: true)
    out.resize(width: w, height: h)
    for y in 0..<h {
        for x in 0..<w {
            var sum = SIMD3<Int>(repeating: 0)
            for dy in 0..<scale {
                for dx in 0..<scale {
                    sum &+= SIMD3<Int>(truncatingIfNeeded: frame.pixel(x * scale + dx, y * scale + dy))
                }
            }
            let n = scale * scale
            let mean = (sum &+ n / 2) / n
            let i = 3 * (y * w + x)
            out.bgr[i] = UInt8(mean.x)
            out.bgr[i + 1] = UInt8(mean.y)
            out.bgr[i + 2] = UInt8(mean.z)
        }
    }
    return out
}

/// Layouts from Resources drawn on the dlib photos' ground-truth landmarks (no detector involved), compared
/// with golden images. Re-record with `WINK_RECORD_GOLDEN=1 swift test --filter GoldenImageTests`.
struct GoldenImageTests {
    @Test(arguments: [
        ("glasses_and_moustache", "2008_002506.jpg"),
        ("rolled_discs", "2009_004587.jpg"),
        ("brows_and_jaw", "2008_002079.jpg"),
    ])
    func layoutOnPhoto(layout: String, photo: String) throws {
        let image = try #require(labelledImages.first { $0.file == photo })
        let frame = try loadFrame(Paths.dlibImages.appendingPathComponent(photo).path)
        let original = frame.clone()
        let renderer = try OverlayRenderer(
            layout: try OverlayLayout.load(path: Paths.resources.appendingPathComponent(layout + ".json").path))
        try renderer.render(landmarks: image.faces.map(\.landmarks), on: frame)
        #expect(frame.bgrBytes != original.bgrBytes)
        try assertGolden(frame, named: "\(layout)_\(photo.split(separator: ".")[0])")
    }

    @Test func shrinkAveragesBlocks() {
        let frame = PixelBuffer(wantsColor: true)
        frame.resize(width: 4, height: 2)
        for i in 0..<(4 * 2 * 3) { frame.bgr[i] = UInt8(i * 10) }
        let small = shrink(frame, by: 2)
        #expect(small.width == 2 && small.height == 1)
        // Block (0,0): pixels 0, 1 (row 0) and 4, 5 (row 1): blue channel 0, 30, 120, 150 -> 75.
        #expect(small.pixel(0, 0).x == 75)
    }
}
