import Capture
import Expressions
import FaceTracking
import Foundation
import WinkCore

/// The per-frame work shared by `winkd` and `winkctl analyze`: face tracking, coefficients, the analyzer
/// table, and the lines to send.
///
/// Not thread-safe: one pipeline per processing thread. Reuses its buffers between frames.
public final class FramePipeline {
    /// The face tracker (its settings from `configuration.tracker`).
    public let tracker: FaceTracker
    /// The expression stage; its `events` hold the last frame's events.
    public let engine: ExpressionEngine
    /// The configuration the pipeline was built from.
    public let configuration: Configuration
    /// The last coefficient line's values, kept so the next line reuses the dictionary's storage.
    private var lineValues: [String: Double] = [:]

    /// A pipeline for `configuration`, its tracker on `predictor` (already loaded and checked), the neutral
    /// learned from `prior` (nil: the population's). Does not throw: the model is checked when loaded.
    public init(configuration: Configuration, predictor: ShapePredictor, prior: FaceMeasures? = nil) {
        self.configuration = configuration
        tracker = FaceTracker(predictor: predictor, settings: configuration.tracker)
        let calibration = Calibration(
            prior: prior ?? CoefficientModel.populationNeutral,
            settings: configuration.calibration)
        engine = ExpressionEngine(
            rows: configuration.analyzers, model: configuration.coefficients,
            gate: configuration.quality, calibration: calibration)
    }

    /// A pipeline with a reloaded configuration that carries on from `old` (winkd's SIGHUP reload): the face
    /// stays (no `faceLost`/`faceFound` for a reload; a reload is not the face leaving), and so does what
    /// did not change: the tracker and its face with the same `tracker` settings (a new one finds the face
    /// at the next frame), what was learned of the face with the same `calibration` settings and prior, and
    /// held expressions with the same analyzer rows. With other rows, held expressions end at `frame`: their
    /// `ended` events are in `engine.events` for the caller to send.
    /// - Parameter prior: the neutral face of `configuration`'s profile (nil: the population's).
    public init(
        continuing old: FramePipeline, configuration: Configuration, predictor: ShapePredictor,
        prior: FaceMeasures? = nil, frame: FrameInfo
    ) {
        self.configuration = configuration
        tracker = old.configuration.tracker == configuration.tracker
            ? old.tracker : FaceTracker(predictor: predictor, settings: configuration.tracker)
        let prior = prior ?? CoefficientModel.populationNeutral
        let calibration = old.engine.calibration.settings == configuration.calibration
                && old.engine.calibration.prior == prior
            ? old.engine.calibration : Calibration(prior: prior, settings: configuration.calibration)
        engine = ExpressionEngine(
            continuing: old.engine, rows: configuration.analyzers, model: configuration.coefficients,
            gate: configuration.quality, calibration: calibration, frame: frame)
        lastUsability = old.lastUsability
    }

    /// Whether the last frame given to `process` could show a face.
    public private(set) var lastUsability = FrameUsability.usable

    /// Processes one frame. A dark or blank frame (`FrameUsability`) is skipped: not tracked, and nothing
    /// changes (no event, no coefficients; a present face stays present), as a camera's dark frames are:
    /// a recording with black frames between good ones, or one grey frame, does not lose the face.
    ///
    /// Once the frame's lines are out, call `completeFrame()` (the daemon does; offline runs may skip it
    /// and get the region check at the next frame instead).
    /// - Parameter still: the frame is a still image, judged as one instant.
    /// - Returns: what the frame gave: the tracked face, the events it decided (`engine.events`, valid
    ///   until the next call) and the frame's usability; `coefficientsLine(info:)` builds the frame's
    ///   coefficient line when someone wants it.
    /// - Throws: `FaceTrackingError.internal` if dlib fails.
    @discardableResult
    public func process(_ buffer: PixelBuffer, info: FrameInfo, still: Bool = false) throws -> FrameOutcome {
        lastUsability = FrameUsability(buffer)
        guard lastUsability == .usable else {
            engine.skip(frame: info)
            return FrameOutcome(face: nil, events: engine.events, usability: lastUsability)
        }
        let face = try tracker.process(buffer)
        engine.process(frame: info, face: face, instant: still)
        return FrameOutcome(face: face, events: engine.events, usability: .usable)
    }

    /// Ends the frame last processed: runs the tracker's deferred region check (see
    /// `FaceTracker.completeFrame()`), which `process` leaves until the frame's lines are written.
    /// - Throws: `FaceTrackingError.internal` if dlib fails.
    public func completeFrame() throws {
        try tracker.completeFrame()
    }

    /// Ends a face because the source went away, closed or restarts (not because the face left): tracking
    /// starts afresh, and a face present is lost (`faceLost`, ending what it was doing) at
    /// `info.monotonicNanoseconds`, dated at `info`'s frame.
    /// - Returns: the events that ended (empty when no face was present).
    @discardableResult
    public func endFace(at info: FrameInfo) -> [ExpressionEvent] {
        tracker.reset()
        guard engine.facePresent else { return [] }
        engine.endFace(frame: info)
        return engine.events
    }

