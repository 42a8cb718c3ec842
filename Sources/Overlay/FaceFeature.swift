import WinkCore

/// The face part a layer is attached to, by the iBUG-68 landmark groups (SPEC.md "Overlay layouts").
///
/// Left and right are the **person's own**: `rightEye` is landmarks 36-41 (on the image's left in an
/// unmirrored picture), `leftEye` 42-47, `rightEyebrow` 17-21, `leftEyebrow` 22-26.
public enum FaceFeature: String, Sendable, CaseIterable, Codable {
    /// The box of the matching `LandmarkGroup` (`eyes`: both eyes; `face`: all 68 points).
    case leftEye, rightEye, eyes, leftEyebrow, rightEyebrow, nose, mouth, jaw, face

    /// The landmark group whose points define the feature's box.
    public var group: LandmarkGroup {
        switch self {
        case .leftEye: .leftEye
        case .rightEye: .rightEye
        case .eyes: .eyes
        case .leftEyebrow: .leftEyebrow
        case .rightEyebrow: .rightEyebrow
        case .nose: .nose
        case .mouth: .mouth
        case .jaw: .jaw
        case .face: .face
        }
    }
}
