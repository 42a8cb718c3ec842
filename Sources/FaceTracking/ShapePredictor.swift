import CWinkVision
import Foundation
import WinkCore

/// dlib's 68-point shape predictor (`shape_predictor_68_face_landmarks.dat`, Kazemi & Sullivan,
/// "One Millisecond Face Alignment with an Ensemble of Regression Trees", CVPR 2014).
///
/// Evaluated from flat arrays with dlib's own arithmetic (`Sources/CWinkVision/ShapeRegression.cpp`): the
/// same landmarks as dlib's `shape_predictor`, in about half the time, without heap allocation per face.
///
/// Not thread-safe: one instance per thread. Loading takes about 1 s from the model file or about 0.05 s
/// from the model cache (`load(path:cache:)`); the model holds 66 MB.
public final class ShapePredictor: @unchecked Sendable {
    /// The Debian location (package `libdlib-data`).
    public static let debianModelPath = "/usr/share/dlib/shape_predictor_68_face_landmarks.dat"

    let handle: OpaquePointer
    /// The model file the predictor was loaded from.
    public let path: String
    /// 136 floats of scratch space for dlib's output, allocated once.
    let scratch = UnsafeMutableBufferPointer<Float>.allocate(capacity: 136)

    /// Loads and checks the model before any frame is read.
    /// - Throws: `FaceTrackingError` with `.modelMissing`, `.modelUnreadable`, `.modelNotDlib` or
    ///   `.modelWrongParts` (all exit 78), naming `path`.
    public convenience init(path: String) throws {
        self.init(adopting: try Self.loadModelFile(path), path: path)
    }

    /// Takes ownership of a loaded dlib predictor (from the model file or the model cache).
    init(adopting handle: OpaquePointer, path: String) {
        self.handle = handle
        self.path = path
    }

    /// dlib's deserialiser on the model file (about 1 s), with the model-file checks of `init(path:)`.
    static func loadModelFile(_ path: String) throws -> OpaquePointer {
        // A FIFO would block dlib's read for ever (`--model FIFO` hung winkctl and winkd without a word).
        if let reason = nonRegularFileReason(path) {
            throw FaceTrackingError(.modelUnreadable, subject: path, reason: reason)
        }
        var out: OpaquePointer?
        var message = [CChar](repeating: 0, count: 512)
        let status = wv_predictor_load(path, &out, &message, message.count)
        guard status == WV_OK, let out else {
            let code: FaceTrackingErrorCode =
                switch status {
                case WV_MODEL_MISSING: .modelMissing
                case WV_MODEL_UNREADABLE: .modelUnreadable
                case WV_MODEL_WRONG_PARTS: .modelWrongParts
                case WV_MODEL_NOT_DLIB: .modelNotDlib
                default: .internal
                }
            throw FaceTrackingError(code, subject: path, reason: String(cString: message))
        }
        return out
    }

    deinit {
        wv_predictor_destroy(handle)
        scratch.deallocate()
    }

    /// Predicts the 68 landmarks inside `box` (full-frame pixels) on a grey frame.
    /// - Throws: `FaceTrackingError.internal` if dlib fails.
    public func landmarks(in buffer: PixelBuffer, box: PixelRect) throws -> Landmarks {
        let status = wv_predict(
            handle, buffer.gray, Int32(buffer.width), Int32(buffer.height), Int32(buffer.width),
            wv_rect(x: box.x, y: box.y, width: box.width, height: box.height, score: 0),
            scratch.baseAddress, 136)
        guard status == WV_OK else {
            throw FaceTrackingError(.internal, subject: "shape predictor", reason: "failed (status \(status.rawValue))")
        }
        return Landmarks(interleaved: UnsafeBufferPointer(scratch))
    }

    /// The same prediction through dlib's own `shape_predictor::operator()` on the same numbers, to check
    /// `landmarks(in:box:)` against dlib. The first call builds dlib's copy of the model (about 70 MB more,
    /// kept for this instance's life): for tests and benchmarks, never the frame path.
    /// - Throws: `FaceTrackingError.internal` if dlib fails or the box is unusable.
    public func dlibLandmarks(in buffer: PixelBuffer, box: PixelRect) throws -> Landmarks {
        let status = wv_predict_dlib(
            handle, buffer.gray, Int32(buffer.width), Int32(buffer.height),
            Int32(buffer.width),
            wv_rect(x: box.x, y: box.y, width: box.width, height: box.height, score: 0),
            scratch.baseAddress, 136)
        guard status == WV_OK else {
            throw FaceTrackingError(.internal, subject: "shape predictor", reason: "failed (status \(status.rawValue))")
        }
        return Landmarks(interleaved: UnsafeBufferPointer(scratch))
    }
}

