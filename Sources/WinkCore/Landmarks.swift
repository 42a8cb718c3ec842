/// A point in image pixels, origin at the top-left corner, x to the right, y down.
public typealias PixelPoint = SIMD2<Float>

/// An axis-aligned rectangle in image pixels (origin top-left, y down).
public struct PixelRect: Sendable, Equatable, Codable {
    /// Left edge, image pixels.
    public var x: Float
    /// Top edge, image pixels.
    public var y: Float
    /// Width in pixels.
    public var width: Float
    /// Height in pixels.
    public var height: Float

    /// A rectangle with its top-left corner at (`x`, `y`), in image pixels.
    public init(x: Float, y: Float, width: Float, height: Float) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// Left edge, pixels.
    public var minX: Float { x }
    /// Top edge, pixels.
    public var minY: Float { y }
    /// Right edge (`x + width`), pixels.
    public var maxX: Float { x + width }
    /// Bottom edge (`y + height`), pixels.
    public var maxY: Float { y + height }
    /// The centre, image pixels.
    public var center: PixelPoint { PixelPoint(x + width / 2, y + height / 2) }
    /// `width * height`, square pixels.
    public var area: Float { width * height }

    /// The smallest rectangle holding every point of `points`; `nil` for an empty collection.
    public init?<S: Sequence>(bounding points: S) where S.Element == PixelPoint {
        var lo = PixelPoint(repeating: .infinity)
        var hi = PixelPoint(repeating: -.infinity)
        var any = false
        for p in points {
            lo = pointwiseMin(lo, p)
            hi = pointwiseMax(hi, p)
            any = true
        }
        guard any else { return nil }
        self.init(x: lo.x, y: lo.y, width: hi.x - lo.x, height: hi.y - lo.y)
    }
}

/// The 68 facial landmarks of the iBUG 300-W markup (the layout of dlib's
/// `shape_predictor_68_face_landmarks.dat`), in image pixels (origin top-left, y down).
///
/// Index groups (right/left are the **person's own**, so in an unmirrored image the right eye, 36-41,
/// is on the image's left): jaw 0-16, right brow 17-21, left brow 22-26, nose 27-35, right eye 36-41,
/// left eye 42-47, outer lips 48-59, inner lips 60-67.
/// Source: C. Sagonas et al., "300 Faces in-the-Wild Challenge", ICCV-W 2013.
///
/// Stored inline (no heap allocation), so a value can be produced every frame for free.
public struct Landmarks: Sendable {
    /// The number of points, 68.
    public static let count = 68
    /// The 68 points in iBUG order, image pixels.
    public var points: InlineArray<68, PixelPoint>

    /// Landmarks from 68 points in iBUG order, image pixels.
    public init(points: InlineArray<68, PixelPoint>) { self.points = points }

    /// Builds landmarks from 136 floats laid out `x0, y0, x1, y1, ...` (the C shim's layout).
    public init(interleaved xy: UnsafeBufferPointer<Float>) {
        precondition(xy.count >= 136, "68 landmarks need 136 floats")
        points = InlineArray { i in PixelPoint(xy[2 * i], xy[2 * i + 1]) }
    }

    /// The point with iBUG index `index` (0..<68), image pixels.
    public subscript(_ index: Int) -> PixelPoint {
        get { points[index] }
        set { points[index] = newValue }
    }

    /// The bounding box of the points in `group`.
    public func boundingBox(_ group: LandmarkGroup) -> PixelRect {
        var lo = PixelPoint(repeating: .infinity)
        var hi = PixelPoint(repeating: -.infinity)
        for i in group.indices {
            lo = pointwiseMin(lo, points[i])
            hi = pointwiseMax(hi, points[i])
        }
        return PixelRect(x: lo.x, y: lo.y, width: hi.x - lo.x, height: hi.y - lo.y)
    }

    /// The mean of the points in `group`.
    public func centroid(_ group: LandmarkGroup) -> PixelPoint {
        var sum = PixelPoint.zero
        for i in group.indices { sum += points[i] }
        return sum / Float(group.indices.count)
    }

    /// Euclidean distance in pixels between landmarks `a` and `b`.
    @inline(__always)
    public func distance(_ a: Int, _ b: Int) -> Float {
        let d = points[a] - points[b]
        return (d * d).sum().squareRoot()
    }

    /// Landmarks flipped about the vertical line `x = (width - 1) / 2` of an image `width` pixels wide
    /// **and** re-indexed so that each index keeps naming the same part of the person (index 36 stays
    /// the outer corner of the right eye). This is what a mirrored camera image needs.
    public func mirrored(imageWidth width: Int) -> Landmarks {
        var out = self
        let w = Float(width - 1)
        for i in 0..<Landmarks.count {
            let j = Landmarks.mirrorIndex[i]
            out.points[i] = PixelPoint(w - points[j].x, points[j].y)
        }
        return out
    }

    /// For each iBUG-68 index, the index of its mirror-image counterpart.
    public static let mirrorIndex: [Int] = {
        var m = Array(0..<68)
        func pair(_ a: [Int], _ b: [Int]) { for (x, y) in zip(a, b) { m[x] = y; m[y] = x } }
        pair(Array(0...7), Array((9...16).reversed()))  // jaw
        pair(Array(17...21), Array((22...26).reversed()))  // brows
        pair([31, 32], [35, 34])  // nostrils
        pair([36, 37, 38, 39, 40, 41], [45, 44, 43, 42, 47, 46])  // eyes
        pair([48, 49, 50], [54, 53, 52])  // upper outer lip
        pair([59, 58], [55, 56])  // lower outer lip
        pair([60, 61], [64, 63])  // upper inner lip
        pair([67], [65])  // lower inner lip
        return m
    }()
}

/// Named groups of the iBUG-68 landmarks (person's own left/right).
public enum LandmarkGroup: String, Sendable, CaseIterable, Codable {
    /// Jaw 0-16, right brow 17-21, left brow 22-26, nose 27-35, right eye 36-41, left eye 42-47, mouth 48-67,
    /// inner mouth 60-67, both eyes 36-47, the whole face 0-67 (see `indices`).
    case jaw, rightEyebrow, leftEyebrow, nose, rightEye, leftEye, mouth, innerMouth, eyes, face

    /// The iBUG-68 indices of the group.
    public var indices: ClosedRange<Int> {
        switch self {
        case .jaw: 0...16
        case .rightEyebrow: 17...21
        case .leftEyebrow: 22...26
        case .nose: 27...35
        case .rightEye: 36...41
        case .leftEye: 42...47
        case .mouth: 48...67
        case .innerMouth: 60...67
        case .eyes: 36...47
        case .face: 0...67
        }
    }
}
