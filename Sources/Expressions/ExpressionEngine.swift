import WinkCore

/// Face-quality limits: outside them no eye or mouth event starts, and running ones end.
public struct QualityGate: Sendable, Equatable, Codable {
    /// Largest |yaw| in degrees at which the mouth is still measured (its widths are foreshortened beyond).
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
    /// Smallest fraction of the face inside the frame.
    public var minimumVisible: Float = 0.92
    public init() {}

    /// The gates open for `o`.
    public func gates(for o: FaceObservation) -> AnalyzerTable.Gates {
        let q = o.quality
        let ok = abs(o.pose.pitch) <= maximumPitch
            && q.interocularPixels >= minimumInterocular && q.medianBrightness >= minimumBrightness
            && q.visibleFraction >= minimumVisible
        return AnalyzerTable.Gates(eyes: ok && abs(o.pose.yaw) <= maximumEyeYaw, mouth: ok && abs(o.pose.yaw) <= maximumYaw)
    }
}

/// The expression stage: face events, calibration, coefficients and the analyzer table, frame by frame.
///
/// Call `process(frame:face:)` once per frame, with the tracked face or `nil`. Events are appended to
/// `events` (cleared at the start of each call; the array's storage is reused). Not thread-safe.
public final class ExpressionEngine {
    public let table: AnalyzerTable
    public let model: CoefficientModel
    public let gate: QualityGate
    public let calibration: Calibration
    /// Events decided by the last `process` call.
    public private(set) var events: [ExpressionEvent] = []
    /// Coefficients of the last frame with a face.
    public private(set) var coefficients = BlendShapeCoefficients()
    /// Head pose of the last frame with a face.
    public private(set) var pose = HeadPose.frontal
    /// Raw measures of the last frame with a face.
    public private(set) var measures = FaceMeasures()
    /// Whether a face is present.
    public private(set) var facePresent = false

    public init(rows: [AnalyzerRow], model: CoefficientModel = CoefficientModel(), gate: QualityGate = QualityGate(),
                calibration: Calibration = Calibration()) {
        table = AnalyzerTable(rows: rows)
        self.model = model
        self.gate = gate
        self.calibration = calibration
        events.reserveCapacity(16)
    }

    /// Advances by one frame.
    /// - Parameter instant: the frame is a still image (see `AnalyzerTable.step(instant:)`).
    /// - Returns: whether this frame had a face (and so fresh `coefficients`).
    @discardableResult
    public func process(frame: FrameInfo, face: FaceObservation?, instant: Bool = false) -> Bool {
        events.removeAll(keepingCapacity: true)
        guard let face else {
            if facePresent {
                table.reset(frame: frame, into: &events)
                events.append(ExpressionEvent(event: EventName.faceLost, phase: nil, frame: frame.index,
                                              time: rounded(frame.time, places: 3), tMonoNs: frame.monotonicNanoseconds))
                facePresent = false
            }
            return false
        }
        if !facePresent {
            facePresent = true
            events.append(ExpressionEvent(event: EventName.faceFound, phase: nil, frame: frame.index,
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
}
