import CWinkVision
#if canImport(Glibc)
import Glibc
#endif
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
    /// Frames between region detections while a face is tracked (1 = detect every frame). In between, the
    /// predictor's box comes from the last landmarks.
    public var verifyInterval: Int = 8
    /// Whether the upright crop's contrast is normalised before detection and landmarks (see
    /// `wv_normalize_contrast`): helps dim, noisy faces.
    public var normalizeContrast: Bool = true
    /// Similarity to the last detected face below which tracking stops trusting itself and detects at once.
    public var trackingSimilarity: Float = 0.8
    /// Whether the source is mirrored (a selfie view): left and right are swapped back so that they stay
    /// the person's own. The one place this is kept: a configuration's top-level `mirrored` and the
    /// `--mirrored` flags write it, the overlay reads it from here. Not one of the `tracker` section's
    /// JSON keys (`{"tracker":{"mirrored":true}}` is an unknown key, not a second spelling).
    public var mirrored: Bool = false

    /// The defaults above; not mirrored.
    public init() {}

    /// The keys of a configuration's `tracker` section: every setting but `mirrored`.
    enum CodingKeys: String, CodingKey {
        case detectionWidth, minimumFaceWidth, smallFaceSearchInterval, maximumMisses, minimumSimilarity,
            verifyInterval, normalizeContrast, trackingSimilarity
    }
}

/// Follows the largest face from frame to frame.
///
/// Without a tracked face, HOG detection runs on the shrunk frame (and periodically an upscaled small-face
/// search). With one, the predictor's box comes from the last frame's landmarks (shaped like the last
/// detector box, which is what dlib's predictor was trained on), and HOG detection runs only in a region
/// around the face, scaled so the face is about 100 px: every `verifyInterval` frames (deferred until the
/// frame's lines are out: `completeFrame`), or at once when the face's 24x24 grey patch stops correlating
/// with the last detected one (`trackingSimilarity`). A face
/// that fails detection for more than `maximumMisses` frames, or that no longer looks like itself
/// (`minimumSimilarity`), is lost.
///
/// Not thread-safe: one tracker per processing thread. Creating one switches OpenCV's own worker pool off
/// for the process (`wv_opencv_single_thread`).
public final class FaceTracker {
    /// The tracker's tunables; may be changed between frames (from the tracker's one thread).
    public var settings: TrackerSettings
    private let detector: FaceDetector
    private let predictor: ShapePredictor
    private var tracked: TrackedFace?
    private var misses = 0
    private var framesWithoutFace = 0
    private var framesSinceDetection = 0
    /// The last detector box relative to its landmarks' bounding box: (dx, dy) in box widths/heights,
    /// then width and height ratios. dlib's predictor was trained on detector boxes, so tracked boxes keep
    /// that shape.
    private var anchor = SIMD4<Float>(0.05, 0.2, 0.9, 0.8)
    private let template = FacePatch()
    /// The tracked face seen upright at a fixed size (`TrackedFace.cropSize` square).
    private let crop: PixelBuffer = {
        let b = PixelBuffer()
        b.resize(width: TrackedFace.cropSize, height: TrackedFace.cropSize)
        return b
    }()
    private let current = FacePatch()
    /// Similarity of the face box to the last detected face, when the last detection missed (for tuning).
    public private(set) var lastSimilarity: Float = 1
    /// Detector calls so far (full-frame and region), for the benchmark.
    public private(set) var detections = 0
    /// The most faces one full-frame search found (the largest is followed), for commands that must know
    /// whose face they measured (`winkctl calibrate`). Searches run while no face is tracked, so a second
    /// face arriving during tracking is not counted.
    public private(set) var mostFacesFound = 0
    /// Where the last `process` call spent its time, for the benchmark.
    public private(set) var timings = StageTimings()
    private let clock = SystemClock()
    /// A routine region check deferred to `completeFrame`: the face the frame was tracked with (its box is
    /// `cropBox`; its upright crop stays in `crop` until the next `process`).
    private var pending: TrackedFace?

    /// - Parameter predictor: a loaded 68-point model (see `ShapePredictor(path:)`).
    public init(predictor: ShapePredictor, settings: TrackerSettings = TrackerSettings()) {
        self.predictor = predictor
        self.settings = settings
        detector = FaceDetector()
        wv_opencv_single_thread()
    }

    /// Forgets the tracked face (for a new source).
    public func reset() {
        pending = nil
        tracked = nil
        misses = 0
        framesWithoutFace = 0
    }

