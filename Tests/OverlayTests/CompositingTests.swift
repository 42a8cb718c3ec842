import Foundation
import Overlay
import Testing
import WinkCore

struct CompositingTests {
    /// A frame with a smooth colour gradient, so every blend is checked against varied backgrounds.
    func gradientFrame(width: Int = 160, height: Int = 120) -> PixelBuffer {
        let buffer = PixelBuffer(wantsColor: true)
        buffer.resize(width: width, height: height)
        for y in 0..<height {
            for x in 0..<width {
                let i = 3 * (y * width + x)
                buffer.bgr[i] = UInt8(x * 255 / (width - 1))
                buffer.bgr[i + 1] = UInt8(y * 255 / (height - 1))
                buffer.bgr[i + 2] = UInt8((x + y) * 255 / (width + height - 2))
            }
        }
        return buffer
    }

    /// `image` drawn over `background` at each of a few placements (1:1, shrunk, enlarged and turned).
    func composites(_ image: OverlayImage, over background: PixelBuffer) throws -> [[UInt8]] {
        let renderer = try OverlayRenderer(layers: [OverlayLayer(feature: .face, image: "")], images: [image])
        let c = PixelPoint(Float(background.width) / 2, Float(background.height) / 2)
        let w = Float(image.width)
        let h = Float(image.height)
        let placements = [
            LayerPlacement(center: c, size: [w, h], angle: 0),
            LayerPlacement(center: c, size: [w * 0.45, h * 0.45], angle: 0),
            LayerPlacement(center: c, size: [w * 1.7, h * 1.3], angle: 0),
            LayerPlacement(center: c + [3.3, -2.1], size: [w * 0.8, h * 0.9], angle: 0.4),
        ]
        return try placements.map { p in
            let frame = background.clone()
            try renderer.draw(0, at: p, on: frame)
            return frame.bgrBytes
        }
    }

    /// An image whose pixels are `inside` in the square `range` x `range` and `outside` elsewhere.
    func squareImage(size: Int, range: ClosedRange<Int>, inside: SIMD4<UInt8>, outside: SIMD4<UInt8>) -> OverlayImage {
        var bytes: [UInt8] = []
        for y in 0..<size {
            for x in 0..<size {
                let p = range.contains(x) && range.contains(y) ? inside : outside
                bytes += [p.x, p.y, p.z, p.w]
            }
        }
        return OverlayImage(width: size, height: size, rgba: bytes)
    }

    @Test func halfGreyAtHalfAlphaOverBlackGives64() throws {
        let grey = OverlayImage(width: 20, height: 20, filledWith: [128, 128, 128, 128])
        let renderer = try OverlayRenderer(layers: [OverlayLayer(feature: .face, image: "")], images: [grey])
        let frame = solidFrame(width: 40, height: 40, bgr: [0, 0, 0])
        try renderer.draw(0, at: LayerPlacement(center: [19.5, 19.5], size: [20, 20], angle: 0), on: frame)
        for channel in frame.pixel(20, 20).indices.map({ frame.pixel(20, 20)[$0] }) {
            #expect(abs(Int(channel) - 64) <= 1)
        }
        #expect(frame.pixel(2, 2) == SIMD3(0, 0, 0))
        // The same over white: 64 + 255 * (1 - 128/255) = 191.
        let white = solidFrame(width: 40, height: 40, bgr: [255, 255, 255])
        try renderer.draw(0, at: LayerPlacement(center: [19.5, 19.5], size: [20, 20], angle: 0), on: white)
        #expect(abs(Int(white.pixel(20, 20).x) - 191) <= 1)
    }

    @Test func opacityScalesAlpha() throws {
        let red = OverlayImage(width: 10, height: 10, filledWith: [255, 0, 0, 255])
        let renderer = try OverlayRenderer(
            layers: [OverlayLayer(feature: .face, image: "", opacity: 0.25)], images: [red])
        let frame = solidFrame(width: 30, height: 30, bgr: [0, 0, 0])
        try renderer.draw(0, at: LayerPlacement(center: [15, 15], size: [10, 10], angle: 0), on: frame)
        #expect(abs(Int(frame.pixel(15, 15).z) - 64) <= 1)
    }

    /// Every decodable PNG of the fixture folder composites within 1 level of its 8-bit RGBA equivalent.
    @Test func interlacedCompositesLikeTheRGBA8Original() throws {
        let a = try OverlayImage.decode(path: Paths.overlay("sunglasses_interlaced.png"))
        let b = try OverlayImage.decode(path: Paths.overlay("sunglasses_rgba8.png"))
        #expect(a.width == 240 && a.height == 80)
        #expect(a == b)
        let background = gradientFrame(width: 300, height: 140)
        for (x, y) in zip(try composites(a, over: background), try composites(b, over: background)) {
            #expect(maximumDifference(x, y) <= 1)
        }
    }

