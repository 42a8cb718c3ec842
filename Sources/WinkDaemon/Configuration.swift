import Capture
import EventServer
import Expressions
import FaceTracking
import Foundation
import WinkCore

/// winkd's configuration file (JSON). Every key is optional.
///
/// ```json
/// {
///   "logLevel": "info",
///   "mirrored": false,
///   "analyzers": [ {"event": "smile", "enter": 0.6},
///                  {"event": "browRaise", "value": "browInnerUp", "enter": 0.5, "exit": 0.3, "minDuration": 0.2} ],
///   "replaceDefaultAnalyzers": false,
///   "coefficients": { "eyeStateWeight": 0.6 },
///   "quality": { "maximumYaw": 30 },
///   "tracker": { "detectionWidth": 320 },
///   "calibration": { "windowSeconds": 60 },
///   "profile": "/home/me/.config/winkd/profile.json",
///   "camera": { "width": 640, "height": 480, "fps": 30 },
///   "socket": { "mode": "0660", "maximumClients": 64 },
///   "overlay": { "layout": "glasses.json", "device": "/dev/video10" }
/// }
/// ```
/// `analyzers` rows are merged into the default table by `event`: a row naming an existing event changes
/// only the fields it gives; a new name adds a row (then `value` and `enter` are required).
/// `systemd/config.sample.jsonc` shows every key with its default and unit; `winkctl config` prints the
/// configuration in effect and where each value came from.
public struct Configuration: Sendable {
    /// Whether the source is a mirror image (top-level `mirrored`); kept once, in `tracker.mirrored`.
    public var mirrored: Bool {
        get { tracker.mirrored }
        set { tracker.mirrored = newValue }
    }
    /// The analyzer table (`analyzers`: the default table with the file's rows merged in by `event`).
    public var analyzers: [AnalyzerRow] = AnalyzerRow.defaultTable
    /// `replaceDefaultAnalyzers`: the file's `analyzers` are the whole table, not changes to the default one.
    public var replaceDefaultAnalyzers = false
    /// The coefficient spans (`coefficients`).
    public var coefficients = CoefficientModel()
    /// The face-quality limits (`quality`).
    public var quality = QualityGate()
    /// The tracker's settings (`tracker`), and `mirrored`.
    public var tracker = TrackerSettings()
    /// How the neutral face is learned (`calibration`).
    public var calibration = Calibration.Settings()
    /// A calibration profile written by `winkctl calibrate`.
    public var profilePath: String?
    /// The configuration file this was read from, if any.
    public var path: String?
    /// The keys the file gave, as dotted paths (`quality.maximumYaw`, `analyzers.smile.enter`, `mirrored`):
    /// what `winkctl config` says came from the file rather than the defaults.
    public var givenKeys: Set<String> = []
    /// The least severe messages winkd logs (`logLevel`: "error", "warning", "notice", "info" or "debug");
    /// nil when the file does not say (`info`, unless `--log-level` says).
    public var logLevel: EventServer.LogLevel?
    /// What to ask of a V4L2 camera (`camera.width`/`height` in pixels, both or neither; `camera.fps`).
    public var camera = V4L2Camera.Settings()
    /// Permission bits of the socket file (`socket.mode`, an octal string such as "0660"; default 0600).
    public var socketMode: UInt32 = 0o600
    /// Clients served at once (`socket.maximumClients`, 1...4096; default 64).
    public var maximumClients = 64
    /// An overlay layout JSON file (`overlay.layout`), resolved against the configuration file's folder.
    public var overlayLayoutPath: String?
    /// A V4L2 output device (a v4l2loopback node) the overlaid frames are written to (`overlay.device`).
    /// Frames leave the daemon only when both this and `overlayLayoutPath` are set.
    public var overlayDevice: String?

    /// Whether overlaid frames are to be written to a V4L2 output device.
    public var overlayOutputConfigured: Bool { overlayLayoutPath != nil && overlayDevice != nil }

    /// The built-in defaults (no file).
    public init() {}

    /// The keys a configuration file may have.
    static let knownKeys: Set<String> = [
        "logLevel", "mirrored", "analyzers", "replaceDefaultAnalyzers", "coefficients", "quality",
        "tracker", "calibration", "profile", "camera", "overlay", "socket",
    ]

