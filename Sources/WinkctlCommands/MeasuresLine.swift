import Expressions
import WinkCore
import WinkDaemon

/// One line of `winkctl analyze --measures`: the raw material behind a frame's coefficients, for tuning
/// thresholds and for studying a clip offline (`jq`, numpy). One line per frame with a face, before the
/// frame's event lines:
///
///     {"type":"measures","frame":12,"time":0.4,"measures":{"eyeAspectLeft":0.31,...},
///      "neutral":{...},"pose":{"yaw":3.1,"pitch":-2,"roll":0.4},"interocular":96.2,"brightness":121,
///      "visible":1,"visibleEyes":1,"visibleMouth":1,"landmarks":[x0,y0,x1,y1,...]}
///
/// - `measures` and `neutral`: `FaceMeasures` by field name (eye aspect ratios, eye-state closed probabilities,
/// lengths per
///   outer-eye-corner distance; see `FaceMeasures`), this frame's and the learned neutral's.
/// - `pose`: head pose in degrees (`HeadPose`). `interocular`: outer eye corner distance in pixels.
///   `brightness`: median grey level of the face, 0...255. `visible`: fraction of the face in the frame;
///   `visibleEyes`, `visibleMouth`: the same for the regions the eye and mouth gates need (`FaceQuality`).
/// - `landmarks`: the 68 iBUG points as 136 numbers x0, y0, x1, y1, ... in full-frame pixels (origin
///   top-left, x right, y down), as the tracker found them (before any mirroring of left and right).
public struct MeasuresLine: Encodable, Sendable {
    /// Always "measures".
    public var type = "measures"
    /// 0-based index of the source frame.
    public var frame: Int
    /// Seconds from the first frame (3 decimals).
    public var time: Double
    /// This frame's `FaceMeasures` by name (4 decimals).
    public var measures: [String: Double]
    /// The learned neutral's `FaceMeasures` by name (4 decimals).
    public var neutral: [String: Double]
    /// `yaw`, `pitch`, `roll` in degrees (2 decimals).
    public var pose: [String: Double]
    /// Outer-eye-corner distance in pixels (2 decimals).
    public var interocular: Double
    /// Median grey level of the face, 0...255 (1 decimal).
    public var brightness: Double
    /// Fraction of the face inside the frame, 0...1.
    public var visible: Double
    /// Fraction of the brows and eyes inside the frame, 0...1.
    public var visibleEyes: Double
    /// Fraction of the chin, nose, eyes and mouth inside the frame, 0...1.
    public var visibleMouth: Double
    /// 136 numbers, x0, y0, x1, y1, ..., the 68 iBUG points in full-frame pixels.
    public var landmarks: [Double]

    /// The line for `face` at `info`, with this frame's `measures` and the `neutral` in use.
    public init(info: FrameInfo, face: FaceObservation, measures: FaceMeasures, neutral: FaceMeasures) {
        frame = info.index
        time = rounded(info.time, places: 3)
        self.measures = Self.fields(measures)
        self.neutral = Self.fields(neutral)
        pose = [
            "yaw": rounded(Double(face.pose.yaw), places: 2), "pitch": rounded(Double(face.pose.pitch), places: 2),
            "roll": rounded(Double(face.pose.roll), places: 2),
        ]
        interocular = rounded(Double(face.quality.interocularPixels), places: 2)
        brightness = rounded(Double(face.quality.medianBrightness), places: 1)
        visible = rounded(Double(face.quality.visibleFraction), places: 3)
        visibleEyes = rounded(Double(face.quality.eyesVisibleFraction), places: 3)
        visibleMouth = rounded(Double(face.quality.mouthVisibleFraction), places: 3)
        landmarks = (0..<68).flatMap { i in [Double(face.landmarks[i].x), Double(face.landmarks[i].y)] }
    }

    /// `m`'s fields by name, rounded to 4 decimals.
    static func fields(_ m: FaceMeasures) -> [String: Double] {
        var out: [String: Double] = [:]
        for (name, key) in FaceMeasures.namedMeasures { out[name] = rounded(Double(m[keyPath: key]), places: 4) }
        return out
    }
}
