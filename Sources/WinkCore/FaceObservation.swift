/// Pixel evidence about one eye, measured from the grey frame inside the eye's landmark box.
public struct EyeEvidence: Sendable, Equatable {
    /// Contrast of the darkest row in the middle third of the eye's landmark box against the face's
    /// median brightness: `(median - darkestRowMean) / median`, in 0...1. An open eye shows the dark iris
    /// and pupil (about 0.8-0.9 on the fixtures); a closed lid is skin (about 0.5-0.7).
    public var irisContrast: Float
    /// Eye aspect ratio (Soukupova & Cech, "Real-Time Eye Blink Detection using Facial Landmarks",
    /// CVWW 2016): `(|p2-p6| + |p3-p5|) / (2 |p1-p4|)` over the eye's six landmarks.
    public var aspectRatio: Float

    public init(irisContrast: Float, aspectRatio: Float) {
        self.irisContrast = irisContrast
        self.aspectRatio = aspectRatio
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

    public init(interocularPixels: Float, medianBrightness: Float, visibleFraction: Float) {
        self.interocularPixels = interocularPixels
        self.medianBrightness = medianBrightness
        self.visibleFraction = visibleFraction
    }
}

/// One tracked face in one frame: landmarks in full-frame pixels (origin top-left), head pose, and
/// per-eye pixel evidence. `left`/`right` are the person's own.
public struct FaceObservation: Sendable {
    public var landmarks: Landmarks
    /// The box the landmarks were predicted in (detector box or the box tracked from the last frame).
    public var box: PixelRect
    public var pose: HeadPose
    public var leftEye: EyeEvidence
    public var rightEye: EyeEvidence
    public var quality: FaceQuality

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
