import Foundation
import Overlay
import Testing
import WinkCore

/// A newcomer's finding: a 650 KB layout of 5,000 layers with `"sizeRatio": 1e6` took 23.5 GB before the
/// kernel killed winkctl (each layer kept frame-sized scratch space, and its own cache of the image). Now
/// the scratch space is shared and bounded, layers of one image share its cache, and a layout has at most
/// 64 layers whose images come to at most one image's pixels.
struct LayerMemoryTests {
    @Test func aLayoutOfMoreThan64LayersIsRefused() throws {
        let layer = #"{"feature": "face", "image": "a.png", "sizeRatio": 1e6}"#
        func layout(_ n: Int) throws -> OverlayLayout {
            let json = #"{"layers": ["# + Array(repeating: layer, count: n).joined(separator: ",") + "]}"
            return try OverlayLayout(json: Data(json.utf8), baseDirectory: "/l", name: "n.json")
        }
        #expect(try layout(64).layers.count == 64)
        let refusal = OverlayError(.badLayout, subject: "n.json", reason: "layers: 65 layers, over the limit of 64")
        #expect(throws: refusal) { try layout(65) }
    }

    @Test func layersOfOneImageShareItsCacheAndTheImagesTogetherAreBounded() throws {
        let side = 4096  // 4096 x 4096 = OverlayImage.maximumPixels, the most one image may have
        let big = OverlayImage(width: side, height: side, filledWith: [10, 20, 30, 255])
        let small = OverlayImage(width: 2, height: 1, filledWith: [1, 2, 3, 255])
        #expect(side * side == OverlayRenderer.maximumCachedPixels)
        let full = OverlayLayer(feature: .face, image: "big.png")
        // The same image in two layers at one opacity: one cache, within the limit.
        _ = try OverlayRenderer(layers: [full, full], images: [big, big])
        var faint = full
        faint.opacity = 0.5
        let smallLayer = OverlayLayer(feature: .eyes, image: "small.png")
        for (layers, images, index) in [([full, smallLayer], [big, small], 1), ([full, faint], [big, big], 1)] {
            #expect(
                throws: OverlayError(
                    .notDecodable, subject: layers[index].image,
                    reason: "the layout's images come to more than 16777216 pixels together, the limit for one image "
                        + "(image of layers[\(index)])")
            ) { try OverlayRenderer(layers: layers, images: images) }
        }
    }

    /// A layer placed far larger than the frame (the warp done in bands, the resampling capped) covers every
    /// pixel of a frame of several bands, and one beyond what an Int holds draws too, without trapping.
    @Test func aHugeLayerCoversEveryRowOfALargeFrame() throws {
        let red = OverlayImage(width: 16, height: 8, filledWith: [255, 0, 0, 255])
        let renderer = try OverlayRenderer(layers: [OverlayLayer(feature: .face, image: "")], images: [red])
        let frame = PixelBuffer(wantsColor: true)
        frame.resize(width: 2000, height: 1300)  // 2.6 M pixels: three bands of at most 1 M
        for size: SIMD2<Float> in [[6000, 4000], [3e38, 3e38]] {
            for i in 0..<(2000 * 1300 * 3) { frame.bgr[i] = 7 }
            let drawn = try renderer.draw(0, at: LayerPlacement(center: [1000, 650], size: size, angle: 0.1), on: frame)
            #expect(drawn == 2000 * 1300)
            let bytes = frame.bgrBytes
            var wrong = 0
            for i in stride(from: 0, to: bytes.count, by: 3) where bytes[i..<(i + 3)] != [0, 0, 255] { wrong += 1 }
            #expect(wrong == 0, "\(size): \(wrong) pixels not red")
        }
    }
}
