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
    public let tracker: FaceTracker
    public let engine: ExpressionEngine
    public let configuration: Configuration
    /// The last coefficient line's values, kept so the next line reuses the dictionary's storage.
    private var lineValues: [String: Double] = [:]

    /// - Throws: `FaceTrackingError` (exit 78) if a profile or the model is wrong.
    public init(configuration: Configuration, predictor: ShapePredictor, prior: FaceMeasures? = nil) {
        self.configuration = configuration
        var settings = configuration.tracker
        settings.mirrored = configuration.mirrored
        tracker = FaceTracker(predictor: predictor, settings: settings)
        let calibration = Calibration(prior: prior ?? CoefficientModel.populationNeutral,
                                      settings: configuration.calibration)
        engine = ExpressionEngine(rows: configuration.analyzers, model: configuration.coefficients,
                                  gate: configuration.quality, calibration: calibration)
    }

    /// Processes one frame.
    /// - Returns: the tracked face, if any. Events are in `engine.events`.
    /// - Throws: `FaceTrackingError.internal` if dlib fails.
    /// - Parameter still: the frame is a still image, judged as one instant.
    @discardableResult
    public func process(_ buffer: PixelBuffer, info: FrameInfo, still: Bool = false) throws -> FaceObservation? {
        let face = try tracker.process(buffer)
        engine.process(frame: info, face: face, instant: still)
        return face
    }

    /// The coefficient line for the last frame with a face (values rounded to 3 decimals), or `nil`.
    public func coefficientsLine(info: FrameInfo) -> CoefficientsLine? {
        guard engine.facePresent else { return nil }
        // The same keys every frame: overwritten in place (no allocation once the last line is released).
        var values = lineValues
        lineValues = [:]
        values.reserveCapacity(BlendShape.count + 3)
        defer { lineValues = values }
        for shape in BlendShape.allCases { values[shape.rawValue] = rounded(Double(engine.coefficients[shape]), places: 3) }
        values["headYaw"] = rounded(Double(engine.pose.yaw), places: 1)
        values["headPitch"] = rounded(Double(engine.pose.pitch), places: 1)
        values["headRoll"] = rounded(Double(engine.pose.roll), places: 1)
        return CoefficientsLine(frame: info.index, time: rounded(info.time, places: 3), values: values,
                                tMonoNs: info.monotonicNanoseconds)
    }
}

extension FramePipeline {
    /// Runs the pipeline over a whole source as fast as possible (no pacing), calling `body` after each
    /// frame with the frame's info, the tracked face and the pipeline (events in `engine.events`).
    /// - Throws: the source's `CaptureError`, `FaceTrackingError`, or what `body` throws.
    public func run(_ source: FrameSource, buffer: PixelBuffer = PixelBuffer(),
                    _ body: (FrameInfo, FaceObservation?) throws -> Void) throws {
        let still = source.nominalFrameRate == nil && !source.isLive && source is StillImageSource
        while let info = try source.read(into: buffer) {
            let face = try process(buffer, info: info, still: still)
            try body(info, face)
        }
    }

    /// Every event the pipeline emits on `source`.
    public func events(of source: FrameSource) throws -> [ExpressionEvent] {
        var all: [ExpressionEvent] = []
        try run(source) { _, _ in all += engine.events }
        return all
    }
}