    /// A configuration problem: one line per error, each naming the key and what was expected. Exit 78.
    public struct Invalid: MultiLineError {
        /// The configuration file.
        public var path: String
        /// One line per problem, each naming the key.
        public var problems: [String]
        /// One line per problem: control characters from the file (an escaped newline in a key or a
        /// formula) are shown escaped, never raw.
        public var lines: [String] {
            problems.map { "\(visibleControlCharacters(path)): \(visibleControlCharacters($0))" }
        }
        /// `lines`, joined with newlines.
        public var description: String { lines.joined(separator: "\n") }
        /// 78 (`configuration`).
        public var exitCode: ExitCode { .configuration }
    }

    /// Reads and validates `path`.
    /// - Throws: `Missing` (exit 66) when there is no such file; `Unreadable` (exit 66) when it cannot be
    ///   read (a directory, no permission), with the system's reason; `Invalid` (exit 78) listing every
    ///   problem of its content.
    public static func load(path: String) throws -> Configuration {
        // A FIFO or device would block the read (a SIGHUP reload froze the frame thread); a directory is
        // left to the read's own EISDIR.
        var st = stat()
        if stat(path, &st) == 0, (st.st_mode & S_IFMT) != S_IFDIR, let problem = nonRegularFileReason(path) {
            throw Unreadable(path: path, reason: nil, problem: problem)
        }
        if let reason = oversizedSettingsFile(path, kind: "a configuration") {
            throw Invalid(path: path, problems: [reason])
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            if let target = danglingLinkTarget(path) { throw Missing(path: path, danglingTarget: target) }
            var st = stat()
            if stat(path, &st) != 0 && errno == ENOENT { throw Missing(path: path) }
            throw Unreadable(path: path, reason: WinkCore.readFailure(path))
        }
        var c = try parse(data, path: path)
        c.path = path
        if let layout = c.overlayLayoutPath, !layout.hasPrefix("/") {
            c.overlayLayoutPath =
                URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent(layout).path
        }
        return c
    }

    /// Parses configuration JSON.
    /// - Throws: `Invalid` listing every problem found.
    public static func parse(_ data: Data, path: String = "configuration") throws -> Configuration {
        var problems: [String] = []
        let root: [String: Any]
        do {
            guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw Invalid(path: path, problems: ["expected a JSON object at the top level"])
            }
            root = withoutNulls(object)
        } catch let e as Invalid {
            throw e
        } catch {
            throw Invalid(path: path, problems: [notValidJSON(error)])
        }
        var c = Configuration()
        problems.append(contentsOf: JSONDuplicateKeys.find(in: data))
        for key in root.keys.sorted() where !knownKeys.contains(key) {
            problems.append("\(key): unknown key (known: \(knownKeys.sorted().joined(separator: ", ")))")
        }
        c.givenKeys = givenKeys(root)
        if let v = root["logLevel"] {
            if let name = v as? String, let level = EventServer.LogLevel(name: name) {
                c.logLevel = level
            } else {
                problems.append("logLevel: expected one of \(EventServer.LogLevel.names.joined(separator: ", "))")
            }
        }
        if let v = root["profile"] {
            if let s = v as? String, !s.isEmpty {
                c.profilePath = s
            } else {
                // "" was taken as the configuration's own folder: "is a directory, not a file", exit 66.
                problems.append("profile: expected a file path" + ((v as? String)?.isEmpty == true ? ", got \"\"" : ""))
            }
        }
        func section<T: Codable>(_ key: String, _ value: inout T) {
            guard let v = root[key] else { return }
            guard let object = v as? [String: Any] else {
                problems.append("\(key): expected an object")
                return
            }
            // Key by key, so that every bad key of a section is named, not only the first.
            for field in object.keys.sorted() {
                do {
                    value = try merge(value, with: [field: object[field]!])
                } catch {
                    problems.append("\(key).\(describeDecodingError(error, field: field, value: object[field]))")
                }
            }
        }
        parseCamera(root["camera"], into: &c, problems: &problems)
        parseSocket(root["socket"], into: &c, problems: &problems)
        parseOverlay(root["overlay"], into: &c, problems: &problems)
        section("coefficients", &c.coefficients)
        section("quality", &c.quality)
        section("tracker", &c.tracker)
        section("calibration", &c.calibration)
        // After "tracker", whose merge decodes a fresh `TrackerSettings` (`mirrored` is not one of its keys).
        if let v = root["mirrored"] {
            if let b = v as? Bool { c.mirrored = b } else { problems.append("mirrored: expected true or false") }
        }

