import WinkCore

#if canImport(Glibc)
    import Glibc
#endif

/// A timing of the renderer anyone can run (`OverlayBenchmark.run()`), in the manner of swift-nio's
/// NIOPerformanceTester: warm-up, repeated runs, the median reported, and a loud banner in debug builds.
///
/// The default scene is a 640x480 frame with one face (interocular distance 120 px, rolled 12 degrees) and
/// three layers: sunglasses over the eyes (240x80 image), a moustache above the mouth (160x50) and a hat
/// over the brows (200x120), all with antialiased edges, so no fixture files are needed.
public enum OverlayBenchmark {
    /// Whether this is a debug build, where the numbers mean little.
    public static var isDebugBuild: Bool {
        #if DEBUG
            true
        #else
            false
        #endif
    }

    /// Renders the scene `frames` times (after `warmup` untimed frames), restoring the frame each time
    /// outside the timing.
    /// - Returns: milliseconds per rendered frame (median of 5 runs), layers only (no decoding, no I/O).
    /// - Throws: `OverlayError.internal` if drawing fails.
    public static func run(frames: Int = 200, warmup: Int = 20, width: Int = 640, height: Int = 480) throws -> Double {
        if isDebugBuild {
            print("==== OverlayBenchmark: DEBUG BUILD, timings are not representative (swift build -c release) ====")
        }
        let renderer = try OverlayRenderer(layers: sceneLayers.map(\.layer), images: sceneLayers.map(\.image))
        let face = syntheticLandmarks(
            center: SIMD2(Float(width) / 2, Float(height) / 2), interocular: 120,
            roll: 12 * .pi / 180)
        let buffer = PixelBuffer(wantsColor: true)
        buffer.resize(width: width, height: height)
        for i in 0..<(width * height * 3) { buffer.bgr[i] = UInt8(truncatingIfNeeded: i &* 7) }
        for _ in 0..<warmup { try renderer.render(landmarks: [face], on: buffer) }
        var runs: [Double] = []
        let perRun = max(1, frames / 5)
        for _ in 0..<5 {
            let start = SystemClock().nanoseconds()
            for _ in 0..<perRun { try renderer.render(landmarks: [face], on: buffer) }
            let end = SystemClock().nanoseconds()
            runs.append(Double(end - start) / 1e6 / Double(perRun))
        }
        return runs.sorted()[runs.count / 2]
    }

    /// The three benchmark layers with synthesized images.
    static var sceneLayers: [(layer: OverlayLayer, image: OverlayImage)] {
        [
            (
                OverlayLayer(feature: .eyes, image: "sunglasses", sizeRatio: [1.4, 3.0], offset: [0, 0.1]),
                softEllipse(width: 240, height: 80, colour: [20, 20, 30, 230])
            ),
            (
                OverlayLayer(feature: .mouth, image: "moustache", sizeRatio: [1.2, 0.6], offset: [0, -0.6]),
                softEllipse(width: 160, height: 50, colour: [60, 40, 20, 255])
            ),
            (
                OverlayLayer(feature: .face, image: "hat", sizeRatio: [1.1, 0.5], offset: [0, -0.7], opacity: 0.9),
                softEllipse(width: 200, height: 120, colour: [200, 30, 30, 255])
            ),
        ]
    }

    /// An ellipse filling the image with a 2-pixel antialiased edge on a transparent background.
    static func softEllipse(width: Int, height: Int, colour: SIMD4<UInt8>) -> OverlayImage {
        var bytes = [UInt8](repeating: 0, count: width * height * 4)
        let rx = Float(width) / 2
        let ry = Float(height) / 2
        for y in 0..<height {
            for x in 0..<width {
                let dx = (Float(x) + 0.5 - rx) / rx
                let dy = (Float(y) + 0.5 - ry) / ry
                let edge = (1 - (dx * dx + dy * dy).squareRoot()) * min(rx, ry) / 2
                let a = Float(colour.w) * min(1, max(0, edge))
                let i = 4 * (y * width + x)
                bytes[i] = colour.x
                bytes[i + 1] = colour.y
                bytes[i + 2] = colour.z
                bytes[i + 3] = UInt8(a.rounded())
            }
        }
        return OverlayImage(width: width, height: height, rgba: bytes)
    }

    /// A rough frontal 68-point face (iBUG-68 layout) centred at `center`, scaled so the outer eye corners
    /// (36, 45) are `interocular` pixels apart, turned by `roll` radians. For benchmarks and examples only.
    public static func syntheticLandmarks(center: PixelPoint, interocular: Float, roll: Float) -> Landmarks {
        // Unit face: outer eye corners at (-0.5, 0) and (0.5, 0).
        var p = [SIMD2<Float>](repeating: .zero, count: 68)
        for i in 0...16 {  // jaw, from the right ear down the chin to the left ear
            let t = Float.pi * Float(i) / 16
            p[i] = SIMD2(-0.75 * cos(t), 0.1 + 0.95 * sin(t))
        }
        for i in 0...4 {  // brows
            p[17 + i] = SIMD2(-0.55 + 0.1 * Float(i), -0.2 - 0.04 * sin(Float.pi * Float(i) / 4))
            p[22 + i] = SIMD2(0.15 + 0.1 * Float(i), -0.2 - 0.04 * sin(Float.pi * Float(i) / 4))
        }
        for i in 0...3 { p[27 + i] = SIMD2(0, -0.05 + 0.1 * Float(i)) }  // nose bridge
        for i in 0...4 { p[31 + i] = SIMD2(-0.1 + 0.05 * Float(i), 0.38) }  // nostrils
        func eye(_ first: Int, _ cx: Float) {
            let offsets: [SIMD2<Float>] = [
                [-0.2, 0], [-0.08, -0.06], [0.08, -0.06], [0.2, 0], [0.08, 0.06], [-0.08, 0.06],
            ]
            for (k, o) in offsets.enumerated() { p[first + k] = SIMD2(cx, 0) + o }
        }
        eye(36, -0.3)
        eye(42, 0.3)
        for i in 0..<12 {  // outer lips
            let t = 2 * Float.pi * Float(i) / 12
            p[48 + i] = SIMD2(-0.3 * cos(t), 0.62 - 0.1 * sin(t))
        }
        for i in 0..<8 {  // inner lips
            let t = 2 * Float.pi * Float(i) / 8
            p[60 + i] = SIMD2(-0.2 * cos(t), 0.62 - 0.03 * sin(t))
        }
        let c = cos(roll)
        let s = sin(roll)
        return Landmarks(
            points: InlineArray { i in
                let q = p[i] * interocular
                return center + SIMD2(c * q.x - s * q.y, s * q.x + c * q.y)
            })
    }
}
