import WinkCore

/// Turns `FaceMeasures` into ARKit-named coefficients in 0...1, relative to a neutral face.
///
/// Each coefficient is a linear ramp: 0 at the person's neutral value of its measure, 1 at neutral plus
/// the measure's `span` (the change a full expression makes, in the measure's own units). The neutral
/// comes from `Calibration` (population defaults until a person's own neutral is learned).
public struct CoefficientModel: Sendable, Equatable, Codable {
    /// Change of the eye aspect ratio, as a fraction of its neutral, that counts as fully closed.
    public var eyeAspectClosing: Float = 0.45
    /// Rise of the eye-state model's closed probability above the person's neutral that still counts as
    /// open (squinting, smiling, noise).
    public var eyeClosedDeadZone: Float = 0.1
    /// Rise of the closed probability beyond the dead zone that counts as fully closed.
    public var eyeClosedSpan: Float = 0.8
    /// Weight of the pixel evidence (the eye-state model) against the geometry (eye aspect ratio) in eye
    /// closure, 0...1. The model tells the two eyes apart; the aspect ratio alone cannot (see `EyeEvidence`).
    public var eyeStateWeight: Float = 0.85
    /// Rise of the eye aspect ratio, as a fraction of neutral, for `eyeWide` = 1.
    public var eyeWidening: Float = 0.35
    /// Growth of the nose-to-chin distance (per interocular distance) for `jawOpen` = 1.
    public var jawSpan: Float = 0.30
    /// Widening of the mouth (per interocular) for a full smile.
    public var smileWidthSpan: Float = 0.22
    /// Rise of a mouth corner above the lip centre line (per interocular) for a full smile.
    public var smileLiftSpan: Float = 0.12
    /// Rise of the inner brows (per interocular) for `browInnerUp` = 1.
    public var browRaiseSpan: Float = 0.12
    /// Drop of the brows (per interocular) for `browDown` = 1.
    public var browLowerSpan: Float = 0.08

    /// The population defaults above.
    public init() {}

    /// Coefficients for `m` relative to `neutral`.
    public func coefficients(_ m: FaceMeasures, neutral n: FaceMeasures) -> BlendShapeCoefficients {
        var c = BlendShapeCoefficients()
        func ramp(_ x: Float, _ span: Float) -> Float { span == 0 ? 0 : min(1, max(0, x / span)) }
        // Pixels decide whether an eye is closed: the 68-point model pulls an open eye's lids together when
        // the other eye closes, so the aspect ratio cannot tell the eyes apart; it adds a little geometry.
        func closure(ear: Float, earNeutral: Float, closed: Float, closedNeutral: Float) -> Float {
            let geometric = ramp(earNeutral - ear, eyeAspectClosing * max(earNeutral, 1e-3))
            let pixel = ramp(closed - closedNeutral - eyeClosedDeadZone, eyeClosedSpan)
            return eyeStateWeight * pixel + (1 - eyeStateWeight) * geometric
        }
        c[.eyeBlinkLeft] = closure(ear: m.eyeAspectLeft, earNeutral: n.eyeAspectLeft, closed: m.eyeClosedLeft,
                                   closedNeutral: n.eyeClosedLeft)
        c[.eyeBlinkRight] = closure(ear: m.eyeAspectRight, earNeutral: n.eyeAspectRight, closed: m.eyeClosedRight,
                                    closedNeutral: n.eyeClosedRight)
        c[.eyeWideLeft] = ramp(m.eyeAspectLeft - n.eyeAspectLeft, eyeWidening * n.eyeAspectLeft)
        c[.eyeWideRight] = ramp(m.eyeAspectRight - n.eyeAspectRight, eyeWidening * n.eyeAspectRight)
        // Mostly the jaw drop; a little of the lip gap, as ARKit's jawOpen rises slightly in a toothy smile.
        c[.jawOpen] = 0.85 * ramp(m.jawDrop - n.jawDrop, jawSpan) + 0.15 * ramp(m.lipGap - n.lipGap, 0.3)
        let widen = ramp(m.mouthWidth - n.mouthWidth, smileWidthSpan)
        c[.mouthSmileLeft] = 0.5 * widen + 0.5 * ramp(m.cornerLiftLeft - n.cornerLiftLeft, smileLiftSpan)
        c[.mouthSmileRight] = 0.5 * widen + 0.5 * ramp(m.cornerLiftRight - n.cornerLiftRight, smileLiftSpan)
        c[.mouthClose] = c[.jawOpen] * (1 - ramp(m.lipGap, 0.15))
        c[.browInnerUp] = ramp(m.innerBrowHeight - n.innerBrowHeight, browRaiseSpan)
        c[.browDownLeft] = ramp(n.browHeightLeft - m.browHeightLeft, browLowerSpan)
        c[.browDownRight] = ramp(n.browHeightRight - m.browHeightRight, browLowerSpan)
        return c
    }

    /// Population-average neutral measures for a frontal face (used before a person's neutral is known,
    /// and for single still images).
    public static let populationNeutral = FaceMeasures(
        eyeAspectLeft: 0.33, eyeAspectRight: 0.33, eyeClosedLeft: 0.02, eyeClosedRight: 0.02, jawDrop: 0.95,
        lipGap: 0.01, mouthWidth: 0.55, cornerLiftLeft: 0.015, cornerLiftRight: 0.015, innerBrowHeight: 0.24,
        browHeightLeft: 0.33, browHeightRight: 0.33)
}