        let replace = (root["replaceDefaultAnalyzers"] as? Bool) ?? false
        c.replaceDefaultAnalyzers = replace
        if let v = root["replaceDefaultAnalyzers"], !(v is Bool) {
            problems.append("replaceDefaultAnalyzers: expected true or false")
        }
        var rows = replace ? [] : AnalyzerRow.defaultTable
        // Replacing the table with none given leaves no expression event at all: most likely a row list
        // forgotten or misspelt. An empty table on purpose (face events only) is `"analyzers": []`.
        if replace && root["analyzers"] == nil {
            problems.append(
                "replaceDefaultAnalyzers: true replaces the default table, but no \"analyzers\" are given "
                    + "(for face events only, give \"analyzers\": [])")
        }
        // Where each row named in the file stands in its list, so that every problem names a row the same way.
        var given: [String: Int] = [:]
        // Rows whose `exit` follows `enter` (a new row without one, or `"exit": null`): enter's problem alone is
        // reported, not an exit the file never wrote. Default rows changed without an `exit`: an enter below
        // the default's exit is enter's problem.
        var exitFollowsEnter: Set<String> = []
        var defaultExitKept: Set<String> = []
        func shown(_ event: String) -> String { event.count > 64 ? event.prefix(64) + "..." : event }
        func label(_ event: String) -> String {
            given[event].map { "analyzers[\($0)] (\(shown(event)))" } ?? "analyzers (the default row '\(shown(event))')"
        }
        if let v = root["analyzers"] {
            if let list = v as? [Any] {
                for (i, item) in list.enumerated() {
                    guard let object = item as? [String: Any], let name = object["event"] as? String else {
                        problems.append("analyzers[\(i)]: expected an object with an \"event\" name")
                        continue
                    }
                    // Two rows for one event in a file: the second silently won.
                    if let first = given[name] {
                        problems.append(
                            "analyzers[\(i)] (\(shown(name))): a second row for '\(shown(name))' "
                                + "(analyzers[\(first)]); give each event's changes in one row")
                        continue
                    }
                    given[name] = i
                    do {
                        if let unknown = object.keys.sorted().first(where: { !AnalyzerRow.keys.contains($0) }) {
                            throw UnknownKey(key: unknown, known: AnalyzerRow.keys.sorted())
                        }
                        let j = rows.firstIndex { $0.event == name }
                        if let j {
                            rows[j] = try merge(rows[j], with: object, knownKeys: AnalyzerRow.keys)
                        } else {
                            rows.append(
                                try JSONDecoder().decode(
                                    AnalyzerRow.self, from: JSONSerialization.data(withJSONObject: object)))
                        }
                        switch object["exit"] {
                        case nil where j != nil: defaultExitKept.insert(name)
                        case nil, is NSNull: exitFollowsEnter.insert(name)
                        default: break
                        }
                    } catch {
                        let field = unfitNumber(in: object)
                        let problem = describeDecodingError(error, field: field, value: field.flatMap { object[$0] })
                        problems.append("analyzers[\(i)] (\(shown(name))).\(problem)")
                    }
                }
            } else {
                problems.append("analyzers: expected a list of rows")
            }
        }
        for row in rows {
            var found = row.fieldProblems()
            if exitFollowsEnter.contains(row.event), found.contains(where: { $0.field == "enter" }) {
                found.removeAll { $0.field == "exit" }
            }
            // The default's exit above a valid enter the file lowered: the one problem is the enter's.
            if defaultExitKept.contains(row.event), (0...1).contains(row.enter), row.exit > row.enter {
                found.removeAll { $0.field == "exit" }
                found.append(("enter", "expected at least exit (\(plainNumber(row.exit)), the default row's; give "
                    + "exit too), got \(plainNumber(row.enter))"))
            }
            problems += found.map { "\(label(row.event)).\($0.field): \($0.problem)" }
        }
        for row in rows where [EventName.faceFound, EventName.faceLost].contains(row.event) {
            problems.append("\(label(row.event)).event: the name is the tracker's own event; choose another")
        }
        // Names must survive `--events a,b`, input-map chords and sequences, and the 8 KiB hello line.
        for row in rows where !row.event.isEmpty {
            if let problem = EventNameRules.problem(with: row.event) {
                problems.append("\(label(row.event)).event: \(problem)")
            }
        }
        if let problem = EventNameRules.helloProblem([EventName.faceFound, EventName.faceLost] + rows.map(\.event)) {
            problems.append("analyzers: \(problem)")
        }
        problems += rangeProblems(c)
        let names = rows.map(\.event)
        for row in rows {
            for s in row.suppressedBy where !names.contains(s) {
                problems.append("\(label(row.event)).suppressedBy: no row named '\(s)'")
            }
            if row.suppressedBy.contains(row.event) {
                problems.append("\(label(row.event)).suppressedBy: a row cannot suppress itself")
            }
        }
        c.analyzers = rows
        guard problems.isEmpty else { throw Invalid(path: path, problems: problems) }
        return c
    }

    /// The numeric settings outside the ranges they can work in, one line each naming the key. A value the
    /// type accepts can still stop winkd: a calibration window of 1e300 seconds overflowed the ring's size
    /// (a trap, also on a SIGHUP reload), 1e9 asked for hundreds of gigabytes, a detection width of 0 failed
    /// inside dlib without naming the key, and negative spans or intervals turned ramps and counters around.
    static func rangeProblems(_ c: Configuration) -> [String] {
        var problems: [String] = []
        func check<T: Comparable & CustomStringConvertible>(
            _ key: String, _ value: T, _ range: ClosedRange<T>, _ what: String = "a number"
        ) {
            guard !range.contains(value) else { return }
            let bounds = "\(plainNumber(range.lowerBound))...\(plainNumber(range.upperBound))"
            problems.append("\(key): expected \(what) in \(bounds), got \(plainNumber(value))")
        }
        let cal = c.calibration
        check("calibration.maximumNeutralEyeClosed", cal.maximumNeutralEyeClosed, 0...1, "a probability")
        check("calibration.windowSeconds", cal.windowSeconds, 1...3600)
        check("calibration.samplesPerSecond", cal.samplesPerSecond, 0.01...120)
        check("calibration.priorWeight", cal.priorWeight, 0...1_000_000)
        check("calibration.expressiveSamplesPerSecond", cal.expressiveSamplesPerSecond, 0...120)
        check("calibration.forgetAfterAbsence", cal.forgetAfterAbsence, 0...86_400)
        check("quality.maximumYaw", c.quality.maximumYaw, 0...180)
        check("quality.maximumEyeYaw", c.quality.maximumEyeYaw, 0...180)
        check("quality.maximumPitch", c.quality.maximumPitch, 0...180)
        check("quality.minimumInterocular", c.quality.minimumInterocular, 0...8192)
        check("quality.minimumBrightness", c.quality.minimumBrightness, 0...255)
        check("quality.minimumVisible", c.quality.minimumVisible, 0...1, "a fraction")
        check("quality.faceLostGrace", c.quality.faceLostGrace, 0...3600)
        check("quality.darkFaceLostAfter", c.quality.darkFaceLostAfter, 0...3600)
        let t = c.tracker
        check("tracker.detectionWidth", t.detectionWidth, 64...8192)
        check("tracker.minimumFaceWidth", t.minimumFaceWidth, 8...8192)
        check("tracker.smallFaceSearchInterval", t.smallFaceSearchInterval, 1...100_000)
        check("tracker.maximumMisses", t.maximumMisses, 0...100_000)
        check("tracker.minimumSimilarity", t.minimumSimilarity, -1...1)
        check("tracker.verifyInterval", t.verifyInterval, 1...100_000)
        check("tracker.trackingSimilarity", t.trackingSimilarity, -1...1)
        let m = c.coefficients
        for (key, value) in [
            ("eyeAspectClosing", m.eyeAspectClosing), ("eyeClosedSpan", m.eyeClosedSpan),
            ("eyeWidening", m.eyeWidening), ("jawSpan", m.jawSpan), ("smileWidthSpan", m.smileWidthSpan),
            ("smileLiftSpan", m.smileLiftSpan), ("browRaiseSpan", m.browRaiseSpan),
            ("browLowerSpan", m.browLowerSpan),
        ] {
            check("coefficients.\(key)", value, 0.001...10)
        }
        check("coefficients.eyeClosedDeadZone", m.eyeClosedDeadZone, 0...1)
        check("coefficients.eyeStateWeight", m.eyeStateWeight, 0...1)
        return problems
    }

    /// The dotted key paths `root` gives: a top-level value's key, a section's `section.key`, an analyzer
    /// row's `analyzers.EVENT.field`.
    static func givenKeys(_ root: [String: Any]) -> Set<String> {
        var keys: Set<String> = []
        for (key, value) in root {
            if key == "analyzers", let rows = value as? [Any] {
                for case let row as [String: Any] in rows {
                    guard let event = row["event"] as? String else { continue }
                    for field in row.keys where field != "event" { keys.insert("analyzers.\(event).\(field)") }
                }
            } else if let section = value as? [String: Any] {
                for field in section.keys { keys.insert("\(key).\(field)") }
            } else {
                keys.insert(key)
            }
        }
        return keys
    }

    /// `object` without its null values, and its sections' (objects one level down): a null means the
    /// default, as if the key were absent (`"profile": null`, `"camera": {"width": null, ...}`), so
    /// `winkctl config --json`'s values and the sample's can be written back.
    static func withoutNulls(_ object: [String: Any]) -> [String: Any] {
        object.filter { !($0.value is NSNull) }.mapValues { value in
            (value as? [String: Any]).map { $0.filter { !($0.value is NSNull) } } ?? value
        }
    }

    /// `camera`: `width`, `height` (whole pixels 1...8192, both or neither), `fps` (> 0, at most 1000).
    static func parseCamera(_ value: Any?, into c: inout Configuration, problems: inout [String]) {
        let known = ["width", "height", "fps"]
        guard let object = sectionObject(value, named: "camera", known: known, problems: &problems) else { return }
        for key in ["width", "height"] {
            guard let v = object[key] else { continue }
            guard let n = wholeNumber(v), n > 0, n <= 8192 else {
                problems.append("camera.\(key): expected a whole number of pixels from 1 to 8192")
                continue
            }
            if key == "width" { c.camera.width = n } else { c.camera.height = n }
        }
        if (object["width"] == nil) != (object["height"] == nil) {
            problems.append("camera: give both width and height, or neither")
        }
        if let v = object["fps"] {
            if let n = number(v), n > 0, n <= 1000 {
                c.camera.framesPerSecond = n
            } else {
                problems.append("camera.fps: expected a number of frames per second above 0 and at most 1000")
            }
        }
    }

    /// The object of an optional section, with one problem per key not in `known` (listed sorted); nil
    /// when the section is absent, or not an object (a problem too).
    static func sectionObject(
        _ value: Any?, named name: String, known: [String],
        problems: inout [String]
    ) -> [String: Any]? {
        guard let value else { return nil }
        guard let object = value as? [String: Any] else {
            problems.append("\(name): expected an object")
            return nil
        }
        for key in object.keys.sorted() where !known.contains(key) {
            problems.append("\(name).\(key): unknown key (known: \(known.sorted().joined(separator: ", ")))")
        }
        return object
    }

    /// `socket`: `mode` (an octal string, "0600"...), `maximumClients` (1...4096).
    static func parseSocket(_ value: Any?, into c: inout Configuration, problems: inout [String]) {
        let known = ["mode", "maximumClients"]
        guard let object = sectionObject(value, named: "socket", known: known, problems: &problems) else { return }
        if let v = object["mode"] {
            if let s = v as? String, !s.isEmpty, s.count <= 4, let mode = UInt32(s, radix: 8), mode <= 0o777 {
                // Connecting needs write permission: without the owner's, winkd's own user (and winkctl run as
                // that user) could not connect, and a daemon nobody can reach was started without a word.
                if mode & 0o600 != 0o600 {
                    problems.append(
                        "socket.mode: \"\(s)\" leaves the owner without read and write, so nobody of winkd's user "
                            + "could connect (\"0600\" is the owner alone, \"0660\" the socket's group too)")
                } else {
                    c.socketMode = mode
                }
            } else {
                problems.append("socket.mode: expected an octal permission string such as \"0660\"")
            }
        }
        if let v = object["maximumClients"] {
            if let n = wholeNumber(v), n >= 1, n <= 4096 {
                c.maximumClients = n
            } else {
                problems.append("socket.maximumClients: expected a whole number from 1 to 4096")
            }
        }
    }

    /// `overlay`: `layout` (a layout JSON file) and `device` (a V4L2 output node), both required; an empty
    /// section (or both null) is no overlay.
    static func parseOverlay(_ value: Any?, into c: inout Configuration, problems: inout [String]) {
        let known = ["layout", "device"]
        guard let object = sectionObject(value, named: "overlay", known: known, problems: &problems),
            !object.isEmpty
        else { return }
        for key in ["layout", "device"] {
            guard let v = object[key] else {
                problems.append("overlay.\(key): required")
                continue
            }
            guard let s = v as? String, !s.isEmpty else {
                problems.append("overlay.\(key): expected a path")
                continue
            }
            if key == "layout" { c.overlayLayoutPath = s } else { c.overlayDevice = s }
        }
    }

    private static func number(_ v: Any) -> Double? {
        // JSONSerialization gives true/false as a boolean NSNumber whose Objective-C type is "c".
        guard let n = v as? NSNumber, String(cString: n.objCType) != "c" else { return nil }
        return n.doubleValue
    }

    private static func wholeNumber(_ v: Any) -> Int? {
        guard let d = number(v), d == d.rounded(), abs(d) < 1e9 else { return nil }
        return Int(d)
    }

    /// `base` with the keys of `object` laid over its JSON form, decoded again.
    /// - Throws: `UnknownKey` for a key `base` does not have (a typo such as `maxYaw` must not pass
    ///   silently), or a `DecodingError`.
    static func merge<T: Codable>(_ base: T, with object: [String: Any], knownKeys: Set<String>? = nil) throws -> T {
        let encoded = try JSONSerialization.jsonObject(with: JSONEncoder().encode(base)) as? [String: Any] ?? [:]
        let known = knownKeys ?? Set(encoded.keys)
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw UnknownKey(key: unknown, known: known.sorted())
        }
        let merged = encoded.merging(object) { _, new in new }
        return try JSONDecoder().decode(T.self, from: JSONSerialization.data(withJSONObject: merged))
    }
}

