import CWinkOverlay
import WinkCore

/// Draws a face layout onto BGR frames: every layer, in order, on every face.
///
/// Each layer's image is decoded once and cached premultiplied (colour x alpha x opacity, 32-bit float);
/// per frame, only the region a layer covers is resampled (area shrink, then bilinear warp) and blended
/// with Porter-Duff "over" (T. Porter, T. Duff, "Compositing Digital Images", SIGGRAPH 1984) on the
/// premultiplied colour, so antialiased edges get no dark fringe. Layers are clipped at the frame edges and
/// skipped when entirely outside.
///
/// Not thread-safe: one renderer per thread (the resampling scratch space is per thread, shared by all
/// layers). About 0.3 ms a layer on a 640x480 frame (see `OverlayBenchmark`).
public final class OverlayRenderer {
    /// The layers drawn, in order.
    public let layers: [OverlayLayer]
    /// Each layer image's width and height in pixels (for `OverlayLayer.fit`).
    public let imageSizes: [SIMD2<Float>]
    private let cache: [CachedLayer]

    /// Loads every layer's image. Layers naming the same file share one decode.
    /// - Throws: `OverlayError` `.missing` (66) naming a missing image, `.notDecodable` (65) naming a broken one.
    public convenience init(layout: OverlayLayout) throws {
        var decoded: [String: OverlayImage] = [:]
        var images: [OverlayImage] = []
        for (index, layer) in layout.layers.enumerated() {
            if let image = decoded[layer.image] {
                images.append(image)
            } else {
                do {
                    let image = try OverlayImage.decode(path: layer.image)
                    decoded[layer.image] = image
                    images.append(image)
                } catch var error as OverlayError {
                    error.reason += " (image of layers[\(index)])"
                    throw error
                }
            }
        }
        try self.init(layers: layout.layers, images: images)
    }

    /// The most pixels all of a renderer's cached layer images may hold together: as many as one image may
    /// (`OverlayImage.maximumPixels`, 16,777,216: 256 MiB cached as float BGRA). Layers of the same image at
    /// the same opacity share one cache.
    public static let maximumCachedPixels = OverlayImage.maximumPixels

    /// A renderer for layers whose images are already decoded (`images[i]` belongs to `layers[i]`; the
    /// layers' `image` paths are not read).
    /// - Throws: `OverlayError.notDecodable` (65) when the distinct images together are over
    ///   `maximumCachedPixels`; `.internal` if OpenCV cannot allocate the cache.
    public init(layers: [OverlayLayer], images: [OverlayImage]) throws {
        precondition(layers.count == images.count, "one image per layer")
        self.layers = layers
        imageSizes = images.map { SIMD2(Float($0.width), Float($0.height)) }
        var caches: [CachedLayer] = []
        var pixels = 0
        for (index, (layer, image)) in zip(layers, images).enumerated() {
            // The same image (a shared decode compares in O(1)) at the same opacity: one cache.
            if let earlier = (0..<index).first(where: { layers[$0].opacity == layer.opacity && images[$0] == image }) {
                caches.append(caches[earlier])
                continue
            }
            pixels += image.width * image.height
            guard pixels <= Self.maximumCachedPixels else {
                throw OverlayError(
                    .notDecodable, subject: layer.image,
                    reason: "the layout's images come to more than \(Self.maximumCachedPixels) pixels together, "
                        + "the limit for one image (image of layers[\(index)])")
            }
            caches.append(try CachedLayer(image: image, opacity: layer.opacity, name: layer.image))
        }
        cache = caches
    }

    /// Where each layer lands on a face, in drawing order.
    public func placements(on landmarks: Landmarks) -> [LayerPlacement] {
        zip(layers, imageSizes).map { LayerPlacement.place($0, on: landmarks, imageSize: $1) }
    }