    /// The largest face in this frame, or `nil` if none is tracked.
    /// - Throws: `FaceTrackingError.internal` if dlib fails.
    public func process(_ buffer: PixelBuffer) throws -> FaceObservation? {
        timings = StageTimings()
        try completeFrame()  // the last frame's deferred region check, if the caller did not run it
        guard let state = tracked else {
            guard let found = try search(buffer) else {
                framesWithoutFace += 1
                return nil
            }
            framesWithoutFace = 0
            let face = TrackedFace(center: found.center, width: found.width, height: found.height, roll: 0)
            warp(buffer, around: face)
            return try observe(buffer, face: face, box: face.cropBox, detected: true)
        }
        warp(buffer, around: state)
        let predicted = state.cropBox
        framesSinceDetection += 1
        // Detect at once if the face no longer looks like the one last detected (a cut, the face covered
        // or leaving); otherwise only every `verifyInterval` frames, after the frame's lines are out.
        compare(predicted)
        let looksDifferent = lastSimilarity < settings.trackingSimilarity
        guard looksDifferent else {
            let observation = try observe(buffer, face: state, box: predicted, detected: false)
            if framesSinceDetection >= max(1, settings.verifyInterval) {
                pending = state
            }
            return observation
        }
        if let found = try verifyInCrop(predicted) {
            misses = 0
            return try observe(buffer, face: state, box: found, detected: true)
        }
        misses += 1
        if misses > settings.maximumMisses || lastSimilarity < settings.minimumSimilarity {
            tracked = nil
            misses = 0
            return nil
        }
        return try observe(buffer, face: state, box: predicted, detected: false)
    }

    /// Runs the region check deferred by the last `process` call, if any: on that frame's upright crop,
    /// HOG detection around the tracked box. A face found there re-anchors tracking for the next frame
    /// (landmarks predicted again in the detector's box, and the next box shaped from them, as if the
    /// check had not been deferred); none found counts as a miss, and a miss too many or a face that
    /// no longer looks like itself ends tracking (the next frame searches the whole frame). The daemon
    /// calls this after publishing a frame's lines; `process` calls it first if nobody did, so the results
    /// are the same either way. Adds its detector time to `timings.detection`.
    /// - Throws: `FaceTrackingError.internal` if dlib fails.
    public func completeFrame() throws {
        guard let face = pending else { return }
        pending = nil
        if let found = try verifyInCrop(face.cropBox) {
            misses = 0
            // Landmarks from the detector's box, as an undeferred check would have tracked on from.
            let t0 = clock.nanoseconds()
            let inCrop = try predictor.landmarks(in: crop, box: found)
            timings.landmarks += Double(clock.nanoseconds() - t0) / 1e9
            learn(box: found, inCrop: inCrop)
            advance(face: face, inCrop: inCrop)
            return
        }
        misses += 1
        // `lastSimilarity` is already this crop's at `face.cropBox` (compared by `process`).
        if misses > settings.maximumMisses || lastSimilarity < settings.minimumSimilarity {
            tracked = nil
            misses = 0
        }
    }

    /// Remembers how the detector's `box` sits on the landmarks and what the face looks like there.
    private func learn(box: PixelRect, inCrop: Landmarks) {
        framesSinceDetection = 0
        template.sample(crop, box: box)
        let extent = inCrop.boundingBox(.face)
        if extent.width > 1 && extent.height > 1 {
            anchor = SIMD4((box.x - extent.x) / extent.width, (box.y - extent.y) / extent.height,
                           box.width / extent.width, box.height / extent.height)
        }
    }

    /// The next frame's tracked face: the detector-shaped box around these crop landmarks, rolled by the
    /// eye line.
    private func advance(face: TrackedFace, inCrop: Landmarks) {
        let extent = inCrop.boundingBox(.face)
        let next = PixelRect(x: extent.x + anchor[0] * extent.width, y: extent.y + anchor[1] * extent.height,
                             width: anchor[2] * extent.width, height: anchor[3] * extent.height)
        let eyeLine = inCrop[45] - inCrop[36]
        let scale = face.scale
        tracked = TrackedFace(center: face.toFrame(next.center), width: next.width / scale,
                              height: next.height / scale, roll: face.roll + atan2(eyeLine.y, eyeLine.x))
    }

    /// Correlates the crop's patch at `box` with the last detected face into `lastSimilarity`.
    private func compare(_ box: PixelRect) {
        current.sample(crop, box: box)
        lastSimilarity = current.correlation(template)
    }