/// dlib's HOG frontal face detector (Dalal & Triggs HOG features with a linear SVM, as trained by dlib's
/// `get_frontal_face_detector()`). Not thread-safe: one instance per thread.
public final class FaceDetector: @unchecked Sendable {
    let handle: OpaquePointer
    private var boxes = [wv_rect](repeating: wv_rect(), count: 16)

    /// Creates dlib's `get_frontal_face_detector()`; a failure (out of memory) ends the process.
    public init() {
        guard let h = wv_detector_create() else { fatalError("out of memory creating the face detector") }
        handle = h
    }

    deinit { wv_detector_destroy(handle) }

    /// Faces found in `region` of the grey frame (full frame when `nil`), as full-frame pixel boxes,
    /// largest first, at most 16.
    ///
    /// - Parameters:
    ///   - scale: resize factor applied to the region before detection (0 < scale <= 4). dlib finds boxes of
    ///     about 80 px or more after scaling.
    ///   - upsample: further x2 pyramid steps (0...3).
    ///   - maximumWidth: boxes wider than about this (frame pixels) are not looked for: dlib's pyramid
    ///     stops at the last level whose nominal boxes are at most this wide (see `wv_detect`), saving the
    ///     time of its smaller levels; the levels searched find what they find without it (`nil`: every
    ///     size).
    ///   - equalize: equalise the scaled image's contrast locally first (CLAHE, see `wv_detect`): finds a face
    ///     washed out by a bright background.
    /// - Throws: `FaceTrackingError.internal` if dlib fails.
    public func detect(
        in buffer: PixelBuffer, region: PixelRect? = nil, scale: Float, upsample: Int = 0,
        adjustThreshold: Float = 0, maximumWidth: Float? = nil, equalize: Bool = false
    ) throws -> [PixelRect] {
        var x0 = 0
        var y0 = 0
        var x1 = buffer.width
        var y1 = buffer.height
        if let r = region {
            x0 = max(0, Int(r.minX.rounded(.down)))
            y0 = max(0, Int(r.minY.rounded(.down)))
            x1 = min(buffer.width, Int(r.maxX.rounded(.up)))
            y1 = min(buffer.height, Int(r.maxY.rounded(.up)))
            guard x1 - x0 >= 8, y1 - y0 >= 8 else { return [] }
        }
        var count: Int32 = 0
        let origin = buffer.gray + (y0 * buffer.width + x0)
        let status = boxes.withUnsafeMutableBufferPointer { out in
            wv_detect(
                handle, origin, Int32(x1 - x0), Int32(y1 - y0), Int32(buffer.width), scale, Int32(upsample),
                adjustThreshold, maximumWidth ?? 0, equalize ? 1 : 0, out.baseAddress, Int32(out.count), &count)
        }
        guard status == WV_OK else {
            throw FaceTrackingError(.internal, subject: "face detector", reason: "failed (status \(status.rawValue))")
        }
        return (0..<Int(count)).map {
            let b = boxes[$0]
            return PixelRect(x: b.x + Float(x0), y: b.y + Float(y0), width: b.width, height: b.height)
        }
    }
}

/// A small normalised grey patch of a face box, for checking that a tracked face still looks the same.
///
/// Holds `size` x `size` floats allocated once. Not thread-safe.
final class FacePatch {
    static let size = 24
    let values = UnsafeMutableBufferPointer<Float>.allocate(capacity: size * size)
    private(set) var valid = false

    deinit { values.deallocate() }

    /// Samples `box` of the frame; false (and invalid) when the box is outside the frame.
    @discardableResult
    func sample(_ buffer: PixelBuffer, box: PixelRect) -> Bool {
        let status = wv_sample_patch(
            buffer.gray, Int32(buffer.width), Int32(buffer.height), Int32(buffer.width),
            wv_rect(x: box.x, y: box.y, width: box.width, height: box.height, score: 0),
            Int32(Self.size), values.baseAddress)
        valid = status == WV_OK
        return valid
    }

    /// Normalised cross-correlation with `other`, -1...1 (0 when either is invalid).
    func correlation(_ other: FacePatch) -> Float {
        guard valid, other.valid else { return 0 }
        var sum: Float = 0
        for i in 0..<values.count { sum += values[i] * other.values[i] }
        return sum
    }
}