    /// Starts tracking afresh (a looped recording starts again) without ending the face's expressions.
    public func restartTracking() {
        tracker.reset()
    }

    /// Ends the input: a face that was already unseen (within its grace period) is lost now, dated at its
    /// first frame without it; a face still in view stays (the recording just ended). Events are in
    /// `engine.events`.
    public func finish() {
        engine.endOfInput()
    }

    /// The coefficient line for the last frame with a face (values rounded to 3 decimals), or `nil`.
    public func coefficientsLine(info: FrameInfo) -> CoefficientsLine? {
        guard engine.faceInFrame else { return nil }
        // The same keys every frame: overwritten in place (no allocation once the last line is released).
        var values = lineValues
        lineValues = [:]
        values.reserveCapacity(BlendShape.count)
        defer { lineValues = values }
        for shape in BlendShape.allCases {
            values[shape.rawValue] = rounded(Double(engine.coefficients[shape]), places: 3)
        }
        let pose = HeadPose(
            yaw: Float(rounded(Double(engine.pose.yaw), places: 1)),
            pitch: Float(rounded(Double(engine.pose.pitch), places: 1)),
            roll: Float(rounded(Double(engine.pose.roll), places: 1)))
        return CoefficientsLine(
            frame: info.index, time: rounded(info.time, places: 3), values: values, headPose: pose,
            tMonoNs: info.monotonicNanoseconds)
    }
}

/// What one frame gave (`FramePipeline.process`).
public struct FrameOutcome {
    /// The tracked face, in the frame's pixels (the un-mirrored image's for a mirrored source).
    public var face: FaceObservation?
    /// The events this frame decided, in order (face events first).
    public var events: [ExpressionEvent]
    /// Whether the frame could show a face; a dark or blank frame is skipped.
    public var usability: FrameUsability
}

/// Whether a frame can show a face at all: a nearly black frame (a covered lens, a fade) or a nearly
/// uniform one (a grey or green frame from a broken decoder or capture chain) cannot, and is not tracked.
public enum FrameUsability: Sendable, Equatable {
    /// Neither dark nor blank: tracked.
    case usable
    /// Mean luma below `darkThreshold`.
    case dark
    /// Luma standard deviation below `blankDeviation` (every pixel about the same grey).
    case blank

    /// Mean luma (0...255) below which a frame is dark.
    public static let darkThreshold = 12.0
    /// Standard deviation of luma below which a frame is blank: a real scene, even a dim and flat one,
    /// varies by far more; sensor noise alone gives about 1-2.
    public static let blankDeviation = 3.0

    /// Classifies `buffer` from every 4th pixel of every 4th row.
    public init(_ buffer: PixelBuffer) {
        let (mean, deviation) = Self.statistics(buffer)
        self = mean < Self.darkThreshold ? .dark : deviation < Self.blankDeviation ? .blank : .usable
    }

    /// Mean and standard deviation of luma (0...255) over every 4th pixel of every 4th row; (0, 0) for an
    /// empty buffer.
    public static func statistics(_ buffer: PixelBuffer) -> (mean: Double, deviation: Double) {
        guard buffer.width > 0, buffer.height > 0 else { return (0, 0) }
        var sum = 0
        var squares = 0
        var count = 0
        var y = 0
        while y < buffer.height {
            let row = buffer.gray + y * buffer.width
            var x = 0
            while x < buffer.width {
                let v = Int(row[x])
                sum += v
                squares += v * v
                count += 1
                x += 4
            }
            y += 4
        }
        let mean = Double(sum) / Double(count)
        return (mean, max(0, Double(squares) / Double(count) - mean * mean).squareRoot())
    }
}

extension FramePipeline {
    /// Runs the pipeline over a whole source as fast as possible (no pacing), calling `body` after each
    /// frame with the frame's info, the tracked face and the pipeline (events in `engine.events`); at the
    /// end, `finish()`, and `body` once more with the last frame's info and no face if that decided events
    /// (a face that had just gone).
    /// - Throws: the source's `CaptureError`, `FaceTrackingError`, or what `body` throws.
    public func run(
        _ source: FrameSource, buffer: PixelBuffer = PixelBuffer(),
        _ body: (FrameInfo, FaceObservation?) throws -> Void
    ) throws {
        let still = source.isStill
        var last: FrameInfo?
        while let info = try source.read(into: buffer) {
            let face = try process(buffer, info: info, still: still).face
            try body(info, face)
            last = info
        }
        finish()
        if let last, !engine.events.isEmpty { try body(last, nil) }
    }

    /// Every event the pipeline emits on `source`.
    /// - Throws: as `run(_:buffer:_:)`: the source's `CaptureError` or `FaceTrackingError`.
    public func events(of source: FrameSource) throws -> [ExpressionEvent] {
        var all: [ExpressionEvent] = []
        try run(source) { _, _ in all += engine.events }
        return all
    }
}
