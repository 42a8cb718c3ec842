import Foundation
import Overlay
import Testing
import WinkCore

/// `"fit"`: a layer that keeps its image's aspect ratio instead of stretching over the feature box.
struct LayerFitTests {
    static let faces: [Landmarks] = labelledImages.flatMap { $0.faces.map(\.landmarks) }

    func close(_ a: Float, _ b: Float, _ tolerance: Float = 1e-3) -> Bool { abs(a - b) <= tolerance * max(1, abs(b)) }

    @Test func fittedSizesFollowTheImageAspect() {
        let box = SIMD2<Float>(90, 20)
        let glasses = SIMD2<Float>(240, 80)  // 3:1
        #expect(LayerPlacement.fitted(box, imageSize: glasses, fit: .stretch) == box)
        #expect(LayerPlacement.fitted(box, imageSize: glasses, fit: .width) == [90, 30])
        #expect(LayerPlacement.fitted(box, imageSize: glasses, fit: .height) == [60, 20])
        // 90x30 does not fit a 20 px high box; 60x20 does.
        #expect(LayerPlacement.fitted(box, imageSize: glasses, fit: .contain) == [60, 20])
        #expect(LayerPlacement.fitted([90, 60], imageSize: glasses, fit: .contain) == [90, 30])
        // No image size: the rectangle as it is.
        #expect(LayerPlacement.fitted(box, imageSize: [0, 80], fit: .width) == box)
    }

    @Test func widthFitKeepsTheCentreAndWidthOnEveryFace() {
        let image = SIMD2<Float>(240, 80)
        for face in Self.faces {
            for rotate in [false, true] {
                let layer = OverlayLayer(feature: .eyes, image: "", sizeRatio: [1.5, 3.2], offset: [0, 0.15],
                                         rotate: rotate)
                let stretched = LayerPlacement.place(layer, on: face)
                // The default is today's placement, with or without the image's size.
                #expect(LayerPlacement.place(layer, on: face, imageSize: image) == stretched)
                var fitted = layer
                fitted.fit = .width
                let p = LayerPlacement.place(fitted, on: face, imageSize: image)
                #expect(p.center == stretched.center && p.angle == stretched.angle)
                #expect(close(p.size.x, stretched.size.x))
                #expect(close(p.size.y, p.size.x / 3))
                // Without the image's size there is no aspect to keep.
                #expect(LayerPlacement.place(fitted, on: face) == stretched)
            }
        }
    }

    @Test func theLayoutKeyParsesAndRefusesUnknownModes() throws {
        func parse(_ fit: String) throws -> OverlayLayout {
            try OverlayLayout(
                json: Data(#"{"layers": [{"feature": "eyes", "image": "a.png", "fit": \#(fit)}]}"#.utf8),
                baseDirectory: "/l", name: "t.json")
        }
        for mode in OverlayLayer.Fit.allCases { #expect(try parse("\"\(mode.rawValue)\"").layers[0].fit == mode) }
        let plain = try OverlayLayout(
            json: Data(#"{"layers": [{"feature": "eyes", "image": "a.png"}]}"#.utf8), baseDirectory: "/l",
            name: "t.json")
        #expect(plain.layers[0].fit == .stretch)
        #expect {
            try parse("\"squash\"")
        } throws: { error in
            let e = error as? OverlayError
            return e?.code == .badLayout
                && e?.reason == "layers[0].fit: unknown fit 'squash' (expected one of stretch, width, height, contain)"
        }
        #expect {
            try parse("true")
        } throws: { error in (error as? OverlayError)?.reason == "layers[0].fit: expected a string" }
        // The README's example layout: both layers keep their aspect, and their images load.
        let example = try OverlayLayout.load(
            path: Paths.resources.appendingPathComponent("glasses_keep_aspect.json").path)
        #expect(example.layers.count == 2 && example.layers.allSatisfy { $0.fit == .width })
        #expect(try OverlayRenderer(layout: example).imageSizes == [[240, 80], [160, 50]])
    }

    /// The red disc drawn over a flat mouth box: stretched it is as flat as the box, fitted it stays round.
    @Test func aRenderedDiscStaysRoundWhenFitted() throws {
        let face = try #require(Self.faces.first)
        var widthOverHeight: [OverlayLayer.Fit: Float] = [:]
        for fit in [OverlayLayer.Fit.stretch, .width, .contain] {
            let layer = OverlayLayer(
                feature: .mouth, image: Paths.overlay("red_disc_rgba8.png"), rotate: false, fit: fit)
            let renderer = try OverlayRenderer(layout: OverlayLayout(layers: [layer]))
            let box = face.boundingBox(.mouth)
            let width = Int(box.maxX) + 80, height = Int(box.maxY) + 80
            let frame = solidFrame(width: width, height: height, bgr: [0, 0, 0])
            try renderer.render(landmarks: [face], on: frame)
            // The bounding box of clearly red pixels.
            var minX = Int.max, maxX = Int.min, minY = Int.max, maxY = Int.min
            for y in 0..<height {
                for x in 0..<width where frame.pixel(x, y).z >= 128 {
                    minX = min(minX, x)
                    maxX = max(maxX, x)
                    minY = min(minY, y)
                    maxY = max(maxY, y)
                }
            }
            try #require(maxX > minX && maxY > minY, "nothing red drawn for \(fit)")
            widthOverHeight[fit] = Float(maxX - minX + 1) / Float(maxY - minY + 1)
        }
        let boxAspect = face.boundingBox(.mouth).width / face.boundingBox(.mouth).height
        #expect(boxAspect > 1.8, "the mouth box is flat")
        #expect(abs(widthOverHeight[.stretch]! - boxAspect) < 0.25 * boxAspect, "\(widthOverHeight)")
        #expect(abs(widthOverHeight[.width]! - 1) < 0.08, "\(widthOverHeight)")
        #expect(abs(widthOverHeight[.contain]! - 1) < 0.08, "\(widthOverHeight)")
    }
}
