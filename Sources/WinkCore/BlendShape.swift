/// The expression coefficients winkd estimates, named after ARKit's `ARFaceAnchor.BlendShapeLocation`.
///
/// Each coefficient is in 0...1: 0 is the person's neutral, 1 the fullest expression. Left and right
/// are the person's own, as in ARKit.
public enum BlendShape: String, Sendable, CaseIterable, Codable, Hashable {
    /// The person's own left / right eye closing (eye-state model and eye aspect ratio; ARKit `eyeBlinkLeft`).
    case eyeBlinkLeft, eyeBlinkRight
    /// The person's own left / right eye opening wider than neutral (eye aspect ratio).
    case eyeWideLeft, eyeWideRight
    /// The jaw dropping (nose-to-chin distance, a little of the lip gap).
    case jawOpen
    /// The person's own left / right mouth corner in a smile (mouth widening and that corner's lift).
    case mouthSmileLeft, mouthSmileRight
    /// The part of `jawOpen` made with the lips together (ARKit `mouthClose`).
    case mouthClose
    /// The inner brows rising.
    case browInnerUp
    /// The person's own left / right brow lowering.
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

    /// The number of cases, 11 (the size of `BlendShapeCoefficients.storage`).
    public static let count = 11
}

/// One value in 0...1 per `BlendShape`, stored inline (no heap allocation per frame).
public struct BlendShapeCoefficients: Sendable, Equatable {
    /// The 11 coefficients, each in 0...1, indexed by `BlendShape.index`.
    public var storage: InlineArray<11, Float>

    /// Every coefficient 0 (the neutral face).
    public init() { storage = InlineArray(repeating: 0) }

    /// The coefficient of `shape`, 0...1. A value set is clamped to 0...1, NaN to 0.
    public subscript(_ shape: BlendShape) -> Float {
        get { storage[shape.index] }
        set { storage[shape.index] = min(1, max(0, newValue.isNaN ? 0 : newValue)) }
    }

    /// Whether every coefficient is the same (`==` on each `Float`).
    public static func == (a: Self, b: Self) -> Bool {
        for i in 0..<BlendShape.count where a.storage[i] != b.storage[i] { return false }
        return true
    }
}