    /// Looks at `face` upright and at a fixed size: fills `crop` through the similarity transform of
    /// `TrackedFace.cropToFrame`.
    private func warp(_ buffer: PixelBuffer, around face: TrackedFace) {
        AffineWarp.warp(buffer, matrix: face.cropToFrame, into: crop)
        if settings.normalizeContrast {
            let b = face.cropBox
            _ = wv_normalize_contrast(crop.gray, Int32(TrackedFace.cropSize), Int32(TrackedFace.cropSize),
                                      wv_rect(x: b.x, y: b.y, width: b.width, height: b.height, score: 0))
        }
    }

    /// Landmarks predicted in `box` of the upright crop, mapped back to the frame. When the box came from
    /// the detector, remember how it sits on the landmarks and what the face looks like, so the next frames
    /// can be tracked without detection.
    private func observe(_ buffer: PixelBuffer, face: TrackedFace, box: PixelRect,
                         detected: Bool) throws -> FaceObservation {
        let t0 = clock.nanoseconds()
        let inCrop = try predictor.landmarks(in: crop, box: box)
        let t1 = clock.nanoseconds()
        defer {
            timings.landmarks += Double(t1 - t0) / 1e9
            timings.measures += Double(clock.nanoseconds() - t1) / 1e9
        }
        if detected { learn(box: box, inCrop: inCrop) }
        var landmarks = inCrop
        for i in 0..<Landmarks.count { landmarks[i] = face.toFrame(inCrop[i]) }
        advance(face: face, inCrop: inCrop)
        let scale = face.scale, center = face.toFrame(box.center)
        let frameBox = PixelRect(x: center.x - box.width / scale / 2, y: center.y - box.height / scale / 2,
                                 width: box.width / scale, height: box.height / scale)
        var observation = FaceMeasure.observe(landmarks, box: frameBox, in: buffer, scratch: predictor.scratch)
        if settings.mirrored { observation = observation.mirrored(imageWidth: buffer.width) }
        return observation
    }

    /// Half the side of the square searched by `verifyInCrop`, in predicted-box widths.
    static let verifyReach: Float = 1.0
    /// Widest face `verifyInCrop` accepts as the tracked one, in predicted-box widths.
    static let verifyMaximumGrowth: Float = 1.6

    /// HOG detection in the upright crop; the face nearest the predicted box, if plausibly the same face.
    private func verifyInCrop(_ predicted: PixelRect) throws -> PixelRect? {
        detections += 1
        let t0 = clock.nanoseconds()
        // Only around the predicted box: HOG's cost is proportional to the pixels searched.
        let c0 = predicted.center, reach = predicted.width * Self.verifyReach
        let region = PixelRect(x: c0.x - reach, y: c0.y - reach, width: 2 * reach, height: 2 * reach)
        // Boxes 1.6 predicted widths or wider are not accepted below, so the pyramid stops short of them.
        var faces = try detector.detect(in: crop, region: region, scale: 0.7,
                                        maximumWidth: predicted.width * Self.verifyMaximumGrowth)
        // A face washed out by backlight (found by the equalised search) is checked the same way; a miss only.
        if faces.isEmpty {
            faces = try detector.detect(in: crop, region: region, scale: 0.7,
                                        maximumWidth: predicted.width * Self.verifyMaximumGrowth, equalize: true)
        }
        timings.detection += Double(clock.nanoseconds() - t0) / 1e9
        let c = predicted.center
        let best = faces.min { a, b in
            let da = a.center - c, db = b.center - c
            return (da * da).sum() < (db * db).sum()
        }
        guard let best else { return nil }
        let d = best.center - c
        guard (d * d).sum().squareRoot() < predicted.width * 0.5, best.width > predicted.width * 0.6,
              best.width < predicted.width * Self.verifyMaximumGrowth else { return nil }
        return best
    }

