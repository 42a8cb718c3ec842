import WinkCore

/// Detection cadence and tracking settings.
public struct TrackerSettings: Sendable, Equatable, Codable {
    /// Frames wider than this are shrunk to it for the full-frame face search (pixels). 320 keeps HOG
    /// detection near 5 ms on a 640x480 frame and still finds faces 160 px wide and up.
    public var detectionWidth: Int = 320
    /// The smallest face width to look for, in full-frame pixels (about the outer-eye-corner distance
    /// times 2.2). Faces smaller than `detectionWidth`'s reach are searched for with an upscaled frame
    /// every `smallFaceSearchInterval` frames while no face is tracked.
    public var minimumFaceWidth: Float = 64
    /// How often (in frames without a face) the expensive small-face search runs.
    public var smallFaceSearchInterval: Int = 6
    /// Consecutive frames in which the tracked face may fail detection before it counts as lost, as long
    /// as it still looks like the face last detected (see `minimumSimilarity`).
    public var maximumMisses: Int = 4
    /// When detection misses the tracked face, the normalised cross-correlation between the face box now
    /// and when last detected (24x24 grey patches) below which the face counts as gone at once (a cut, the
    /// face covered or leaving).
    public var minimumSimilarity: Float = 0.6
    /// Whether the source is mirrored (a selfie view): left and right are swapped back so that they stay
    /// the person's own.
    public var mirrored: Bool = false

    public init() {}
}

/// Follows the largest face from frame to frame.
///
/// Each frame: without a tracked face, HOG detection on the shrunk frame (and periodically an upscaled
/// small-face search); with one, HOG detection only in a region around the last box, scaled so the face
/// is about 100 px (about 1 ms), which both confirms the face and gives the 68-point predictor the box
/// shape it was trained on. A face that fails verification for more than `maximumMisses` frames is lost.
///
/// Not thread-safe: one tracker per processing thread.
public final class FaceTracker {
    public var settings: TrackerSettings
    private let detector: FaceDetector
    private let predictor: ShapePredictor
    private var tracked: PixelRect?
    private var misses = 0
    private var framesWithoutFace = 0
    private let template = FacePatch()
    private let current = FacePatch()
    /// Similarity of the face box to the last detected face, when the last detection missed (for tuning).
    public private(set) var lastSimilarity: Float = 1
    /// Detector calls so far (full-frame and region), for the benchmark.
    public private(set) var detections = 0

    /// - Parameter predictor: a loaded 68-point model (see `ShapePredictor(path:)`).
    public init(predictor: ShapePredictor, settings: TrackerSettings = TrackerSettings()) {
        self.predictor = predictor
        self.settings = settings
        detector = FaceDetector()
    }

    /// Forgets the tracked face (for a new source).
    public func reset() {
        tracked = nil
        misses = 0
        framesWithoutFace = 0
    }

    /// The largest face in this frame, or `nil` if none is tracked.
    /// - Throws: `FaceTrackingError.internal` if dlib fails.
    public func process(_ buffer: PixelBuffer) throws -> FaceObservation? {
        var box: PixelRect?
        if let last = tracked {
            box = try verify(last, in: buffer)
            if let found = box {
                misses = 0
                template.sample(buffer, box: found)
            } else {
                misses += 1
                current.sample(buffer, box: last)
                lastSimilarity = current.correlation(template)
                if misses > settings.maximumMisses || lastSimilarity < settings.minimumSimilarity {
                    tracked = nil
                    misses = 0
                    return nil
                }
                box = last
            }
        } else {
            box = try search(buffer)
            if box == nil {
                framesWithoutFace += 1
                return nil
            }
            framesWithoutFace = 0
            template.sample(buffer, box: box!)
        }
        guard let box else { return nil }
        tracked = box
        let landmarks = try predictor.landmarks(in: buffer, box: box)
        var observation = FaceMeasure.observe(landmarks, box: box, in: buffer, scratch: predictor.scratch)
        if settings.mirrored { observation = observation.mirrored(imageWidth: buffer.width) }
        return observation
    }

    /// Every face in the frame (largest first), each with landmarks, measured independently: for stills
    /// and overlays. Uses one x2 upsampling when the frame is small enough, so faces from about 40 px wide
    /// are found.
    public func detectAll(_ buffer: PixelBuffer, upsample: Int = 1) throws -> [FaceObservation] {
        let pixels = buffer.width * buffer.height
        let up = pixels <= 1_500_000 ? upsample : 0
        detections += 1
        let boxes = try detector.detect(in: buffer, scale: 1, upsample: up)
        return try boxes.map { box in
            var o = FaceMeasure.observe(try predictor.landmarks(in: buffer, box: box), box: box, in: buffer,
                                       scratch: predictor.scratch)
            if settings.mirrored { o = o.mirrored(imageWidth: buffer.width) }
            return o
        }
    }

    private func search(_ buffer: PixelBuffer) throws -> PixelRect? {
        let scale = min(1, Float(settings.detectionWidth) / Float(buffer.width))
        detections += 1
        if let face = try detector.detect(in: buffer, scale: scale).first { return face }
        // HOG boxes are about 0.8 face widths; the detector needs boxes of about 80 px.
        let needed = 90 / (0.8 * settings.minimumFaceWidth)
        guard needed > scale * 1.3, framesWithoutFace % max(1, settings.smallFaceSearchInterval) == 0 else {
            return nil
        }
        detections += 1
        let upsample = needed > 2 ? 1 : 0
        let s = min(4, needed / Float(1 << upsample))
        return try detector.detect(in: buffer, scale: s, upsample: upsample).first
    }

    private func verify(_ last: PixelRect, in buffer: PixelBuffer) throws -> PixelRect? {
        let margin = last.width * 0.6
        let region = PixelRect(x: last.x - margin, y: last.y - margin, width: last.width + 2 * margin,
                               height: last.height + 2 * margin)
        let scale = min(4, max(0.05, 100 / last.width))
        detections += 1
        let faces = try detector.detect(in: buffer, region: region, scale: scale)
        // The face whose centre is nearest the last one, if it plausibly is the same face.
        let c = last.center
        let best = faces.min { a, b in
            let da = a.center - c, db = b.center - c
            return (da * da).sum() < (db * db).sum()
        }
        guard let best else { return nil }
        let d = best.center - c
        guard (d * d).sum().squareRoot() < last.width * 0.5, best.width > last.width * 0.6,
              best.width < last.width * 1.6 else { return nil }
        return best
    }
}

extension FaceObservation {
    /// The observation as seen in the un-mirrored image: landmarks flipped and re-indexed, eyes swapped,
    /// yaw and roll negated.
    public func mirrored(imageWidth width: Int) -> FaceObservation {
        var o = self
        o.landmarks = landmarks.mirrored(imageWidth: width)
        o.box.x = Float(width - 1) - box.maxX
        o.leftEye = rightEye
        o.rightEye = leftEye
        o.pose.yaw = -pose.yaw
        o.pose.roll = -pose.roll
        return o
    }
}
