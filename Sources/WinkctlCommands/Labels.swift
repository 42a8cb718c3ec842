import Foundation
import WinkCore
import WinkDaemon

/// A labels file for a recorded clip (SPEC.md "Labels files"): what a person sees, frame by frame.
public struct ClipLabels: Sendable {
    public struct LabelledEvent: Sendable, Equatable {
        public var event: String
        public var start: Int
        public var end: Int
        /// The label's own `tolerance_frames` (smiles and mouth openings, whose onset is gradual), else nil
        /// for the clip's.
        public var toleranceFrames: Int? = nil
    }

    /// A range of frames (inclusive) where emitted occurrences of `event` (or of any name, when `nil`) are
    /// neither matched nor counted as false positives.
    public struct DontCare: Sendable, Equatable {
        public var event: String?
        public var start: Int
        public var end: Int
    }

    /// The recording, resolved to an absolute path.
    public var video: String
    public var frames: Int
    /// Frames per second the labels were made at (`nominal_fps`; 30 when absent).
    public var nominalFPS: Double = 30
    public var toleranceFrames: Int
    public var mirrored: Bool
    /// Inclusive frame ranges with a visible face.
    public var face: [ClosedRange<Int>]
    public var events: [LabelledEvent]
    public var absent: Set<String>
    public var dontCare: [DontCare]

    /// Reads a labels file. The `video` path is taken relative to the fixtures folder (the labels file's
    /// folder's parent), as in ../shared/fixtures.
    /// - Throws: `Configuration.Invalid`-style `LabelsError` (exit 65) for a malformed file, or 66 when missing.
    public static func load(path: String) throws -> ClipLabels {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw LabelsError(path: path, reason: "no such labels file", exitCode: .noInput)
        }
        let type = (try? FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType) ?? nil
        guard !isFolder.boolValue, type == .typeRegular else {
            throw LabelsError(path: path, reason: "not a regular file", exitCode: .noInput)
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw LabelsError(path: path, reason: "cannot be read", exitCode: .noInput)
        }
        guard let root = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw LabelsError(path: path, reason: "not a JSON object", exitCode: .dataError)
        }
        func fail(_ key: String, _ expected: String) -> LabelsError {
            LabelsError(path: path, reason: "\(key): expected \(expected)", exitCode: .dataError)
        }
        if root["images"] != nil && root["video"] == nil {
            throw LabelsError(
                path: path,
                reason: "labels for still images, not for a clip: evaluate scores clips "
                    + "(the stills' expectations are checked by the test suite)", exitCode: .dataError)
        }
        guard let video = root["video"] as? String else { throw fail("video", "the clip's path") }
        let base = URL(fileURLWithPath: path).deletingLastPathComponent()
        let candidates = [
            base.deletingLastPathComponent().appendingPathComponent(video).path,
            base.appendingPathComponent(video).path,
        ]
        let resolved =
            video.hasPrefix("/")
            ? video
            : candidates.first { FileManager.default.fileExists(atPath: $0) } ?? candidates[0]
        guard let frames = root["frames"] as? Int else { throw fail("frames", "a whole number") }
        let tol = root["tolerance_frames"] as? Int ?? 0
        var face: [ClosedRange<Int>] = []
        for item in root["face"] as? [Any] ?? [] {
            guard let pair = item as? [Int], pair.count == 2, pair[0] <= pair[1] else {
                throw fail("face", "[start, end] pairs")
            }
            face.append(pair[0]...pair[1])
        }
        var events: [LabelledEvent] = []
        for item in root["events"] as? [Any] ?? [] {
            guard let e = item as? [String: Any], let name = e["event"] as? String, let s = e["start"] as? Int,
                let t = e["end"] as? Int, s <= t
            else { throw fail("events", "objects with event, start, end") }
            let own = e["tolerance_frames"] as? Int
            events.append(LabelledEvent(event: name, start: s, end: t, toleranceFrames: own))
        }
        var dontCare: [DontCare] = []
        for item in root["dontcare"] as? [Any] ?? [] {
            if let pair = item as? [Int], pair.count == 2 {
                dontCare.append(DontCare(event: nil, start: pair[0], end: pair[1]))
            } else if let e = item as? [String: Any], let s = e["start"] as? Int, let t = e["end"] as? Int {
                dontCare.append(DontCare(event: e["event"] as? String, start: s, end: t))
            } else {
                throw fail("dontcare", "[start, end] pairs or objects with start, end (and event)")
            }
        }
        let fps = (root["nominal_fps"] as? Double) ?? (root["nominal_fps"] as? Int).map(Double.init) ?? 30
        return ClipLabels(
            video: resolved, frames: frames, nominalFPS: fps, toleranceFrames: tol,
            mirrored: root["mirrored"] as? Bool ?? false, face: face, events: events,
            absent: Set(root["absent"] as? [String] ?? []), dontCare: dontCare)
    }

    /// The frames in which an occurrence matches the labelled `event` (SPEC.md "Labels files"). Clamped to
    /// the clip's frames, so a hostile tolerance cannot overflow.
    public func window(of event: LabelledEvent) -> ClosedRange<Int> {
        let limit = max(frames, 1) * 4
        let tol = min(max(event.toleranceFrames ?? toleranceFrames, 0), limit)
        var after = tol
        if event.event == EventName.blink {
            after = max(tol, Int((0.15 * nominalFPS).rounded(.up)))
        }
        let start = min(max(event.start, -limit), limit)
        let end = min(max(event.end, start), limit)
        return (start - tol)...(end + after)
    }

    /// Every expected occurrence: the labelled events, `faceFound` at the start of each face range and
    /// `faceLost` just after each range that ends before the clip does.
    public var expected: [LabelledEvent] {
        var out = events
        for r in face {
            out.append(LabelledEvent(event: EventName.faceFound, start: r.lowerBound, end: r.lowerBound))
            if r.upperBound < frames - 1 {
                out.append(LabelledEvent(event: EventName.faceLost, start: r.upperBound + 1, end: r.upperBound + 1))
            }
        }
        return out
    }
}

