import Foundation
import WinkCore
import WinkDaemon

/// A labels file for a recorded clip (SPEC.md "Labels files"): what a person sees, frame by frame.
public struct ClipLabels: Sendable {
    /// One labelled expression: `event` seen from frame `start` to `end` (0-based, inclusive).
    public struct LabelledEvent: Sendable, Equatable {
        /// The event name.
        public var event: String
        /// First frame (0-based).
        public var start: Int
        /// Last frame (inclusive).
        public var end: Int
        /// The label's own `tolerance_frames` (smiles and mouth openings, whose onset is gradual), else nil
        /// for the clip's.
        public var toleranceFrames: Int? = nil
    }

    /// A range of frames (inclusive) where emitted occurrences of `event` (or of any name, when `nil`) are
    /// neither matched nor counted as false positives.
    public struct DontCare: Sendable, Equatable {
        /// The event name ignored there; nil for every name.
        public var event: String?
        /// First frame (0-based).
        public var start: Int
        /// Last frame (inclusive).
        public var end: Int
    }

    /// The recording, resolved to an absolute path.
    public var video: String
    /// Frames in the clip (`frames`, at least 1); every range lies within 0..<frames.
    public var frames: Int
    /// Frames per second the labels were made at (`nominal_fps`; 30 when absent).
    public var nominalFPS: Double = 30
    /// Frames of slack either side of a label when matching (`tolerance_frames`; 0 when absent).
    public var toleranceFrames: Int
    /// Whether the clip is a mirror image (`mirrored`): it is then analysed with `mirrored` set.
    public var mirrored: Bool
    /// Inclusive frame ranges with a visible face.
    public var face: [ClosedRange<Int>]
    /// The labelled expressions, in file order.
    public var events: [LabelledEvent]
    /// Event names that do not happen in the clip (`absent`): every occurrence is a false positive.
    public var absent: Set<String>
    /// Frame ranges where occurrences are not scored (`dontcare`).
    public var dontCare: [DontCare]
    /// Keys the file has that SPEC.md's labels files do not ("absnt: unknown key, ignored (known: ...)"), one
    /// line each: not refused, as a labeller's own extra keys are harmless, but a misspelt `absent` or
    /// `dontcare` changes the score without a word otherwise. `evaluate` prints them.
    public var ignoredKeys: [String] = []

