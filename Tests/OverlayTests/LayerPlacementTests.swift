import Foundation
import Overlay
import Testing
import WinkCore

/// Geometry on the dlib photos' ground-truth landmarks: the placement is a pure function of the layer and
/// the landmarks, so most checks need no pixels.
struct LayerPlacementTests {
    static let faces: [Landmarks] = labelledImages.flatMap { $0.faces.map(\.landmarks) }

    func close(_ a: Float, _ b: Float, _ tolerance: Float = 1e-3) -> Bool { abs(a - b) <= tolerance * max(1, abs(b)) }
    func close(_ a: SIMD2<Float>, _ b: SIMD2<Float>, _ tolerance: Float = 1e-3) -> Bool {
        close(a.x, b.x, tolerance) && close(a.y, b.y, tolerance)
    }

    /// `landmarks` turned by `angle` radians about `pivot`.
    func rotated(_ landmarks: Landmarks, by angle: Float, about pivot: PixelPoint) -> Landmarks {
        let c = cos(angle)
        let s = sin(angle)
        return Landmarks(
            points: InlineArray { i in
                let d = landmarks[i] - pivot
                return pivot + SIMD2(c * d.x - s * d.y, s * d.x + c * d.y)
            })
    }

    @Test func theFixturesHaveLabelledFaces() {
        #expect(labelledImages.count == 9)
        #expect(Self.faces.count >= 30)
    }

    @Test func ratioOneCoversTheEyeLandmarkBox() {
        for face in Self.faces {
            let box = face.boundingBox(.leftEye)
            let p = LayerPlacement.place(OverlayLayer(feature: .leftEye, image: "", rotate: false), on: face)
            #expect(close(p.center, box.center))
            #expect(close(p.size, SIMD2(box.width, box.height)))
            #expect(p.angle == 0)
            #expect(close(p.corners[0], SIMD2(box.minX, box.minY)))
            #expect(close(p.corners[2], SIMD2(box.maxX, box.maxY)))
            // Turned with the face, the box still holds every landmark of the eye, touching each side.
            let turned = LayerPlacement.place(OverlayLayer(feature: .leftEye, image: ""), on: face)
            for i in 42...47 { #expect(turned.contains(face[i], inset: -1e-3)) }
            let local = (42...47).map { turned.localPoint(frame: face[$0]) }
            #expect(close(local.map(\.x).max()! - local.map(\.x).min()!, turned.size.x))
            #expect(close(local.map(\.y).max()! - local.map(\.y).min()!, turned.size.y))
        }
    }

    @Test func leftIsThePersonsOwn() throws {
        // In an unmirrored photo the person's left eye (42-47) is on the image's right.
        let face = try #require(Self.faces.first)
        let left = LayerPlacement.place(OverlayLayer(feature: .leftEye, image: ""), on: face)
        let right = LayerPlacement.place(OverlayLayer(feature: .rightEye, image: ""), on: face)
        #expect(left.center.x > right.center.x)
    }

    @Test func ratioOneByThreeKeepsTheCentreAndTriplesTheHeight() {
        for face in Self.faces {
            for rotate in [false, true] {
                let base = LayerPlacement.place(OverlayLayer(feature: .leftEye, image: "", rotate: rotate), on: face)
                let tall = LayerPlacement.place(
                    OverlayLayer(feature: .leftEye, image: "", sizeRatio: [1, 3], rotate: rotate), on: face)
                #expect(close(tall.center, base.center))
                #expect(close(tall.size.x, base.size.x))
                #expect(close(tall.size.y, 3 * base.size.y))
                #expect(tall.angle == base.angle)
            }
        }
    }

    @Test func offsetHalfMovesDownByHalfTheBoxHeight() {
        for face in Self.faces {
            let box = face.boundingBox(.leftEye)
            let moved = LayerPlacement.place(
                OverlayLayer(feature: .leftEye, image: "", offset: [0, 0.5], rotate: false),
                on: face)
            #expect(close(moved.center, box.center + SIMD2(0, 0.5 * box.height)))
            #expect(close(moved.size, SIMD2(box.width, box.height)))
            // Turned with the face, "down" is the face's own down.
            let base = LayerPlacement.place(OverlayLayer(feature: .leftEye, image: ""), on: face)
            let turned = LayerPlacement.place(OverlayLayer(feature: .leftEye, image: "", offset: [0, 0.5]), on: face)
            let down = SIMD2(-sin(base.angle), cos(base.angle))
            #expect(close(turned.center, base.center + down * 0.5 * base.size.y, 2e-3))
        }
    }

    @Test func rollIsTheAngleOfTheOuterEyeCornerLine() throws {
        // The most rolled labelled face.
        let face = try #require(Self.faces.max { abs(LayerPlacement.roll($0)) < abs(LayerPlacement.roll($1)) })
        let d = face[45] - face[36]
        let roll = LayerPlacement.roll(face)
        #expect(roll == atan2(d.y, d.x))
        #expect(abs(roll) > 5 * .pi / 180)
        #expect(LayerPlacement.place(OverlayLayer(feature: .eyes, image: ""), on: face).angle == roll)
        #expect(LayerPlacement.place(OverlayLayer(feature: .eyes, image: "", rotate: false), on: face).angle == 0)
    }

    @Test func aRolledFaceTurnsTheLayerByTheRollAngle() {
        let layer = OverlayLayer(feature: .leftEye, image: "", sizeRatio: [1.4, 3], offset: [0.2, 0.5])
        for face in Self.faces {
            let pivot = face.centroid(.face)
            let upright = LayerPlacement.place(layer, on: face)
            for degrees: Float in [-35, -10, 20, 40] {
                let angle = degrees * .pi / 180
                let turned = LayerPlacement.place(layer, on: rotated(face, by: angle, about: pivot))
                let c = cos(angle)
                let s = sin(angle)
                let d = upright.center - pivot
                #expect(close(turned.center, pivot + SIMD2(c * d.x - s * d.y, s * d.x + c * d.y), 2e-3))
                #expect(close(turned.size, upright.size, 2e-3))
                #expect(abs(remainder(turned.angle - upright.angle - angle, 2 * .pi)) < 1e-4)
            }
        }
    }

    @Test func affineMapsTheImageCornersOntoTheRectangle() {
        let p = LayerPlacement(center: [100, 50], size: [40, 20], angle: 0.3)
        let m = p.affine(imageSize: [80, 10])
        func apply(_ u: Float, _ v: Float) -> SIMD2<Float> {
            SIMD2(m[0] * u + m[1] * v + m[2], m[3] * u + m[4] * v + m[5])
        }
        // Pixel centres at integers: the image's outer edge is at -0.5 and size - 0.5.
        #expect(close(apply(-0.5, -0.5), p.corners[0]))
        #expect(close(apply(79.5, -0.5), p.corners[1]))
        #expect(close(apply(79.5, 9.5), p.corners[2]))
        #expect(close(apply(-0.5, 9.5), p.corners[3]))
    }
}

/// Pixel checks of the same geometry.
struct LayerPixelTests {
    static let red = OverlayImage(width: 8, height: 8, filledWith: [255, 0, 0, 255])
    static let redBGR = SIMD3<UInt8>(0, 0, 255)