/// A labels file that cannot be used.
public struct LabelsError: ExitCodeError {
    public var path: String
    public var reason: String
    public var exitCode: ExitCode
    public var description: String { "\(path): \(reason)" }
}

/// True/false positives and misses for one event name, or in total.
public struct Score: Sendable, Equatable, Encodable {
    public var truePositives = 0
    public var falsePositives = 0
    public var misses = 0

    public init(truePositives: Int = 0, falsePositives: Int = 0, misses: Int = 0) {
        self.truePositives = truePositives
        self.falsePositives = falsePositives
        self.misses = misses
    }

    public var precision: Double {
        truePositives + falsePositives == 0 ? 1 : Double(truePositives) / Double(truePositives + falsePositives)
    }
    public var recall: Double {
        truePositives + misses == 0 ? 1 : Double(truePositives) / Double(truePositives + misses)
    }
    public var f1: Double {
        let p = precision
        let r = recall
        return p + r == 0 ? 0 : 2 * p * r / (p + r)
    }

    enum CodingKeys: String, CodingKey {
        case truePositives = "tp"
        case falsePositives = "fp"
        case misses = "missed"
        case precision, recall, f1
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(truePositives, forKey: .truePositives)
        try c.encode(falsePositives, forKey: .falsePositives)
        try c.encode(misses, forKey: .misses)
        try c.encode(rounded(precision, places: 4), forKey: .precision)
        try c.encode(rounded(recall, places: 4), forKey: .recall)
        try c.encode(rounded(f1, places: 4), forKey: .f1)
    }

    static func + (a: Score, b: Score) -> Score {
        Score(
            truePositives: a.truePositives + b.truePositives, falsePositives: a.falsePositives + b.falsePositives,
            misses: a.misses + b.misses)
    }
}

/// One scoring run: per event name, plus every unmatched or wrong occurrence for explanations.
public struct ClipScore: Sendable {
    public var byEvent: [String: Score] = [:]
    /// Human-readable lines for each false positive and miss.
    public var findings: [String] = []
    /// Every unmatched occurrence counted as a false positive, in emission order.
    public var falseOccurrences: [(event: String, frame: Int)] = []

    /// The false positives of `winkLeft` and `winkRight` (a wink types a key: the costliest mistake).
    public var falseWinks: [(event: String, frame: Int)] {
        falseOccurrences.filter { $0.event == EventName.winkLeft || $0.event == EventName.winkRight }
    }
    public var total: Score { byEvent.values.reduce(Score(), +) }
}

/// Scores emitted events against labels by SPEC.md's rule: an emitted occurrence (`began`, `occurred` or a
/// face event) of name N at frame f matches an unmatched labelled N with f in [start - tol, end + tol],
/// where tol is the label's own `tolerance_frames` or else the clip's; a `blink`, decided when the eyes
/// reopen, may come up to 0.15 s after its labelled end (end + max(tol, ceil(0.15 x nominal_fps))).
/// Unmatched occurrences outside a `dontcare` range of their name (a `dontcare` range of `faceFound` or
/// `faceLost` covers both face events) are false positives; every occurrence of an `absent` name is one;
/// unmatched labels are misses.
public func score(events: [ExpressionEvent], labels: ClipLabels) -> ClipScore {
    var result = ClipScore()
    var expected = labels.expected
    var matched = Array(repeating: false, count: expected.count)
    for e in events where e.isOccurrence {
        var s = result.byEvent[e.event, default: Score()]
        defer { result.byEvent[e.event] = s }
        if labels.absent.contains(e.event) {
            s.falsePositives += 1
            result.findings.append("false positive: \(e.event) at frame \(e.frame) (labelled absent)")
            result.falseOccurrences.append((e.event, e.frame))
            continue
        }
        if let i = expected.indices.first(where: { i in
            !matched[i] && expected[i].event == e.event && labels.window(of: expected[i]).contains(e.frame)
        }) {
            matched[i] = true
            s.truePositives += 1
            continue
        }
        let faceEvents: Set<String> = [EventName.faceFound, EventName.faceLost]
        let ignored = labels.dontCare.contains { d in
            let covers =
                d.event == nil || d.event == e.event
                || (d.event.map(faceEvents.contains) == true && faceEvents.contains(e.event))
            return covers && (d.start...d.end).contains(e.frame)
        }
        if !ignored {
            s.falsePositives += 1
            result.findings.append("false positive: \(e.event) at frame \(e.frame)")
            result.falseOccurrences.append((e.event, e.frame))
        }
    }
    for (i, x) in expected.enumerated() where !matched[i] {
        result.byEvent[x.event, default: Score()].misses += 1
        result.findings.append("missed: \(x.event) in frames \(x.start)...\(x.end)")
    }
    expected.removeAll()
    return result
}