/// The first key of `object` whose number no setting can hold: beyond single precision (about 3.4e38, the
/// rows' and most settings' type); nil if none.
func unfitNumber(in object: [String: Any]) -> String? {
    object.keys.sorted().first { key in
        guard let n = object[key] as? NSNumber, !(n is Bool) else { return false }
        return abs(n.doubleValue) > Double(Float.greatestFiniteMagnitude)
    }
}

/// "key: expected ..." for a decoding error. JSONDecoder reports a number its type cannot hold (a fraction for
/// a whole number, 1e39 for a single-precision one) with no key ("The given data was not valid JSON."):
/// `field` and `value`, when the caller knows which key it decoded, name it instead.
func describeDecodingError(_ error: Error, field: String? = nil, value: Any? = nil) -> String {
    func path(_ p: [CodingKey]) -> String {
        p.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }
    if case DecodingError.dataCorrupted(let ctx) = error, ctx.codingPath.isEmpty, let field {
        return "\(field): expected a number this setting can hold (a whole number where it counts; at most "
            + "about 3.4e38), got \(value.map { plainNumber(String(describing: $0)) } ?? "null")"
    }
    switch error {
    case DecodingError.typeMismatch(let type, let ctx):
        return "\(path(ctx.codingPath)): expected \(jsonTypeName(type))"
    case DecodingError.valueNotFound(let type, let ctx):
        return "\(path(ctx.codingPath)): expected \(jsonTypeName(type)), got null"
    case DecodingError.keyNotFound(let key, let ctx):
        return "\(path(ctx.codingPath + [key])): required"
    case DecodingError.dataCorrupted(let ctx):
        return "\(path(ctx.codingPath)): \(ctx.debugDescription)"
    default:
        return "\(error)"
    }
}


/// A configuration key that the section or row does not have.
struct UnknownKey: Error, CustomStringConvertible {
    var key: String
    var known: [String]
    var description: String { "\(key): unknown key (known: \(known.joined(separator: ", ")))" }
}
