#if canImport(Glibc)
import Glibc
#endif
/// Evidence about one eye: its landmark geometry and what its pixels say.
public struct EyeEvidence: Sendable, Equatable {
    /// Probability (0...1) that the eye is closed, from the eye-state model: a logistic regression over
    /// dlib's FHOG features of a 48x24 patch aligned on the eye's corners, trained on the labelled eyes of
    /// many people (`wv_eye_closure`, Scripts/train_eye_model.py, Models/README.md). Unlike the eye aspect
    /// ratio it tells the two eyes apart: the 68-point model pulls an open eye's lids together when the
    /// other eye closes.
    public var closedProbability: Float
    /// Eye aspect ratio (Soukupova & Cech, "Real-Time Eye Blink Detection using Facial Landmarks",
    /// CVWW 2016): `(|p2-p6| + |p3-p5|) / (2 |p1-p4|)` over the eye's six landmarks.
    public var aspectRatio: Float

    /// Evidence with `closedProbability` in 0...1 and the eye aspect ratio.
    public init(closedProbability: Float, aspectRatio: Float) {
        self.closedProbability = closedProbability
        self.aspectRatio = aspectRatio
    }

    /// The probability for the model's log-odds `logit` (the logistic function, clamped against overflow).
    public static func probability(logit: Float) -> Float {
        1 / (1 + expf(-max(-30, min(30, logit))))
    }
}

/// How trustworthy a face measurement is.
public struct FaceQuality: Sendable, Equatable {
    /// Distance between the outer eye corners (landmarks 36 and 45) in pixels.
    public var interocularPixels: Float
    /// Median grey level of the face region, 0...255.
    public var medianBrightness: Float
    /// Fraction of the face's landmark box inside the frame, 0...1.
    public var visibleFraction: Float
    /// Fraction of the box of the brows and eyes (iBUG 17-26, 36-47) inside the frame, 0...1: what the eye
    /// measures need. A face whose chin is cut off by the bottom of the frame (close to a webcam) keeps 1.
    public var eyesVisibleFraction: Float
    /// Fraction of the box of the chin, nose, eyes and mouth (iBUG 5-11, 27-67) inside the frame, 0...1: what
    /// the mouth measures need (the jaw drop is the nose-to-chin distance per interocular distance).
    public var mouthVisibleFraction: Float

    /// Quality measures; `interocularPixels` in image pixels, brightness 0...255, fractions 0...1.
    public init(
        interocularPixels: Float, medianBrightness: Float, visibleFraction: Float, eyesVisibleFraction: Float,
        mouthVisibleFraction: Float
    ) {
        self.interocularPixels = interocularPixels
        self.medianBrightness = medianBrightness
        self.visibleFraction = visibleFraction
        self.eyesVisibleFraction = eyesVisibleFraction
        self.mouthVisibleFraction = mouthVisibleFraction
    }
}

/// One tracked face in one frame: landmarks in full-frame pixels (origin top-left), head pose, and
/// per-eye pixel evidence. `left`/`right` are the person's own.
public struct FaceObservation: Sendable {
    /// The 68 iBUG landmarks, full-frame pixels (origin top-left, y down).
    public var landmarks: Landmarks
    /// The box the landmarks were predicted in (detector box or the box tracked from the last frame).
    public var box: PixelRect
    /// Head orientation in degrees (signs as `HeadPose` documents them).
    public var pose: HeadPose
    /// The person's own left eye (iBUG 42-47; on the image's right in an unmirrored image).
    public var leftEye: EyeEvidence
    /// The person's own right eye (iBUG 36-41; on the image's left in an unmirrored image).
    public var rightEye: EyeEvidence
    /// How trustworthy the measurement is (size, brightness, visibility).
    public var quality: FaceQuality

    /// An observation; `landmarks` and `box` in full-frame pixels, `pose` in degrees.
    public init(landmarks: Landmarks, box: PixelRect, pose: HeadPose, leftEye: EyeEvidence,
                rightEye: EyeEvidence, quality: FaceQuality) {
        self.landmarks = landmarks
        self.box = box
        self.pose = pose
        self.leftEye = leftEye
        self.rightEye = rightEye
        self.quality = quality
    }
}