/// Eye evidence, face brightness and head pose measured from a grey frame and landmarks.
enum FaceMeasure {
    /// - Parameter scratch: 136 floats of caller-owned space.
    static func observe(
        _ landmarks: Landmarks, box: PixelRect, in buffer: PixelBuffer,
        scratch: UnsafeMutableBufferPointer<Float>
    ) -> FaceObservation {
        var measure = wv_face_measure()
        for i in 0..<68 {
            scratch[2 * i] = landmarks[i].x
            scratch[2 * i + 1] = landmarks[i].y
        }
        _ = wv_measure_face(
            buffer.gray, Int32(buffer.width), Int32(buffer.height), Int32(buffer.width),
            scratch.baseAddress, &measure)
        let pose = headPose(scratch.baseAddress!, width: buffer.width, height: buffer.height) ?? .frontal
        return FaceObservation(
            landmarks: landmarks, box: box, pose: pose,
            leftEye: EyeEvidence(
                closedProbability: EyeEvidence.probability(logit: measure.left_eye.closed_logit),
                aspectRatio: measure.left_eye.aspect_ratio),
            rightEye: EyeEvidence(
                closedProbability: EyeEvidence.probability(logit: measure.right_eye.closed_logit),
                aspectRatio: measure.right_eye.aspect_ratio),
            quality: FaceQuality(
                interocularPixels: landmarks.distance(36, 45),
                medianBrightness: measure.median_brightness,
                visibleFraction: measure.visible_fraction, eyesVisibleFraction: measure.eyes_visible_fraction,
                mouthVisibleFraction: measure.mouth_visible_fraction))
    }
}

extension FaceMeasure {
    /// Head pose from 68 landmarks (`xy`: 136 floats, x0, y0, x1, ..., frame pixels) in a `width` x
    /// `height` frame (see `wv_head_pose`); `nil` if the solver fails. `opencv` solves with OpenCV's
    /// `solvePnP` instead, to check winkd's solver against it (tests only: it allocates). Thread-safe.
    static func headPose(_ xy: UnsafePointer<Float>, width: Int, height: Int, opencv: Bool = false) -> HeadPose? {
        var yaw: Float = 0
        var pitch: Float = 0
        var roll: Float = 0
        let status = (opencv ? wv_head_pose_opencv : wv_head_pose)(xy, Int32(width), Int32(height), &yaw, &pitch, &roll)
        return status == WV_OK ? HeadPose(yaw: yaw, pitch: pitch, roll: roll) : nil
    }
}

/// The eye-state model in use (`wv_eye_closure`): the built-in one, or a retrained one loaded from a file.
public enum EyeStateModel {
    /// Uses the model in `path` for the rest of the process instead of the built-in one: a JSON object
    /// `{"weights": [...], "bias": b}` with `EyeStateFeatures.count` weights, as Scripts/train_eye_model.py
    /// writes with `--write-json`. For evaluating a retrained model without rebuilding; winkd itself only
    /// ever uses the built-in model. Call before frames are processed.
    /// - Throws: `FaceTrackingError` `.eyeModelInvalid` (exit 78) naming `path` and what is wrong.
    public static func load(path: String) throws {
        func fail(_ reason: String) -> FaceTrackingError {
            FaceTrackingError(.eyeModelInvalid, subject: path, reason: reason)
        }
        if let reason = nonRegularFileReason(path) { throw fail(reason) }
        guard let data = FileManager.default.contents(atPath: path) else {
            guard FileManager.default.fileExists(atPath: path) else { throw fail("no such eye-state model file") }
            throw fail("cannot be read" + readFailureNote(path))
        }
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw fail("not a JSON object")
        }
        guard let weights = object["weights"] as? [NSNumber], let bias = object["bias"] as? NSNumber else {
            throw fail("expected \"weights\" (an array of numbers) and \"bias\" (a number)")
        }
        guard weights.count == EyeStateFeatures.count else {
            throw fail("expected \(EyeStateFeatures.count) weights, got \(weights.count)")
        }
        let values = weights.map(\.floatValue) + [bias.floatValue]
        guard wv_eye_model_set(values, Int32(values.count)) == WV_OK else {
            throw fail("weights must be finite numbers")
        }
    }
}

/// The eye-state model's inputs (`wv_eye_patches`, `wv_eye_features`): for training it
/// (`winkctl analyze --eye-features`, Scripts/train_eye_model.py) on exactly what winkd computes.
public enum EyeStateFeatures {
    /// Floats per eye.
    public static var count: Int { Int(wv_eye_feature_count()) }

    /// The features of the person's left and right eye of `landmarks` in `buffer`, or `nil` for a
    /// degenerate eye. Allocates its result (not for the frame path).
    public static func of(_ landmarks: Landmarks, in buffer: PixelBuffer) -> (left: [Float], right: [Float])? {
        var xy = [Float](repeating: 0, count: 136)
        for i in 0..<68 {
            xy[2 * i] = landmarks[i].x
            xy[2 * i + 1] = landmarks[i].y
        }
        let size = Int(WV_EYE_PATCH_WIDTH * WV_EYE_PATCH_HEIGHT)
        var left = [UInt8](repeating: 0, count: size)
        var right = left
        guard
            wv_eye_patches(
                buffer.gray, Int32(buffer.width), Int32(buffer.height), Int32(buffer.width), xy,
                &left, &right) == WV_OK
        else { return nil }
        var fl = [Float](repeating: 0, count: count)
        var fr = fl
        guard wv_eye_features(left, &fl, Int32(count)) == WV_OK,
            wv_eye_features(right, &fr, Int32(count)) == WV_OK
        else { return nil }
        return (fl, fr)
    }
}
