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
    public var type = "measures"
    public var frame: Int
    public var time: Double
    public var measures: [String: Double]
    public var neutral: [String: Double]
    public var pose: [String: Double]
    public var interocular: Double
    public var brightness: Double
    public var visible: Double
    public var visibleEyes: Double
    public var visibleMouth: Double
    public var landmarks: [Double]

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