    @Test func paletteWithTRNSCompositesLikeItsPaletteExpandedToRGBA8() throws {
        // The palette file is a 32-colour quantisation of sunglasses_rgba8.png, so its 8-bit RGBA equivalent
        // is its own palette expanded: built here from the PLTE and tRNS tables read from the file's chunks.
        let path = Paths.overlay("sunglasses_palette_trns.png")
        let decoded = try OverlayImage.decode(path: path)
        let chunks = try PNGChunks(path: path)
        let plte = try #require(chunks["PLTE"])
        let trns = try #require(chunks["tRNS"])
        var entries: Set<SIMD4<UInt8>> = []
        for i in 0..<(plte.count / 3) {
            let alpha = i < trns.count ? trns[i] : 255
            entries.insert(SIMD4(plte[3 * i], plte[3 * i + 1], plte[3 * i + 2], alpha))
        }
        var partial = 0
        for y in 0..<decoded.height {
            for x in 0..<decoded.width {
                let p = decoded[x, y]
                #expect(entries.contains(p), "pixel \(x),\(y) = \(p) is no palette entry")
                if p.w > 0 && p.w < 255 { partial += 1 }
            }
        }
        #expect(partial > 100, "tRNS partial alpha must survive")
        // And it approximates the RGBA original it was quantised from (mean difference of composites).
        let original = try OverlayImage.decode(path: Paths.overlay("sunglasses_rgba8.png"))
        let background = gradientFrame(width: 300, height: 140)
        for (x, y) in zip(try composites(decoded, over: background), try composites(original, over: background)) {
            let mean = zip(x, y).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
            #expect(Double(mean) / Double(x.count) < 1.0)
        }
    }

    @Test func sixteenBitRGBAMatchesItsEightBitEquivalent() throws {
        // gray50_rgba16.png: 0x8080 grey at alpha 0x8000 in the square 10...49 of a 60x60 transparent image.
        let decoded = try OverlayImage.decode(path: Paths.overlay("gray50_rgba16.png"))
        let expected = squareImage(size: 60, range: 10...49, inside: [128, 128, 128, 128], outside: [0, 0, 0, 0])
        let background = gradientFrame()
        for (x, y) in zip(try composites(decoded, over: background), try composites(expected, over: background)) {
            #expect(maximumDifference(x, y) <= 1)
        }
    }

    @Test func sixteenBitGreyAlphaMatchesItsEightBitEquivalent() throws {
        let decoded = try OverlayImage.decode(path: Paths.overlay("gray_ga16.png"))
        let expected = squareImage(size: 60, range: 10...49, inside: [128, 128, 128, 255], outside: [0, 0, 0, 0])
        let background = gradientFrame()
        for (x, y) in zip(try composites(decoded, over: background), try composites(expected, over: background)) {
            #expect(maximumDifference(x, y) <= 1)
        }
    }

    @Test func rgbColourKeyBecomesTransparent() throws {
        // square_rgb_trns.png: RGB with a tRNS colour key (magenta); an orange square 20...80 is opaque.
        let decoded = try OverlayImage.decode(path: Paths.overlay("square_rgb_trns.png"))
        #expect(decoded[0, 0].w == 0)
        #expect(decoded[50, 50] == SIMD4(0, 128, 255, 255))
        let expected = squareImage(size: 100, range: 20...80, inside: [0, 128, 255, 255], outside: [255, 0, 255, 0])
        let background = gradientFrame()
        for (x, y) in zip(try composites(decoded, over: background), try composites(expected, over: background)) {
            #expect(maximumDifference(x, y) <= 1)
        }
    }

