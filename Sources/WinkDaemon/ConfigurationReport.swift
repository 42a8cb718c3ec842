import EventServer
import Foundation
import WinkCore

/// The configuration in effect, one setting a line: its key (dotted, as in the file: `quality.maximumYaw`,
/// `analyzers.smile.enter`), its value, its unit, and where the value came from: `default`, the
/// configuration file's path, or the flag (`--mirrored`, `--profile`, `--log-level`); a profile found at a
/// default location says `default location`. What `winkctl config` and `winkd --print-config` print.
public struct ConfigurationReport: Sendable {
    /// One setting.
    public struct Setting: Sendable, Equatable {
        /// The dotted key.
        public var key: String
        /// The value as JSON text (`30`, `"info"`, `null`, `["blink"]`); numbers with at most 6 significant
        /// digits (the file's `0.85` is kept as a 32-bit float, whose exact value is 0.850000023841858).
        public var value: String
        /// Its unit or allowed values, when it has one ("degrees", "seconds", "error, warning, ...").
        public var unit: String?
        /// `default`, the configuration file's path, a flag, or `default location`.
        public var from: String
    }

    /// The configuration file read, if any.
    public var file: String?
    /// How that file was chosen: `--config`, or `default location`.
    public var fileChosenBy: String?
    /// Where the file was looked for without `--config`, in order (empty with `--config`).
    public var searched: [String]
    /// Every setting, in the order `text()` prints them.
    public var settings: [Setting]

    /// The report for `configuration` as `request` produced it (`logLevelFlag`: `--log-level`, if given).
    public init(
        configuration c: Configuration, request: ConfigurationRequest,
        logLevelFlag: EventServer.LogLevel? = nil
    ) {
        file = c.path
        fileChosenBy = c.path == nil ? nil : request.configPath != nil ? "--config" : "default location"
        searched = request.configPath == nil ? request.location?.candidates("config.json") ?? [] : []
        var settings: [Setting] = []
        func from(_ key: String, flag: String? = nil) -> String {
            if let flag { return flag }
            if let path = c.path, c.givenKeys.contains(key) { return path }
            return "default"
        }
        func add(_ key: String, _ value: Any?, flag: String? = nil) {
            settings.append(
                Setting(key: key, value: Self.json(value), unit: Self.units[key], from: from(key, flag: flag)))
        }
        add("logLevel", (logLevelFlag ?? c.logLevel ?? .info).name, flag: logLevelFlag.map { _ in "--log-level" })
        add("mirrored", c.mirrored, flag: request.mirrored ? "--mirrored" : nil)
        let profileFlag =
            request.profilePath != nil
            ? "--profile"
            : !c.givenKeys.contains("profile") && c.profilePath != nil ? "default location" : nil
        add("profile", c.resolvedProfilePath, flag: profileFlag)
        add("camera.width", c.camera.width)
        add("camera.height", c.camera.height)
        add("camera.fps", c.camera.framesPerSecond)
        add("socket.mode", Self.octal(c.socketMode))
        add("socket.maximumClients", c.maximumClients)
        add("overlay.layout", c.overlayLayoutPath)
        add("overlay.device", c.overlayDevice)
        for (section, value) in [
            ("coefficients", Self.object(c.coefficients)), ("quality", Self.object(c.quality)),
            ("tracker", Self.object(c.tracker)), ("calibration", Self.object(c.calibration)),
        ] {
            for key in value.keys.sorted() { add("\(section).\(key)", value[key]) }
        }
        add("replaceDefaultAnalyzers", c.replaceDefaultAnalyzers)
        for row in c.analyzers {
            let fields = Self.object(row)
            for key in fields.keys.sorted() where key != "event" {
                let path = "analyzers.\(row.event).\(key)"
                settings.append(
                    Setting(
                        key: path, value: Self.json(fields[key]), unit: Self.units["analyzers.\(key)"],
                        from: from(path)))
            }
        }
        self.settings = settings
    }

    /// The furthest column (0-based) at which `text()` aligns its comments.
    static let commentColumn = 50

    /// Commented text: a header naming the file (or the places searched), then `key = value` lines, each
    /// with `# unit; from` after it, aligned in one column (at most `commentColumn`).
    public func text() -> String {
        var out = "# winkd's configuration in effect (winkctl config, winkd --print-config)\n"
        if let file, let fileChosenBy {
            out += "# file: \(file) (\(fileChosenBy))\n"
        } else {
            out += "# file: none"
            out += searched.isEmpty ? "\n" : " (looked for \(searched.joined(separator: ", ")))\n"
        }
        let left = settings.map { "\($0.key) = \($0.value)" }
        // One comment column for every setting that fits before it (the longest built-in key with its
        // value is 43 characters); longer lines (formulas, long event names) keep two spaces.
        let width = left.map(\.count).filter { $0 <= Self.commentColumn - 2 }.max() ?? 0
        for (setting, text) in zip(settings, left) {
            let pad = String(repeating: " ", count: max(2, width - text.count + 2))
            out += text + pad + "# " + (setting.unit.map { "\($0); " } ?? "") + setting.from + "\n"
        }
        return out
    }

