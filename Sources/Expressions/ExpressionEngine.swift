import WinkCore

/// Face-quality limits: outside them no eye or mouth event starts, and running ones end.
public struct QualityGate: Sendable, Equatable, Codable {
    /// Largest |yaw| in degrees at which the mouth is still measured (beyond, the cheek starts to hide the
    /// far mouth corner). The yaw is the rigid points' (`wv_head_pose`): on the people set any limit from
    /// 24 to 40 degrees scores the same.
    public var maximumYaw: Float = 30
    /// Largest |yaw| in degrees at which the eyes are still measured. The eye-state model judges each eye
    /// from its own pixels and still sees a blink on a face turned 45 degrees (on the people set, 4 of 54
    /// blinks come with the head turned 30-42 degrees).
    public var maximumEyeYaw: Float = 45
    /// Largest |pitch| in degrees.
    public var maximumPitch: Float = 25
    /// Smallest outer-eye-corner distance in pixels (about a 60 px wide face).
    public var minimumInterocular: Float = 24
    /// Darkest usable face (median grey level 0...255).
    public var minimumBrightness: Float = 25
    /// Smallest fraction of the face region a gate needs inside the frame: the brows and eyes for the eye
    /// gate, the chin, nose, eyes and mouth for the mouth gate (`FaceQuality`). A face whose chin is cut off
    /// by the bottom of the frame, as close to a webcam, is still measured for its eyes.
    public var minimumVisible: Float = 0.92
    /// Seconds a present face may go unseen (a bad, dark or blank frame, a hand passing) before it counts
    /// as lost. Meanwhile every row keeps its state (a held smile, and a key held for it, stays held);
    /// `faceLost` then carries the first frame without the face. 0.1 s is three frames at 30 fps.
    public var faceLostGrace: Double = 0.1
    /// Seconds a present face may stay behind dark or blank frames (a covered lens, the lights off) before it
    /// counts as lost, dated at the first such frame. Darkness is not "no face" for a moment (a camera's
    /// exposure flicker, a few black frames between scenes keep the face and what it does), but a smile
    /// held when the lens was covered held its key down for as long as the dark lasted. 2 s lets a lens
    /// flicker pass without a faceLost storm: at most one loss per 2 s of darkness.
    public var darkFaceLostAfter: Double = 2
    /// The defaults above.
    public init() {}

    /// The gates open for `o`.
    public func gates(for o: FaceObservation) -> AnalyzerTable.Gates {
        let q = o.quality
        let ok =
            abs(o.pose.pitch) <= maximumPitch
            && q.interocularPixels >= minimumInterocular && q.medianBrightness >= minimumBrightness
        return AnalyzerTable.Gates(
            eyes: ok && abs(o.pose.yaw) <= maximumEyeYaw && q.eyesVisibleFraction >= minimumVisible,
            mouth: ok && abs(o.pose.yaw) <= maximumYaw && q.mouthVisibleFraction >= minimumVisible)
    }
}

/// The expression stage: face events, calibration, coefficients and the analyzer table, frame by frame.
///
/// Call `process(frame:face:)` once per frame, with the tracked face or `nil`. Events are appended to
/// `events` (cleared at the start of each call; the array's storage is reused). Not thread-safe.
public final class ExpressionEngine {
    /// The analyzer table (carried across a reload: whole with the same rows, else each unchanged row).
    public let table: AnalyzerTable
    /// The coefficient model in use.
    public let model: CoefficientModel
    /// The face-quality limits in use.
    public let gate: QualityGate
    /// The running neutral (not thread-safe; owned by this engine's thread).
    public let calibration: Calibration
    /// Events decided by the last `process` call.
    public private(set) var events: [ExpressionEvent] = []
    /// Coefficients of the last frame with a face.
    public private(set) var coefficients = BlendShapeCoefficients()
    /// Head pose of the last frame with a face.
    public private(set) var pose = HeadPose.frontal
    /// Raw measures of the last frame with a face.
    public private(set) var measures = FaceMeasures()
    /// Whether a face is present (it may be unseen for up to `QualityGate.faceLostGrace`).
    public private(set) var facePresent = false
    /// Whether the last processed frame showed the face (and so gave fresh `coefficients`).
    public private(set) var faceInFrame = false
    /// The first frame of the current run without the face, while it is within the grace period.
    private var unseenSince: FrameInfo?
    /// The first of the skipped (dark or blank) frames since the face was last seen, if any.
    private var hiddenSince: FrameInfo?
    /// The first frame without the face when it was last lost (`faceLost`'s frame), until a face is found.
    private var lostSince: FrameInfo?

    /// A fresh engine, no face present, every row idle.
    public init(
        rows: [AnalyzerRow], model: CoefficientModel = CoefficientModel(), gate: QualityGate = QualityGate(),
        calibration: Calibration = Calibration()
    ) {
        table = AnalyzerTable(rows: rows)
        self.model = model
        self.gate = gate
        self.calibration = calibration
        events.reserveCapacity(16)
    }