    @Test func oneBitGreyDecodesToOpaqueBlackAndWhite() throws {
        // disc_1bit.png: a white disc (centre 32, 32; radius about 24) on black, 64x64.
        let decoded = try OverlayImage.decode(path: Paths.overlay("disc_1bit.png"))
        #expect(decoded.width == 64 && decoded.height == 64)
        var bytes: [UInt8] = []
        for y in 0..<64 {
            for x in 0..<64 {
                let p = decoded[x, y]
                #expect(p.w == 255)
                #expect(p.x == p.y && p.y == p.z && (p.x == 0 || p.x == 255))
                let r = (Float(x) - 32).squareRoot2(Float(y) - 32)
                if r < 22 { #expect(p.x == 255) }
                if r > 27 { #expect(p.x == 0) }
                bytes += [p.x, p.x, p.x, 255]
            }
        }
        let background = gradientFrame()
        let expected = OverlayImage(width: 64, height: 64, rgba: bytes)
        for (x, y) in zip(try composites(decoded, over: background), try composites(expected, over: background)) {
            #expect(maximumDifference(x, y) <= 1)
        }
    }

    @Test func greyAlphaDecodesToGreyRGBA() throws {
        let decoded = try OverlayImage.decode(path: Paths.overlay("mustache_gray_alpha8.png"))
        #expect(decoded.width == 160 && decoded.height == 50)
        var translucent = 0
        for y in 0..<decoded.height {
            for x in 0..<decoded.width {
                let p = decoded[x, y]
                #expect(p.x == p.y && p.y == p.z)
                if p.w > 0 && p.w < 255 { translucent += 1 }
            }
        }
        #expect(translucent > 100)
    }

    @Test func scaledRedDiscHasNoDarkRing() throws {
        // The antialiased disc's transparent pixels are black (0,0,0,0): resampling straight colour would
        // pull the edge towards black; premultiplied resampling must not.
        let disc = try OverlayImage.decode(path: Paths.overlay("red_disc_rgba8.png"))
        #expect(disc[0, 0] == SIMD4(0, 0, 0, 0))
        #expect(disc[50, 50] == SIMD4(255, 0, 0, 255))
        let renderer = try OverlayRenderer(layers: [OverlayLayer(feature: .face, image: "")], images: [disc])
        for placement in [
            LayerPlacement(center: [40, 40], size: [50, 50], angle: 0),
            LayerPlacement(center: [40.3, 39.6], size: [50, 50], angle: 0.7),
            LayerPlacement(center: [40, 40], size: [23, 37], angle: 0),
        ] {
            let frame = solidFrame(width: 80, height: 80, bgr: [255, 255, 255])
            try renderer.draw(0, at: placement, on: frame)
            var reddened = 0
            for y in 0..<80 {
                for x in 0..<80 {
                    let p = frame.pixel(x, y)
                    // Disc (0, 0, 255) and background (255, 255, 255) both have red 255: so must every blend.
                    #expect(p.z >= 254, "dark fringe at \(x),\(y): \(p)")
                    #expect(p.x == p.y)
                    if p.x < 128 { reddened += 1 }
                }
            }
            #expect(reddened > 200)
        }
    }

    @Test(arguments: ["corrupt_truncated.png", "not_a_png.png"])
    func brokenFilesAreRefused(name: String) {
        #expect {
            try OverlayImage.decode(path: Paths.overlay(name))
        } throws: { error in
            guard let e = error as? OverlayError else { return false }
            return e.code == .notDecodable && e.exitCode.rawValue == 65
                && e.description.hasPrefix(Paths.overlay(name) + ": ")
        }
    }

    @Test func aFlippedByteFailsTheChunkCRC() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Paths.overlay("sunglasses_rgba8.png"))))
        bytes[bytes.count / 2] ^= 0x55  // inside the IDAT data
        let path = folder.appendingPathComponent("flipped.png").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect {
            try OverlayImage.decode(path: path)
        } throws: { error in
            (error as? OverlayError)?.code == .notDecodable && (error as? OverlayError)?.reason.contains("CRC") == true
        }
        // A truncated file names what is missing.
        #expect {
            try OverlayImage.decode(path: Paths.overlay("corrupt_truncated.png"))
        } throws: { error in (error as? OverlayError)?.reason.hasPrefix("truncated PNG") == true }
    }

    @Test func missingAndDirectoryPathsExit66() {
        for path in ["/nonexistent/x.png", Paths.overlays.path] {
            #expect {
                try OverlayImage.decode(path: path)
            } throws: { error in
                (error as? OverlayError)?.code == .missing && (error as? OverlayError)?.exitCode.rawValue == 66
            }
        }
    }

    @Test func everyDecodablePNGInTheFolderIsCovered() throws {
        // A new fixture must be added to one of the tests above.
        let covered: Set<String> = [
            "sunglasses_rgba8.png", "sunglasses_interlaced.png", "sunglasses_palette_trns.png",
            "gray50_rgba16.png", "gray_ga16.png", "square_rgb_trns.png", "disc_1bit.png",
            "mustache_gray_alpha8.png", "red_disc_rgba8.png", "corrupt_truncated.png",
            "not_a_png.png",
        ]
        let files = try FileManager.default.contentsOfDirectory(atPath: Paths.overlays.path).filter {
            $0.hasSuffix(".png")
        }
        #expect(Set(files) == covered)
    }
}

extension Float {
    /// The Euclidean length of (self, y).
    func squareRoot2(_ y: Float) -> Float { (self * self + y * y).squareRoot() }
}
