/// The expression coefficients winkd estimates, named after ARKit's `ARFaceAnchor.BlendShapeLocation`.
///
/// Each coefficient is in 0...1: 0 is the person's neutral, 1 the fullest expression. Left and right
/// are the person's own, as in ARKit.
public enum BlendShape: String, Sendable, CaseIterable, Codable, Hashable {
    case eyeBlinkLeft, eyeBlinkRight
    case eyeWideLeft, eyeWideRight
    case jawOpen
    case mouthSmileLeft, mouthSmileRight
    case mouthClose
    case browInnerUp
    case browDownLeft, browDownRight

    /// A dense index, `0..<BlendShape.allCases.count`, for array storage.
    @inline(__always)
    public var index: Int {
        switch self {
        case .eyeBlinkLeft: 0
        case .eyeBlinkRight: 1
        case .eyeWideLeft: 2
        case .eyeWideRight: 3
        case .jawOpen: 4
        case .mouthSmileLeft: 5
        case .mouthSmileRight: 6
        case .mouthClose: 7
        case .browInnerUp: 8
        case .browDownLeft: 9
        case .browDownRight: 10
        }
    }

    public static let count = 11
}

/// One value in 0...1 per `BlendShape`, stored inline (no heap allocation per frame).
public struct BlendShapeCoefficients: Sendable, Equatable {
    public var storage: InlineArray<11, Float>

    public init() { storage = InlineArray(repeating: 0) }

    public subscript(_ shape: BlendShape) -> Float {
        get { storage[shape.index] }
        set { storage[shape.index] = min(1, max(0, newValue.isNaN ? 0 : newValue)) }
    }

    public static func == (a: Self, b: Self) -> Bool {
        for i in 0..<BlendShape.count where a.storage[i] != b.storage[i] { return false }
        return true
    }
}