    /// Draws every layer on every face into the BGR plane of `buffer`.
    /// - Parameters:
    ///   - faces: observations as `FaceTracker` returns them for this frame.
    ///   - mirrored: whether the frame is a mirror image (a selfie camera) and `faces` come from a tracker with
    ///     `TrackerSettings.mirrored` set, i.e. in the coordinates of the un-mirrored image with the person's
    ///     own left/right. Each layer is then placed in the un-mirrored image and drawn mirrored, so the frame
    ///     shows the mirror image of the un-mirrored result. When false, `faces` are in `buffer`'s own pixels.
    /// - Throws: `OverlayError.internal` when the buffer has no colour plane or OpenCV fails.
    public func render(_ faces: [FaceObservation], on buffer: PixelBuffer, mirrored: Bool = false) throws {
        try render(landmarks: faces.map(\.landmarks), on: buffer, mirrored: mirrored)
    }

    /// Draws every layer on every face given by its 68 landmarks (full-frame pixels) into `buffer`'s BGR plane.
    /// `mirrored` as in `render(_:on:mirrored:)`.
    /// - Throws: `OverlayError.internal` when the buffer has no colour plane or OpenCV fails.
    public func render(landmarks faces: [Landmarks], on buffer: PixelBuffer, mirrored: Bool = false) throws {
        guard buffer.wantsColor else {
            throw OverlayError(
                .internal, subject: "frame", reason: "the frame buffer has no BGR plane (wantsColor is false)")
        }
        try render(
            landmarks: faces, bgr: buffer.bgr, width: buffer.width, height: buffer.height,
            stride: 3 * buffer.width, mirrored: mirrored)
    }

    /// Draws every layer on every face into a BGR24 plane (`width` x `height` pixels, rows `stride` bytes
    /// apart, origin top-left). `mirrored` as in `render(_:on:mirrored:)`.
    /// - Throws: `OverlayError.internal` when OpenCV fails.
    public func render(
        landmarks faces: [Landmarks], bgr: UnsafeMutablePointer<UInt8>, width: Int, height: Int,
        stride: Int, mirrored: Bool = false
    ) throws {
        for face in faces {
            for (index, layer) in layers.enumerated() {
                var placement = LayerPlacement.place(layer, on: face, imageSize: imageSizes[index])
                if mirrored { placement = placement.mirroredPlacement(frameWidth: width) }
                try draw(index, at: placement, bgr: bgr, width: width, height: height, stride: stride)
            }
        }
    }

    /// Draws layer `index` at an explicit placement into `buffer`'s BGR plane.
    /// - Returns: the number of frame pixels in the clipped region that was blended (0 when the layer is
    ///   entirely outside the frame).
    @discardableResult
    public func draw(_ index: Int, at placement: LayerPlacement, on buffer: PixelBuffer) throws -> Int {
        guard buffer.wantsColor else {
            throw OverlayError(
                .internal, subject: "frame", reason: "the frame buffer has no BGR plane (wantsColor is false)")
        }
        return try draw(
            index, at: placement, bgr: buffer.bgr, width: buffer.width, height: buffer.height,
            stride: 3 * buffer.width)
    }

    @discardableResult
    func draw(
        _ index: Int, at placement: LayerPlacement, bgr: UnsafeMutablePointer<UInt8>, width: Int, height: Int,
        stride: Int
    ) throws -> Int {
        var drawn: Int32 = 0
        let p = wo_placement(
            center_x: placement.center.x, center_y: placement.center.y, width: placement.size.x,
            height: placement.size.y, angle: placement.angle, mirrored: placement.mirrored ? 1 : 0)
        let status = wo_layer_draw(cache[index].handle, bgr, Int32(width), Int32(height), Int32(stride), p, &drawn)
        guard status == WO_OK else {
            throw OverlayError(
                .internal, subject: layers[index].image, reason: "drawing failed (status \(status.rawValue))")
        }
        return Int(drawn)
    }
}

/// A layer image in OpenCV's premultiplied float form, owned and freed with this object.
final class CachedLayer {
    let handle: OpaquePointer

    init(image: OverlayImage, opacity: Float, name: String) throws {
        var out: OpaquePointer?
        let status = image.rgba.withUnsafeBufferPointer {
            wo_layer_create(
                $0.baseAddress, Int32(image.width), Int32(image.height), Int32(4 * image.width), opacity,
                &out)
        }
        guard status == WO_OK, let out else {
            throw OverlayError(.internal, subject: name, reason: "cannot cache the layer (status \(status.rawValue))")
        }
        handle = out
    }

    deinit { wo_layer_destroy(handle) }
}