    /// An engine with a reloaded configuration that carries on from `old` (a SIGHUP reload between two
    /// frames): the face stays present, unseen or lost as it was, with no `faceLost`/`faceFound` for the
    /// reload. With the same rows (`AnalyzerRow` equality, order included) the analyzer table itself carries
    /// on; with other rows, each row that is unchanged keeps its state (a held smile stays held when only the
    /// wink rows changed), while a changed or removed row's held expression ends at `frame` (its `ended`
    /// event, with the row's last value, is in `events`) and a new or changed row starts idle
    /// (`AnalyzerTable.init(rows:continuing:frame:into:)`). Pass `old.calibration` to keep what was learned
    /// of the face (the caller does when the calibration settings and the prior are the same).
    public init(
        continuing old: ExpressionEngine, rows: [AnalyzerRow], model: CoefficientModel, gate: QualityGate,
        calibration: Calibration, frame: FrameInfo
    ) {
        if old.table.rows == rows {
            table = old.table
        } else {
            table = AnalyzerTable(rows: rows, continuing: old.table, frame: frame, into: &events)
        }
        self.model = model
        self.gate = gate
        self.calibration = calibration
        events.reserveCapacity(16)
        coefficients = old.coefficients
        pose = old.pose
        measures = old.measures
        facePresent = old.facePresent
        faceInFrame = old.faceInFrame
        unseenSince = old.unseenSince
        hiddenSince = old.hiddenSince
        lostSince = old.lostSince
    }

    /// Advances by one frame.
    /// - Parameter instant: the frame is a still image (see `AnalyzerTable.step(instant:)`).
    /// - Returns: whether this frame had a face (and so fresh `coefficients`).
    /// A frame without the face starts (or continues) the grace period; the face is lost once it has been
    /// unseen for `QualityGate.faceLostGrace` seconds, or at once for a still image.
    @discardableResult
    public func process(frame: FrameInfo, face: FaceObservation?, instant: Bool = false) -> Bool {
        events.removeAll(keepingCapacity: true)
        faceInFrame = face != nil
        guard let face else {
            guard facePresent else { return false }
            let since = unseenSince ?? hiddenSince ?? frame
            unseenSince = since
            // Time going backwards (a looped file) or a still ends the grace at once.
            if instant || Self.elapsed(from: since, to: frame, reaches: gate.faceLostGrace) {
                loseFace(at: since)
            }
            return false
        }
        unseenSince = nil
        hiddenSince = nil
        if !facePresent {
            facePresent = true
            // Away long enough to be somebody else (or a new source: time went back): learn them afresh.
            let forgetAfter = calibration.settings.forgetAfterAbsence
            if let lost = lostSince, Self.elapsed(from: lost, to: frame, reaches: forgetAfter) {
                calibration.reset()
            }
            lostSince = nil
            events.append(
                ExpressionEvent(
                    event: EventName.faceFound, phase: nil, frame: frame.index,
                    time: rounded(frame.time, places: 3), tMonoNs: frame.monotonicNanoseconds))
        }
        let m = FaceMeasures(face)
        let gates = gate.gates(for: face)
        // A still image is one instant of unknown expression: it says nothing about the neutral.
        // A face in the middle of an expression (a row pending or active) teaches the neutral slowly.
        if gates == .open && !instant { calibration.observe(m, time: frame.time, expressive: table.isExpressing) }
        measures = m
        pose = face.pose
        coefficients = model.coefficients(m, neutral: calibration.neutral)
        table.step(frame: frame, coefficients: coefficients, gates: gates, instant: instant, into: &events)
        return true
    }

    /// `frame` could not show a face (dark or blank) and was skipped: nothing changes and no event is
    /// decided (darkness is not "no face"), but if the input ends before the face is seen again it is lost
    /// from this frame on (`endOfInput`), as it is once the dark has lasted `QualityGate.darkFaceLostAfter`
    /// (then `events` holds the ends and `faceLost`).
    public func skip(frame: FrameInfo) {
        events.removeAll(keepingCapacity: true)
        faceInFrame = false
        guard facePresent else { return }
        if hiddenSince == nil && unseenSince == nil { hiddenSince = frame }
        // Dark for `darkFaceLostAfter` (or time went backwards: a looped file): the face is lost after all.
        if let since = unseenSince ?? hiddenSince,
           Self.elapsed(from: since, to: frame, reaches: gate.darkFaceLostAfter) {
            loseFace(at: since)
        }
    }

    /// Whether `seconds` have passed from `start` to `frame` (to within 1 ns of rounding), or time went back
    /// (a looped file, a new source), which ends any wait at once.
    private static func elapsed(from start: FrameInfo, to frame: FrameInfo, reaches seconds: Double) -> Bool {
        frame.time < start.time || frame.time - start.time >= seconds - 1e-9
    }

    /// The input ended: a face not seen since some frame (unseen within the grace period, or behind dark or
    /// blank frames, as in a recording that ends on black) is lost now, dated at that frame; a face still in
    /// view stays. `events` holds what this decided.
    public func endOfInput() {
        events.removeAll(keepingCapacity: true)
        faceInFrame = false
        if facePresent, let since = unseenSince ?? hiddenSince { loseFace(at: since) }
    }

    /// Ends a present face now, without waiting out the grace period (the source ended or failed, the
    /// configuration changed): held rows end and `faceLost` is appended to `events` (cleared first),
    /// dated at the first frame without the face if it was already unseen, else at `frame`.
    public func endFace(frame: FrameInfo) {
        events.removeAll(keepingCapacity: true)
        faceInFrame = false
        guard facePresent else { return }
        loseFace(at: unseenSince ?? hiddenSince ?? frame)
    }

    private func loseFace(at frame: FrameInfo) {
        table.reset(frame: frame, into: &events)
        events.append(
            ExpressionEvent(
                event: EventName.faceLost, phase: nil, frame: frame.index,
                time: rounded(frame.time, places: 3), tMonoNs: frame.monotonicNanoseconds))
        facePresent = false
        lostSince = frame
        unseenSince = nil
        hiddenSince = nil
    }
}
