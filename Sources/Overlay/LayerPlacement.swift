import WinkCore

#if canImport(Glibc)
    import Glibc
#endif

/// Where a layer lands on a frame: a rectangle of `size` pixels centred at `center`, turned by `angle`.
///
/// Coordinates are full-frame pixels with the origin top-left and y down; pixel centres sit at integer
/// coordinates (dlib's landmark convention). `angle` is in radians; a positive angle turns the layer's x
/// axis towards the frame's y axis (clockwise on screen). A `mirrored` placement shows the layer image
/// flipped left-right (its x axis points the other way).
public struct LayerPlacement: Sendable, Equatable {
    /// The rectangle's centre, full-frame pixels.
    public var center: PixelPoint
    /// Width and height of the rectangle, in pixels.
    public var size: SIMD2<Float>
    /// Radians; positive turns the layer's x axis towards the frame's y axis (clockwise on screen).
    public var angle: Float
    /// Whether the layer image is flipped left-right inside the rectangle.
    public var mirrored: Bool

    /// A placement; `center` and `size` in frame pixels, `angle` in radians.
    public init(center: PixelPoint, size: SIMD2<Float>, angle: Float, mirrored: Bool = false) {
        self.center = center
        self.size = size
        self.angle = angle
        self.mirrored = mirrored
    }

    /// The frame point of a point given in the layer image's own frame (pixels from the rectangle's centre,
    /// along the image's turned axes; x runs right-to-left on a mirrored placement).
    public func framePoint(local: SIMD2<Float>) -> PixelPoint {
        let c = cos(angle)
        let s = sin(angle)
        let x = mirrored ? -local.x : local.x
        return center + SIMD2(c * x - s * local.y, s * x + c * local.y)
    }

    /// The layer-frame coordinates of a frame point (the inverse of `framePoint(local:)`).
    public func localPoint(frame point: PixelPoint) -> SIMD2<Float> {
        let d = point - center
        let c = cos(angle)
        let s = sin(angle)
        let x = c * d.x + s * d.y
        return SIMD2(mirrored ? -x : x, -s * d.x + c * d.y)
    }

    /// This placement, made in an un-mirrored image `frameWidth` pixels wide, as it appears in the mirror
    /// image of that frame: centre reflected about `x = (frameWidth - 1) / 2`, angle negated, image flipped.
    public func mirroredPlacement(frameWidth: Int) -> LayerPlacement {
        LayerPlacement(
            center: SIMD2(Float(frameWidth - 1) - center.x, center.y), size: size, angle: -angle,
            mirrored: !mirrored)
    }

    /// The rectangle's corners in frame pixels: the layer image's top-left, top-right, bottom-right,
    /// bottom-left.
    public var corners: [PixelPoint] {
        let h = size / 2
        return [SIMD2(-h.x, -h.y), SIMD2(h.x, -h.y), SIMD2(h.x, h.y), SIMD2(-h.x, h.y)].map { framePoint(local: $0) }
    }

    /// Whether `point` lies inside the rectangle, at least `inset` pixels from its edges (a negative inset
    /// grows the rectangle).
    public func contains(_ point: PixelPoint, inset: Float = 0) -> Bool {
        let p = localPoint(frame: point)
        return abs(p.x) <= size.x / 2 - inset && abs(p.y) <= size.y / 2 - inset
    }

    /// The affine map from layer-image pixels to frame pixels, as OpenCV's 2x3 row-major matrix
    /// `[a b tx; c d ty]` (frame = M * (u, v, 1)), for an image of `imageSize` pixels stretched over the
    /// rectangle, pixel centres at integer coordinates on both sides.
    public func affine(imageSize: SIMD2<Float>) -> [Float] {
        let c = cos(angle)
        let s = sin(angle)
        let scale = size / imageSize
        let fx = mirrored ? -scale.x : scale.x
        let origin = framePoint(local: scale * 0.5 - size / 2)
        return [c * fx, -s * scale.y, origin.x, s * fx, c * scale.y, origin.y]
    }
}

extension LayerPlacement {
    /// The head's roll in radians: the angle of the line from landmark 36 (the person's right eye, outer
    /// corner) to landmark 45 (left eye, outer corner) against the image's x axis; positive when the
    /// person's left eye is lower in the image (the head tilted clockwise on screen).
    public static func roll(_ landmarks: Landmarks) -> Float {
        let d = landmarks[45] - landmarks[36]
        return atan2(d.y, d.x)
    }

    /// The feature's box: the bounding box of its landmarks in the face's own frame (the image turned by
    /// `-angle` about the origin) when `rotate` is true, else in image axes (angle 0).
    /// - Returns: the box in that frame, and the angle of the frame in radians.
    public static func featureBox(_ feature: FaceFeature, landmarks: Landmarks, rotate: Bool)
        -> (box: PixelRect, angle: Float)
    {
        let angle = rotate ? roll(landmarks) : 0
        let c = cos(angle)
        let s = sin(angle)
        let turned = feature.group.indices.map { i -> PixelPoint in
            let p = landmarks[i]
            return SIMD2(c * p.x + s * p.y, -s * p.x + c * p.y)
        }
        // A group is never empty, so the box exists.
        return (PixelRect(bounding: turned)!, angle)
    }

    /// Places `layer` on the face with `landmarks`: the feature box scaled about its centre by
    /// `layer.sizeRatio`, moved by `layer.offset` times the (unscaled) box's width and height, and turned
    /// with the face when `layer.rotate` is true. With a `layer.fit` other than `.stretch` and an
    /// `imageSize`, the rectangle is then resized about the same centre to the image's aspect ratio (see
    /// `fitted(_:imageSize:fit:)`). A pure function of its inputs.
    /// - Parameter imageSize: the layer image's width and height in pixels; `nil` (or a non-positive side)
    ///   places the layer as `.stretch` does.
    public static func place(_ layer: OverlayLayer, on landmarks: Landmarks, imageSize: SIMD2<Float>? = nil)
        -> LayerPlacement
    {
        let (box, angle) = featureBox(layer.feature, landmarks: landmarks, rotate: layer.rotate)
        let boxSize = SIMD2(box.width, box.height)
        let localCenter = box.center + layer.offset * boxSize
        let c = cos(angle)
        let s = sin(angle)
        let center = SIMD2(c * localCenter.x - s * localCenter.y, s * localCenter.x + c * localCenter.y)
        var size = boxSize * layer.sizeRatio
        if let imageSize { size = fitted(size, imageSize: imageSize, fit: layer.fit) }
        return LayerPlacement(center: center, size: size, angle: angle)
    }

    /// The size, in pixels, an image of `imageSize` pixels takes in a layer rectangle of `size` pixels:
    /// `size` itself for `.stretch`; for `.width` the rectangle's width and the image's height for it
    /// (`size.x * imageSize.y / imageSize.x`); for `.height` the other way round; for `.contain` the
    /// smaller of the two. `size` unchanged when either image side is not positive.
    public static func fitted(_ size: SIMD2<Float>, imageSize: SIMD2<Float>, fit: OverlayLayer.Fit) -> SIMD2<Float> {
        guard imageSize.x > 0, imageSize.y > 0 else { return size }
        let aspect = imageSize.x / imageSize.y
        let byWidth = SIMD2(size.x, size.x / aspect)
        let byHeight = SIMD2(size.y * aspect, size.y)
        switch fit {
        case .stretch: return size
        case .width: return byWidth
        case .height: return byHeight
        case .contain: return byWidth.y <= size.y ? byWidth : byHeight
        }
    }
}