    func renderer(_ layer: OverlayLayer) throws -> OverlayRenderer {
        try OverlayRenderer(layers: [layer], images: [Self.red])
    }

    /// Every pixel whose centre is at least 1 px inside `placement` is red; every one at least 1.5 px
    /// outside is unchanged.
    func checkCoverage(_ placement: LayerPlacement, drawn: PixelBuffer, original: PixelBuffer) {
        var inside = 0
        var wrongInside = 0
        var wrongOutside = 0
        for y in 0..<drawn.height {
            for x in 0..<drawn.width {
                let p = PixelPoint(Float(x), Float(y))
                if placement.contains(p, inset: 1) {
                    inside += 1
                    if drawn.pixel(x, y) != Self.redBGR { wrongInside += 1 }
                } else if !placement.contains(p, inset: -1.5) {
                    if drawn.pixel(x, y) != original.pixel(x, y) { wrongOutside += 1 }
                }
            }
        }
        #expect(inside > 10)
        #expect(wrongInside == 0)
        #expect(wrongOutside == 0)
    }

    @Test func opaqueSquareCoversTheEyeBoxOnAPhoto() throws {
        let image = try #require(labelledImages.first { $0.file == "2008_002506.jpg" })
        let photo = try loadFrame(Paths.dlibImages.appendingPathComponent(image.file).path)
        let layer = OverlayLayer(feature: .leftEye, image: "red", sizeRatio: [1, 3], offset: [0, 0.5], rotate: false)
        let drawn = photo.clone()
        let faces = image.faces.map(\.landmarks)
        try renderer(layer).render(landmarks: faces, on: drawn)
        // Check each face's rectangle alone: mask out the others by comparing near each one only.
        for face in faces {
            let placement = LayerPlacement.place(layer, on: face)
            let box = face.boundingBox(.leftEye)
            #expect(placement.center.y - box.center.y == 0.5 * box.height)
            let pad: Float = 6
            for y in Int(
                placement.center.y - placement.size.y / 2 - pad)...Int(placement.center.y + placement.size.y / 2 + pad)
            {
                for x in Int(
                    placement.center.x - placement.size.x / 2 - pad)...Int(
                        placement.center.x + placement.size.x / 2 + pad)
                {
                    let p = PixelPoint(Float(x), Float(y))
                    if placement.contains(p, inset: 1) { #expect(drawn.pixel(x, y) == Self.redBGR) }
                    if !placement.contains(p, inset: -1.5) { #expect(drawn.pixel(x, y) == photo.pixel(x, y)) }
                }
            }
        }
    }

    @Test func rolledFaceTurnsTheDrawnSquare() throws {
        let face = try #require(LayerPlacementTests.faces.first)
        let pivot = face.centroid(.face)
        let angle: Float = 30 * .pi / 180
        let c = cos(angle)
        let s = sin(angle)
        let turned = Landmarks(
            points: InlineArray { i in
                let d = face[i] - pivot
                return pivot + SIMD2(c * d.x - s * d.y, s * d.x + c * d.y)
            })
        let layer = OverlayLayer(feature: .eyes, image: "red", sizeRatio: [1.2, 3])
        let placement = LayerPlacement.place(layer, on: turned)
        #expect(abs(placement.angle - (LayerPlacement.roll(face) + angle)) < 1e-4)
        let frame = solidFrame(width: 500, height: 400, bgr: [90, 160, 40])
        let drawn = frame.clone()
        try renderer(layer).render(landmarks: [turned], on: drawn)
        checkCoverage(placement, drawn: drawn, original: frame)
    }

    @Test func aLayerPastTheFrameEdgeDrawsOnlyItsVisiblePart() throws {
        let r = try renderer(OverlayLayer(feature: .face, image: "red"))
        let frame = solidFrame(width: 120, height: 90, bgr: [10, 200, 30])
        for placement in [
            LayerPlacement(center: [-10, 40], size: [60, 30], angle: 0.2),  // over the left edge
            LayerPlacement(center: [110, 85], size: [50, 50], angle: -0.5),  // over the bottom-right corner
        ] {
            let drawn = frame.clone()
            let pixels = try r.draw(0, at: placement, on: drawn)
            #expect(pixels > 0)
            #expect(pixels < 120 * 90)
            checkCoverage(placement, drawn: drawn, original: frame)
        }
        // Entirely outside: skipped, nothing changes.
        for placement in [
            LayerPlacement(center: [-100, 40], size: [60, 30], angle: 0),
            LayerPlacement(center: [60, 400], size: [60, 30], angle: 1),
        ] {
            let drawn = frame.clone()
            #expect(try r.draw(0, at: placement, on: drawn) == 0)
            #expect(drawn.bgrBytes == frame.bgrBytes)
        }
    }

    @Test func degenerateBoxesDrawNothing() throws {
        let r = try renderer(OverlayLayer(feature: .face, image: "red"))
        let frame = solidFrame(width: 40, height: 40, bgr: [1, 2, 3])
        let drawn = frame.clone()
        #expect(try r.draw(0, at: LayerPlacement(center: [20, 20], size: [0, 10], angle: 0), on: drawn) == 0)
        #expect(try r.draw(0, at: LayerPlacement(center: [.nan, 20], size: [10, 10], angle: 0), on: drawn) == 0)
        #expect(drawn.bgrBytes == frame.bgrBytes)
    }
}

/// A mirrored (selfie) frame with un-mirrored faces, as a tracker with `TrackerSettings.mirrored` gives them.
struct MirroredRenderingTests {
    func mirror(_ frame: PixelBuffer) -> PixelBuffer {
        let out = frame.clone()
        for y in 0..<frame.height {
            for x in 0..<frame.width {
                let s = 3 * (y * frame.width + (frame.width - 1 - x))
                let d = 3 * (y * frame.width + x)
                for k in 0..<3 { out.bgr[d + k] = frame.bgr[s + k] }
            }
        }
        return out
    }

    @Test func aMirroredFrameShowsTheMirrorImageOfTheUnmirroredResult() throws {
        let image = try #require(labelledImages.first { $0.file == "2009_004587.jpg" })
        let photo = try loadFrame(Paths.dlibImages.appendingPathComponent(image.file).path)
        let renderer = try OverlayRenderer(
            layout: try OverlayLayout.load(path: Paths.resources.appendingPathComponent("rolled_discs.json").path))
        let faces = image.faces.map(\.landmarks)

        let straight = photo.clone()
        try renderer.render(landmarks: faces, on: straight)
        let selfie = mirror(photo)
        try renderer.render(landmarks: faces, on: selfie, mirrored: true)
        // OpenCV's warpAffine rounds sample positions to 1/32 pixel, which is not symmetric under a flip: a few
        // antialiased edge pixels may differ by a few levels.
        let a = selfie.bgrBytes
        let b = mirror(straight).bgrBytes
        let off = zip(a, b).filter { abs(Int($0) - Int($1)) > 1 }.count
        #expect(maximumDifference(a, b) <= 4)
        #expect(off <= 5, "\(off) samples differ by more than 1")
        #expect(selfie.bgrBytes != mirror(photo).bgrBytes)
    }

    @Test func mirroredPlacementReflectsTheRectangle() {
        let p = LayerPlacement(center: [30, 40], size: [20, 10], angle: 0.3)
        let m = p.mirroredPlacement(frameWidth: 101)
        #expect(m.center == SIMD2(70, 40))
        #expect(m.angle == -0.3)
        #expect(m.mirrored)
        // The image's top-left corner lands on the reflection of where it was.
        let a = p.corners[0]
        let b = m.corners[0]
        #expect(abs(b.x - (100 - a.x)) < 1e-4 && abs(b.y - a.y) < 1e-4)
        #expect(m.mirroredPlacement(frameWidth: 101) == p)
    }
}
