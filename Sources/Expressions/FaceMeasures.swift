import WinkCore

#if canImport(Glibc)
    import Glibc
#endif

/// Scale-free geometric and pixel measures of one face, the raw material of the blend-shape coefficients.
///
/// Lengths are divided by the face's outer-eye-corner distance (iBUG 36-45), so they do not depend on the
/// face's size in pixels. On a face turned by `yaw` that distance is foreshortened in the image by about
/// cos(yaw), as every horizontal length of the face is, while vertical lengths are not: so horizontal
/// lengths are divided by the image distance as they are (their foreshortening cancels), and vertical
/// ones by the distance undone, image distance / cos(yaw) (else a turn would read as a dropped jaw or
/// lifted corners). The yaw is the rigid points' (`wv_head_pose`), which an expression does not move.
public struct FaceMeasures: Sendable, Equatable {
    /// Eye aspect ratio per eye (Soukupova & Cech 2016), person's own left/right.
    public var eyeAspectLeft: Float
    /// Eye aspect ratio of the person's own right eye (iBUG 36-41).
    public var eyeAspectRight: Float
    /// Probability (0...1) that each eye is closed, from the eye-state model (`EyeEvidence.closedProbability`).
    public var eyeClosedLeft: Float
    /// Probability (0...1) that the person's own right eye is closed.
    public var eyeClosedRight: Float
    /// Nose tip (30) to chin (8) distance / interocular: grows when the jaw drops.
    public var jawDrop: Float
    /// Inner lip gap, mean of |61-67|, |62-66|, |63-65|, / interocular.
    public var lipGap: Float
    /// Mouth width |48-54| / interocular.
    public var mouthWidth: Float
    /// Height of each mouth corner above the midpoint of the lip centre line (points 51 and 57), / interocular;
    /// positive when the corner is higher. Left uses corner 54, right corner 48.
    public var cornerLiftLeft: Float
    /// Lift of the person's own right mouth corner (iBUG 48), / interocular.
    public var cornerLiftRight: Float
    /// Inner brow (21, 22) height above the eye's inner corner (39, 42), mean, / interocular.
    public var innerBrowHeight: Float
    /// Brow height above each eye's centre, / interocular (for browDown).
    public var browHeightLeft: Float
    /// Brow height above the person's own right eye, / interocular.
    public var browHeightRight: Float

    /// Measures as given (unitless ratios and probabilities); every one defaults to 0.
    public init(
        eyeAspectLeft: Float = 0, eyeAspectRight: Float = 0, eyeClosedLeft: Float = 0, eyeClosedRight: Float = 0,
        jawDrop: Float = 0, lipGap: Float = 0, mouthWidth: Float = 0, cornerLiftLeft: Float = 0,
        cornerLiftRight: Float = 0, innerBrowHeight: Float = 0, browHeightLeft: Float = 0,
        browHeightRight: Float = 0
    ) {
        self.eyeAspectLeft = eyeAspectLeft
        self.eyeAspectRight = eyeAspectRight
        self.eyeClosedLeft = eyeClosedLeft
        self.eyeClosedRight = eyeClosedRight
        self.jawDrop = jawDrop
        self.lipGap = lipGap
        self.mouthWidth = mouthWidth
        self.cornerLiftLeft = cornerLiftLeft
        self.cornerLiftRight = cornerLiftRight
        self.innerBrowHeight = innerBrowHeight
        self.browHeightLeft = browHeightLeft
        self.browHeightRight = browHeightRight
    }

    /// Measures a tracked face. Vertical distances are taken along the face's own vertical axis (perpendicular
    /// to the eye line), so in-plane roll does not change them.
    public init(_ face: FaceObservation) {
        let lm = face.landmarks
        let eyeAxis = lm[45] - lm[36]
        let iod = max(1e-3, (eyeAxis * eyeAxis).sum().squareRoot())
        let ux = eyeAxis / iod  // the face's x axis, toward the person's left
        let uy = PixelPoint(-ux.y, ux.x)  // the face's y axis, downward
        let cosYaw = max(0.5, cos(face.pose.yaw * .pi / 180))
        let faceWidth = iod / cosYaw  // the eye-corner distance the face would show turned to the camera
        func down(_ a: Int, _ b: Int) -> Float { ((lm[b] - lm[a]) * uy).sum() / faceWidth }  // b below a
        func across(_ a: Int, _ b: Int) -> Float { ((lm[b] - lm[a]) * ux).sum() / iod }
        eyeAspectLeft = face.leftEye.aspectRatio
        eyeAspectRight = face.rightEye.aspectRatio
        eyeClosedLeft = face.leftEye.closedProbability
        eyeClosedRight = face.rightEye.closedProbability
        jawDrop = down(30, 8)
        lipGap = (down(61, 67) + down(62, 66) + down(63, 65)) / 3
        mouthWidth = across(48, 54)
        let lipCentre = (lm[51] + lm[57]) / 2
        cornerLiftLeft = ((lipCentre - lm[54]) * uy).sum() / faceWidth
        cornerLiftRight = ((lipCentre - lm[48]) * uy).sum() / faceWidth
        innerBrowHeight = (down(21, 39) + down(22, 42)) / 2
        browHeightLeft = ((lm[44] + lm[43]) / 2 - lm[24]).dot(uy) / faceWidth
        browHeightRight = ((lm[37] + lm[38]) / 2 - lm[19]).dot(uy) / faceWidth
    }
}

extension SIMD2 where Scalar == Float {
    @inline(__always) func dot(_ o: SIMD2<Float>) -> Float { (self * o).sum() }
}