    /// Every face in the frame (largest first), each with landmarks, measured independently: for stills
    /// and overlays. Uses one x2 upsampling when the frame is small enough, so faces from about 40 px wide
    /// are found.
    /// - Parameter upsample: dlib pyramid upsamplings (0...3, each x2), used only for frames of at most 1.5
    ///   megapixels (0 above). Landmarks in full-frame pixels; left/right swapped back when `settings.mirrored`.
    /// - Throws: `FaceTrackingError.internal` (exit 70) when dlib or OpenCV fails on the frame.
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
        let t0 = clock.nanoseconds()
        defer { timings.detection += Double(clock.nanoseconds() - t0) / 1e9 }
        let scale = min(1, Float(settings.detectionWidth) / Float(buffer.width))
        detections += 1
        let faces = try detector.detect(in: buffer, scale: scale)
        mostFacesFound = max(mostFacesFound, faces.count)
        if let face = faces.first { return face }
        // A face washed out by a bright background (a window behind): searched again with the contrast
        // equalised, every smallFaceSearchInterval frames without a face, half-way between the small-face
        // searches (an empty scene costs a second search on those frames only).
        let interval = max(1, settings.smallFaceSearchInterval)
        if framesWithoutFace % interval == interval / 2 {
            detections += 1
            let equalized = try detector.detect(in: buffer, scale: scale, equalize: true)
            mostFacesFound = max(mostFacesFound, equalized.count)
            if let face = equalized.first { return face }
        }
        // HOG boxes are about 0.8 face widths; the detector needs boxes of about 80 px.
        let needed = 90 / (0.8 * settings.minimumFaceWidth)
        guard needed > scale * 1.3, framesWithoutFace % interval == 0 else {
            return nil
        }
        detections += 1
        let upsample = needed > 2 ? 1 : 0
        let s = min(4, needed / Float(1 << upsample))
        let small = try detector.detect(in: buffer, scale: s, upsample: upsample)
        mostFacesFound = max(mostFacesFound, small.count)
        return small.first
    }
}

/// Seconds one `FaceTracker.process` call spent per stage (wall time on `CLOCK_MONOTONIC`).
public struct StageTimings: Sendable, Equatable {
    /// HOG face detection (full-frame search or the region check).
    public var detection: Double = 0
    /// The 68-point predictor (in the upright crop).
    public var landmarks: Double = 0
    /// Eye pixel evidence, face brightness and head pose.
    public var measures: Double = 0
    /// Every stage 0 seconds.
    public init() {}
}

/// Where a tracked face is: the centre and size of its detector-shaped box in frame pixels, and its roll
/// (radians, the angle of the eye line 36->45 in the image, positive clockwise on screen).
struct TrackedFace {
    /// Side of the square upright crop, in pixels.
    static let cropSize = 320
    /// Width of the face's box in the crop, in pixels: large enough for dlib's HOG window (80 px) at the
    /// 0.7 detection scale, small enough to keep detection and warping cheap.
    static let cropFaceWidth: Float = 140

    var center: PixelPoint
    var width: Float
    var height: Float
    var roll: Float

    /// Crop pixels per frame pixel.
    var scale: Float { Self.cropFaceWidth / max(width, 1) }

    /// The face's box in crop coordinates (centred).
    var cropBox: PixelRect {
        let s = scale, half = Float(Self.cropSize) / 2
        return PixelRect(x: half - width * s / 2, y: half - height * s / 2, width: width * s, height: height * s)
    }

    /// Row-major 2x3 affine map from crop pixels to frame pixels: p = c + R(roll) (q - N/2) / s.
    var cropToFrame: (Float, Float, Float, Float, Float, Float) {
        let s = scale, c = cos(roll), n = sin(roll), h = Float(Self.cropSize) / 2
        return (c / s, -n / s, center.x - (c - n) * h / s, n / s, c / s, center.y - (n + c) * h / s)
    }

    /// A crop point in frame pixels.
    func toFrame(_ q: PixelPoint) -> PixelPoint {
        let s = scale, c = cos(roll), n = sin(roll), h = Float(Self.cropSize) / 2
        let d = (q - PixelPoint(h, h)) / s
        return center + PixelPoint(c * d.x - n * d.y, n * d.x + c * d.y)
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

/// Bilinear resampling of a grey frame through an affine map (see `wv_warp_affine`).
enum AffineWarp {
    /// Fills `out` (its current size) with `buffer` seen through `matrix`, the row-major 2x3 affine map
    /// from `out`'s pixel coordinates to `buffer`'s (bilinear, border replicated): byte for byte what
    /// OpenCV's `warpAffine` gives, or OpenCV's own result when `opencv` is true (for tests; allocates).
    /// Thread-safe for distinct `out` buffers; no heap allocation (outputs up to 1024 px wide).
    /// - Returns: false if the C call rejected its arguments.
    @discardableResult
    static func warp(_ buffer: PixelBuffer, matrix: (Float, Float, Float, Float, Float, Float), into out: PixelBuffer,
                     opencv: Bool = false) -> Bool {
        var m = matrix
        return withUnsafePointer(to: &m) { p in
            p.withMemoryRebound(to: Float.self, capacity: 6) { m in
                (opencv ? wv_warp_affine_opencv : wv_warp_affine)(
                    buffer.gray, Int32(buffer.width), Int32(buffer.height), Int32(buffer.width), m,
                    out.gray, Int32(out.width), Int32(out.height)) == WV_OK
            }
        }
    }
}