    /// The keys of a labels file (SPEC.md "Labels files"), of an `events` entry and of a `dontcare` object.
    static let knownKeys: Set<String> = [
        "video", "frames", "nominal_fps", "mirrored", "tolerance_frames", "face", "events", "dontcare", "absent",
        "notes",
    ]
    static let eventKeys: Set<String> = ["event", "start", "end", "tolerance_frames"]
    static let dontCareKeys: Set<String> = ["event", "start", "end"]

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
        if let reason = oversizedSettingsFile(path, kind: "a labels file") {
            throw LabelsError(path: path, reason: reason, exitCode: .dataError)
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw LabelsError(
                path: path, reason: "cannot be read" + readFailureNote(path), exitCode: .noInput)
        }
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: data)
        } catch {
            // Where and what (a syntax error, "Too many nested arrays or dictionaries"), not "not an object".
            throw LabelsError(path: path, reason: notValidJSON(error), exitCode: .dataError)
        }
        guard let root = parsed as? [String: Any] else {
            throw LabelsError(path: path, reason: "not a JSON object", exitCode: .dataError)
        }
        if let repeated = JSONDuplicateKeys.find(in: data).first {
            throw LabelsError(path: path, reason: repeated, exitCode: .dataError)
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
        guard let video = root["video"] as? String, !video.isEmpty else { throw fail("video", "the clip's path") }
        let base = URL(fileURLWithPath: path).deletingLastPathComponent()
        let candidates = [
            base.deletingLastPathComponent().appendingPathComponent(video).path,
            base.appendingPathComponent(video).path,
        ]
        let resolved =
            video.hasPrefix("/")
            ? video
            : candidates.first { FileManager.default.fileExists(atPath: $0) } ?? candidates[0]
        // Every field is checked, naming it (and the entry): a wrong type or range used to be taken silently
        // and scored wrongly ("mirrored": "true" ignored, "frames": 0 turning every label into a miss).
        func whole(_ key: String, _ value: Any?, atLeast least: Int) throws -> Int? {
            guard let value else { return nil }
            guard let n = Self.jsonInt(value), n >= least else {
                throw fail(key, least == 0 ? "a whole number, 0 or more" : "a whole number, \(least) or more")
            }
            return n
        }
        guard let frames = try whole("frames", root["frames"], atLeast: 1) else {
            throw fail("frames", "a whole number, 1 or more")
        }
        let tol = try whole("tolerance_frames", root["tolerance_frames"], atLeast: 0) ?? 0
        func range(_ key: String, _ start: Int, _ end: Int) throws -> ClosedRange<Int> {
            guard start >= 0, start <= end, end < frames else {
                throw fail(key, "start <= end within the clip's frames 0...\(frames - 1), got \(start)...\(end)")
            }
            return start...end
        }
        var ignored: [String] = []
        func note(_ place: String, _ object: [String: Any], _ known: Set<String>) {
            for key in object.keys.sorted() where !known.contains(key) {
                let names = known.sorted().joined(separator: ", ")
                ignored.append("\(place)\(key): unknown key, ignored (known: \(names))")
            }
        }
        note("", root, Self.knownKeys)
        var face: [ClosedRange<Int>] = []
        for (i, item) in try list("face", root["face"], fail).enumerated() {
            guard let pair = Self.jsonPair(item) else { throw fail("face[\(i)]", "a [start, end] pair") }
            let r = try range("face[\(i)]", pair.0, pair.1)
            // Overlapping or adjacent ranges expected a faceLost and a faceFound where the face never left.
            let meets = { (o: ClosedRange<Int>) in
                r.lowerBound <= o.upperBound + 1 && o.lowerBound <= r.upperBound + 1
            }
            if let j = face.firstIndex(where: meets) {
                let other = "\(face[j].lowerBound)...\(face[j].upperBound)"
                throw fail("face[\(i)]", "a range apart from face[\(j)] (\(other)); ranges that meet are one")
            }
            face.append(r)
        }
        var events: [LabelledEvent] = []
        for (i, item) in try list("events", root["events"], fail).enumerated() {
            let key = "events[\(i)]"
            guard let e = item as? [String: Any] else { throw fail(key, "an object with event, start, end") }
            note(key + ".", e, Self.eventKeys)
            guard let name = e["event"] as? String, !name.isEmpty else { throw fail("\(key).event", "an event name") }
            guard let s = Self.jsonInt(e["start"]) else { throw fail("\(key).start", "a whole frame number") }
            guard let t = Self.jsonInt(e["end"]) else { throw fail("\(key).end", "a whole frame number") }
            let r = try range(key, s, t)
            let own = try whole("\(key).tolerance_frames", e["tolerance_frames"], atLeast: 0)
            let label = LabelledEvent(event: name, start: r.lowerBound, end: r.upperBound, toleranceFrames: own)
            // The same label twice asked for two occurrences of one event: a certain miss.
            let same = { (o: LabelledEvent) in o.event == name && o.start == label.start && o.end == label.end }
            if let j = events.firstIndex(where: same) {
                let frames = "\(label.start)...\(label.end)"
                throw fail(key, "a label other than events[\(j)] (the same \(name) in frames \(frames))")
            }
            events.append(label)
        }
        var dontCare: [DontCare] = []
        for (i, item) in try list("dontcare", root["dontcare"], fail).enumerated() {
            let key = "dontcare[\(i)]"
            if let pair = Self.jsonPair(item) {
                let r = try range(key, pair.0, pair.1)
                dontCare.append(DontCare(event: nil, start: r.lowerBound, end: r.upperBound))
            } else if let e = item as? [String: Any], let s = Self.jsonInt(e["start"]), let t = Self.jsonInt(e["end"]),
                e["event"] == nil || e["event"] is String
            {
                note(key + ".", e, Self.dontCareKeys)
                let r = try range(key, s, t)
                dontCare.append(DontCare(event: e["event"] as? String, start: r.lowerBound, end: r.upperBound))
            } else {
                throw fail(key, "a [start, end] pair or an object with start, end (and event)")
            }
        }
        var absent: Set<String> = []
        if let value = root["absent"] {
            guard let names = value as? [String] else { throw fail("absent", "a list of event names") }
            absent = Set(names)
        }
        if let both = events.map(\.event).first(where: absent.contains) {
            throw fail("absent", "names not also labelled in events ('\(both)' is both)")
        }
        // A number is the rate; a string describes a variable one ("variable: 24 for the title, 30 for the
        // face", as face_noface.labels.json says), and 30 is used.
        var fps = 30.0
        if let value = root["nominal_fps"], !(value is String) {
            guard !Self.isJSONBool(value), let n = (value as? Double) ?? (value as? Int).map(Double.init), n > 0,
                n <= 1000
            else {
                throw fail("nominal_fps", "frames per second above 0 and at most 1000, or a description")
            }
            fps = n
        }
        var mirrored = false
        if let value = root["mirrored"] {
            guard Self.isJSONBool(value), let flag = value as? Bool else { throw fail("mirrored", "true or false") }
            mirrored = flag
        }
        var labels = ClipLabels(
            video: resolved, frames: frames, nominalFPS: fps, toleranceFrames: tol,
            mirrored: mirrored, face: face, events: events, absent: absent, dontCare: dontCare)
        labels.ignoredKeys = ignored
        return labels
    }

    /// Whether `value` is a JSON `true` or `false`. JSONSerialization gives booleans as NSNumbers that `as? Int`
    /// takes as 1 and 0, and numbers as NSNumbers that `as? Bool` takes ("mirrored": 1 was taken as true).
    static func isJSONBool(_ value: Any) -> Bool {
        (value as? NSNumber).map { String(cString: $0.objCType) == "c" } ?? false
    }

    /// `value` as a whole JSON number, not a boolean (`"start": true` was frame 1).
    static func jsonInt(_ value: Any?) -> Int? {
        guard let value, !isJSONBool(value) else { return nil }
        return value as? Int
    }

    /// `value` as a `[start, end]` pair of whole numbers.
    static func jsonPair(_ value: Any) -> (Int, Int)? {
        guard let items = value as? [Any], items.count == 2, let a = jsonInt(items[0]), let b = jsonInt(items[1])
        else { return nil }
        return (a, b)
    }

    /// `value` as a JSON list (empty when absent).
    /// - Throws: `fail(key, "a list")` for anything but a list.
    private static func list(_ key: String, _ value: Any?, _ fail: (String, String) -> LabelsError) throws -> [Any] {
        guard let value else { return [] }
        guard let items = value as? [Any] else { throw fail(key, "a list") }
        return items
    }

    /// Every event name the file mentions (labelled, absent or dontcare), sorted.
    public var eventNames: [String] {
        Set(events.map(\.event)).union(absent).union(dontCare.compactMap(\.event)).sorted()
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
public struct LabelsError: ExitCodeError, Equatable {
    /// The labels file.
    public var path: String
    /// What is wrong, naming the key.
    public var reason: String
    /// 66 when the file is missing or unreadable, 65 when its content is wrong.
    public var exitCode: ExitCode
    /// "PATH: reason".
    public var description: String { "\(path): \(reason)" }
}

/// True/false positives and misses for one event name, or in total.
public struct Score: Sendable, Equatable, Encodable {
    /// Emitted occurrences that matched a label.
    public var truePositives = 0
    /// Emitted occurrences that matched none (JSON `fp`).
    public var falsePositives = 0
    /// Labels no occurrence matched (JSON `missed`).
    public var misses = 0

    /// A score from its counts.
    public init(truePositives: Int = 0, falsePositives: Int = 0, misses: Int = 0) {
        self.truePositives = truePositives
        self.falsePositives = falsePositives
        self.misses = misses
    }

    /// TP / (TP + FP), 0...1; 1 when nothing was emitted.
    public var precision: Double {
        truePositives + falsePositives == 0 ? 1 : Double(truePositives) / Double(truePositives + falsePositives)
    }
    /// TP / (TP + misses), 0...1; 1 when nothing was labelled.
    public var recall: Double {
        truePositives + misses == 0 ? 1 : Double(truePositives) / Double(truePositives + misses)
    }
    /// The harmonic mean of precision and recall, 0...1 (0 when both are 0).
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

    /// `{"tp":..,"fp":..,"missed":..,"precision":..,"recall":..,"f1":..}`, the ratios to 4 decimals.
    /// - Throws: the encoder's `EncodingError`.
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
    /// The score of each event name.
    public var byEvent: [String: Score] = [:]
    /// Human-readable lines for each false positive and miss.
    public var findings: [String] = []
    /// Every occurrence's fate in emission order ("found: blink at frame 30 (labelled 25...29)", "ignored:
    /// blink at frame 208 (dontcare 113...209)", the false positives as in `findings`), then the misses: the
    /// whole accounting, for `evaluate --verbose`.
    public var accounting: [String] = []
    /// Every unmatched occurrence counted as a false positive, in emission order.
    public var falseOccurrences: [(event: String, frame: Int)] = []

    /// The false positives of `winkLeft` and `winkRight` (a wink types a key: the costliest mistake).
    public var falseWinks: [(event: String, frame: Int)] {
        falseOccurrences.filter { $0.event == EventName.winkLeft || $0.event == EventName.winkRight }
    }
    /// The sum of every event name's score.
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
            result.accounting.append(result.findings[result.findings.count - 1])
            result.falseOccurrences.append((e.event, e.frame))
            continue
        }
        if let i = expected.indices.first(where: { i in
            !matched[i] && expected[i].event == e.event && labels.window(of: expected[i]).contains(e.frame)
        }) {
            matched[i] = true
            s.truePositives += 1
            let label = expected[i]
            result.accounting.append("found: \(e.event) at frame \(e.frame) (labelled \(label.start)...\(label.end))")
            continue
        }
        let faceEvents: Set<String> = [EventName.faceFound, EventName.faceLost]
        let ignored = labels.dontCare.first { d in
            let covers =
                d.event == nil || d.event == e.event
                || (d.event.map(faceEvents.contains) == true && faceEvents.contains(e.event))
            return covers && (d.start...d.end).contains(e.frame)
        }
        if let ignored {
            let range = "\(ignored.start)...\(ignored.end)"
            result.accounting.append("ignored: \(e.event) at frame \(e.frame) (dontcare \(range))")
        } else {
            s.falsePositives += 1
            result.findings.append("false positive: \(e.event) at frame \(e.frame)")
            result.accounting.append(result.findings[result.findings.count - 1])
            result.falseOccurrences.append((e.event, e.frame))
        }
    }
    for (i, x) in expected.enumerated() where !matched[i] {
        result.byEvent[x.event, default: Score()].misses += 1
        result.findings.append("missed: \(x.event) in frames \(x.start)...\(x.end)")
        result.accounting.append(result.findings[result.findings.count - 1])
    }
    expected.removeAll()
    return result
}