    /// One JSON document: `{"file":...,"fileChosenBy":...,"searched":[...],"settings":[{"key":...,"value":...,
    /// "unit":...,"from":...}]}` (`file`, `fileChosenBy` and `unit` null when there is none).
    public func json() -> String {
        let rows = settings.map { s in
            "{\"key\":\(Self.json(s.key)),\"value\":\(s.value),"
                + "\"unit\":\(Self.json(s.unit)),\"from\":\(Self.json(s.from))}"
        }
        return "{\"file\":\(Self.json(file)),\"fileChosenBy\":\(Self.json(fileChosenBy)),"
            + "\"searched\":[\(searched.map { Self.json($0) }.joined(separator: ","))],"
            + "\"settings\":[\n\(rows.joined(separator: ",\n"))\n]}\n"
    }

    /// Units and allowed values of the settings that have them.
    static let units: [String: String] = [
        "logLevel": "error, warning, notice, info or debug",
        "profile": "a file from winkctl calibrate",
        "camera.width": "pixels (null: the largest up to 640x480)",
        "camera.height": "pixels (null: the largest up to 640x480)",
        "camera.fps": "frames per second",
        "socket.mode": "octal permission bits",
        "socket.maximumClients": "clients, 1...4096",
        "overlay.layout": "a layout JSON file",
        "overlay.device": "a V4L2 output device",
        "coefficients.eyeAspectClosing": "fraction of the neutral eye aspect ratio",
        "coefficients.eyeClosedDeadZone": "closed probability, 0...1",
        "coefficients.eyeClosedSpan": "closed probability, 0...1",
        "coefficients.eyeStateWeight": "weight, 0...1",
        "coefficients.eyeWidening": "fraction of the neutral eye aspect ratio",
        "coefficients.jawSpan": "interocular distances",
        "coefficients.smileWidthSpan": "interocular distances",
        "coefficients.smileLiftSpan": "interocular distances",
        "coefficients.browRaiseSpan": "interocular distances",
        "coefficients.browLowerSpan": "interocular distances",
        "quality.maximumYaw": "degrees",
        "quality.maximumEyeYaw": "degrees",
        "quality.maximumPitch": "degrees",
        "quality.minimumInterocular": "pixels",
        "quality.minimumBrightness": "grey level, 0...255",
        "quality.minimumVisible": "fraction of the eye or mouth region, 0...1",
        "quality.faceLostGrace": "seconds",
        "quality.darkFaceLostAfter": "seconds",
        "tracker.detectionWidth": "pixels",
        "tracker.minimumFaceWidth": "pixels",
        "tracker.smallFaceSearchInterval": "frames",
        "tracker.maximumMisses": "frames",
        "tracker.minimumSimilarity": "correlation, -1...1",
        "tracker.verifyInterval": "frames",
        "tracker.trackingSimilarity": "correlation, -1...1",
        "calibration.windowSeconds": "seconds",
        "calibration.samplesPerSecond": "samples per second",
        "calibration.priorWeight": "samples",
        "calibration.expressiveSamplesPerSecond": "samples per second",
        "calibration.maximumNeutralEyeClosed": "eye-state probability, 0...1",
        "calibration.forgetAfterAbsence": "seconds without a face",
        "analyzers.kind": "held or oneShot",
        "analyzers.value": "formula over coefficients, 0...1",
        "analyzers.enter": "coefficient, 0...1",
        "analyzers.exit": "coefficient, 0...1",
        "analyzers.minDuration": "seconds",
        "analyzers.maxDuration": "seconds",
        "analyzers.cooldown": "seconds",
        "analyzers.releaseDelay": "seconds",
        "analyzers.endDelay": "seconds",
        "analyzers.rearm": "coefficient, 0...exit",
        "analyzers.gate": "eyes, mouth or none",
        "analyzers.suppressedBy": "event names",
    ]

    /// Permission bits as the file gives them: four octal digits ("0600", "0660"; it printed 0 as "00").
    static func octal(_ mode: UInt32) -> String {
        let digits = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// A Codable value's JSON object, as `JSONSerialization` reads it back.
    private static func object(_ value: some Encodable) -> [String: Any] {
        guard let data = try? JSONEncoder().encode(value),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return [:] }
        return object
    }

    /// `value` as JSON text: nil as `null`, numbers with at most 6 significant digits.
    static func json(_ value: Any?) -> String {
        guard let value, !(value is NSNull) else { return "null" }
        switch value {
        case let b as Bool where Swift.type(of: value) == Bool.self: return b ? "true" : "false"
        case let i as Int where Swift.type(of: value) == Int.self: return String(i)
        case let f as Float where Swift.type(of: value) == Float.self: return number(Double(f))
        case let d as Double where Swift.type(of: value) == Double.self: return number(d)
        case let s as String: return quoted(s)
        case let n as NSNumber:
            // JSONSerialization's true and false are NSNumbers of Objective-C type "c".
            if String(cString: n.objCType) == "c" { return n.boolValue ? "true" : "false" }
            return number(n.doubleValue)
        case let list as [Any]: return "[" + list.map { json($0) }.joined(separator: ",") + "]"
        default: return quoted("\(value)")
        }
    }

    private static func number(_ d: Double) -> String {
        d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(format: "%.6g", d)
    }

    private static func quoted(_ s: String) -> String {
        let data =
            (try? JSONSerialization.data(withJSONObject: [s], options: [.withoutEscapingSlashes]))
            ?? Data("[\"\"]".utf8)
        return String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
    }
}
