import Capture
import Foundation
import WinkCore
import WinkDaemon

/// `winkctl evaluate LABELS...`: runs the pipeline on each labelled clip and scores it (SPEC.md "Labels
/// files"). Each argument is a labels file or a folder of them (a folder with a `labels/` subfolder, such
/// as ../shared/fixtures/people, is read from there). Prints a line per clip, then per event name, per
/// group (eye, mouth and face events), the false winks, and the total; `--json` prints the same as one JSON
/// document. `--events-from DIR` scores the event lines in `DIR/CLIP.ndjson` (CLIP: the labels file's name
/// without `.labels.json`) instead of running the pipeline: another detector's output (such as
/// ../shared/tools/mediapipe_peer.py), scored by the same rule. `--rotate`, `--scale`, `--gain` and
/// `--noise` score the clips as seen through that transform (`TransformOptions`): footage unlike the labelled
/// recordings. Exit 0, or 1 when the total F1 is below `--min-f1`.
enum EvaluateCommand {
    static let command = WinkctlMain.Command(
        spec: CommandSpec(
            name: "evaluate",
            summary: "score the pipeline (or another detector's lines) against labelled clips (SPEC.md's rule)",
            operands: [("LABELS.json|FOLDER...", "labels files, or folders holding labels/*.labels.json")],
            options: CommonOptions.specs + [
                CommonOptions.eyeModelSpec,
                OptionSpec("--min-f1", .text("X"), "exit 1 when the total F1 is below X, 0...1"),
                OptionSpec(
                    "--verbose",
                    "print every clip's whole accounting: each occurrence found, ignored (in a dontcare range) "
                        + "or false, and each miss (without it: the false positives and misses of imperfect clips)"),
                OptionSpec("--json", "print one JSON document instead of the text report"),
                OptionSpec(
                    "--events-from", .directory("DIR"),
                    "score DIR/CLIP.ndjson (another detector's event lines) instead of running the pipeline"),
            ] + TransformOptions.specs + [.quiet]),
        run: run)

    /// The groups of the summary, by event name.
    static let groups: [(name: String, events: Set<String>)] = [
        ("eye events", [EventName.blink, EventName.eyesClosed, EventName.winkLeft, EventName.winkRight]),
        ("mouth events", [EventName.smile, EventName.mouthOpen]),
        ("face events", [EventName.faceFound, EventName.faceLost]),
    ]

    /// One clip's result.
    struct ClipResult: Encodable {
        var labels: String
        var video: String
        var score: ClipScore
        /// What was said on stderr about this clip (unknown labels keys, a name no row emits, a damaged
        /// recording, a frame count that differs from the labels'), so that `--json` readers see it too.
        var warnings: [String] = []
        /// False positives of `winkLeft`/`winkRight`, as "winkLeft@frame".
        var falseWinks: [String] { score.falseWinks.map { "\($0.event)@\($0.frame)" } }

        enum CodingKeys: String, CodingKey { case labels, video, total, events, findings, falseWinks, warnings }
        func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(labels, forKey: .labels)
            try c.encode(video, forKey: .video)
            try c.encode(score.total, forKey: .total)
            try c.encode(score.byEvent, forKey: .events)
            try c.encode(score.findings, forKey: .findings)
            try c.encode(falseWinks, forKey: .falseWinks)
            try c.encode(warnings, forKey: .warnings)
        }
    }

    /// The whole run, as `--json` prints it.
    struct Report: Encodable {
        /// The transform the clips were seen through (`--rotate 15 --noise 4`); absent when none.
        var transform: String?
        var clips: [ClipResult]
        var events: [String: Score]
        var groups: [String: Score]
        var falseWinks: Int
        var total: Score
    }

    static func run(_ args: inout Arguments) throws -> ExitCode {
        let options = try CommonOptions(&args)
        let minF1: Double? = try args.number("--min-f1", in: 0.0...1.0)
        let verbose = args.flag("--verbose")
        let json = args.flag("--json")
        let eventsFrom = try args.option("--events-from")
        let quiet = args.flag("--quiet")
        let transform = try TransformOptions.parse(&args)
        var inputs: [String] = []
        while let f = args.positional() { inputs.append(f) }
        try args.finish()
        guard !inputs.isEmpty else { throw UsageError("evaluate: which labels files? \(command.usage)") }
        if eventsFrom != nil, !TransformOptions.isIdentity(transform) {
            throw UsageError(
                "evaluate: --events-from scores recorded lines; "
                    + "--rotate, --scale, --gain and --noise need the pipeline")
        }
        var warnings: [String: [String]] = [:]
        func warn(_ file: String, _ line: String) {
            printError("evaluate: \(file): \(line)")
            warnings[file, default: []].append(line)
        }
        var repeated: [(given: String, first: String)] = []
        let files = try labelsFiles(inputs) { repeated.append(($0, $1)) }
        // Said against the file that is scored, so that `--json` readers see it in that clip's warnings.
        for (given, first) in repeated { warn(first, "given again as \(given); scored once") }
        // Every labels file is read first, so a bad one (stills labels, a broken file) is refused before any
        // clip is scored, not after minutes of others.
        let allLabels = try files.map { try ClipLabels.load(path: $0) }
        for (file, labels) in zip(files, allLabels) {
            for line in labels.ignoredKeys { warn(file, line) }
        }
        // A name no row can emit is scored as always missed, or never seen in `absent`/`dontcare`: most likely
        // a typo, said once per file (recorded lines from another detector may use names of their own).
        if eventsFrom == nil {
            let known = Set(options.configuration.analyzers.map(\.event) + [EventName.faceFound, EventName.faceLost])
            for (file, labels) in zip(files, allLabels) {
                let unknown = labels.eventNames.filter { !known.contains($0) }
                if !unknown.isEmpty {
                    warn(file, "no row of the analyzer table emits "
                         + unknown.map { "'\($0)'" }.joined(separator: ", ") + " (a misspelt name?)")
                }
            }
        }

        var clips: [ClipResult] = []
        let progress = RunProgress(command: "evaluate", quiet: quiet)
        progress.readsRecordedLines = eventsFrom != nil
        for (file, labels) in zip(files, allLabels) {
            let events: [ExpressionEvent]
            if let eventsFrom {
                events = try recordedEvents(
                    URL(fileURLWithPath: eventsFrom).appendingPathComponent(clipName(file) + ".ndjson").path)
                progress.frame(events: events.filter(\.isOccurrence).count)
            } else {
                var configuration = options.configuration
                if labels.mirrored { configuration.mirrored = true }
                var clipOptions = CommonOptions(configuration: configuration, modelPath: options.modelPath)
                clipOptions.eyeModelPath = options.eyeModelPath
                let pipeline = try clipOptions.makePipeline()
                let source = TransformOptions.apply(transform, to: try openMediaFile(path: labels.video))
                progress.begin(labels.video, expectedFrames: source.expectedFrameCount)
                var all: [ExpressionEvent] = []
                var lastFrame = -1
                try pipeline.run(source) { info, face in
                    if info.index != lastFrame {
                        progress.frame(face: face != nil, events: 0)
                        lastFrame = info.index
                    }
                    progress.frame(events: pipeline.engine.events.filter(\.isOccurrence).count)
                    all += pipeline.engine.events
                }
                progress.warnIfDamaged(source)
                if let damage = source.damage { warnings[file, default: []].append("\(labels.video): \(damage)") }
                // Either count may be the labeller's: the frames shown, or those the container stores (an MP4
                // edit list hides 3 of no_face.mp4's 98).
                if lastFrame + 1 != labels.frames && source.expectedFrameCount != labels.frames {
                    progress.clear()
                    warn(file, "the labels say \(labels.frames) frames; the video gave \(lastFrame + 1)")
                }
                events = all
            }
            let result = score(events: events, labels: labels)
            let clip = ClipResult(labels: file, video: labels.video, score: result, warnings: warnings[file] ?? [])
            clips.append(clip)
            if !json {
                progress.clear()
                let t = result.total
                print("\(file): tp=\(t.truePositives) fp=\(t.falsePositives) missed=\(t.misses) f1=\(format(t.f1))")
                if verbose {
                    for line in result.accounting { print("  \(line)") }
                } else if t.f1 < 1 {
                    for line in result.findings { print("  \(line)") }
                }
            }
        }
        var events: [String: Score] = [:]
        for clip in clips { for (name, s) in clip.score.byEvent { events[name] = events[name, default: Score()] + s } }
        var groupScores: [String: Score] = [:]
        for g in groups {
            groupScores[g.name] = events.filter { g.events.contains($0.key) }.values.reduce(Score(), +)
        }
        let total = events.values.reduce(Score(), +)
        let falseWinks = clips.flatMap { clip in clip.falseWinks.map { "\(clipName(clip.labels)) \($0)" } }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let report = Report(
                transform: TransformOptions.describe(transform), clips: clips, events: events, groups: groupScores,
                falseWinks: falseWinks.count, total: total)
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            print("")
            if let seen = TransformOptions.describe(transform) { print("clips seen through: \(seen)") }
            print(row("event", "tp", "fp", "missed", "precision", "recall", "f1"))
            for name in events.keys.sorted() { print(row(name, events[name]!)) }
            print("")
            for g in groups { print(row(g.name, groupScores[g.name]!)) }
            print(
                "false winks: \(falseWinks.count)"
                    + (falseWinks.isEmpty ? "" : " (" + falseWinks.joined(separator: ", ") + ")"))
            print(row("total", total))
        }
        progress.finish(
            extra: "\(files.count) clip\(files.count == 1 ? "" : "s")"
                + (TransformOptions.describe(transform).map { " seen through \($0)" } ?? "")
                + ", total F1 \(format(total.f1))")
        if let minF1, total.f1 < minF1 {
            printError("winkctl: total F1 \(format(total.f1)) is below --min-f1 \(minF1)")
            return .failure
        }
        return .ok
    }

    /// The labels files named by `inputs`: folders expanded to their `*.labels.json` (from their `labels/`
    /// subfolder when they have one), sorted, leaving out labels for still images (evaluate scores clips);
    /// anything else as given, for `ClipLabels.load` to read or refuse.
    /// A file given twice (by the same or another path, or in a folder given too) is kept once, at its first
    /// place; `repeated` is told each later path and the first one.
    /// - Throws: `LabelsError` (66) for a folder without clip labels files.
    static func labelsFiles(
        _ inputs: [String], repeated: (_ given: String, _ first: String) -> Void = { _, _ in }
    ) throws -> [String] {
        var files: [String] = []
        let fm = FileManager.default
        for input in inputs {
            var isFolder: ObjCBool = false
            guard fm.fileExists(atPath: input, isDirectory: &isFolder), isFolder.boolValue else {
                files.append(input)
                continue
            }
            var folder = URL(fileURLWithPath: input)
            var sub: ObjCBool = false
            if fm.fileExists(atPath: folder.appendingPathComponent("labels").path, isDirectory: &sub), sub.boolValue {
                folder = folder.appendingPathComponent("labels")
            }
            let found = ((try? fm.contentsOfDirectory(atPath: folder.path)) ?? [])
                .filter { $0.hasSuffix(".labels.json") }.sorted()
                .map { folder.appendingPathComponent($0).path }
                .filter { !isStillsLabels($0) }
            guard !found.isEmpty else {
                throw LabelsError(
                    path: input, reason: "no *.labels.json clip labels in this folder", exitCode: .noInput)
            }
            files += found
        }
        // The same file twice (`evaluate a.json a.json`, or a folder and a file in it) was scored twice.
        var kept: [String] = []
        for file in files {
            if let first = kept.first(where: { $0 == file || sameFile($0, file) }) {
                repeated(file, first)
            } else {
                kept.append(file)
            }
        }
        return kept
    }

    /// The `event` lines of an NDJSON file (other lines, such as coefficients, hello or status, are skipped).
    /// - Throws: `LabelsError` (66) for a missing, unreadable or non-regular file, (65) for a line that is not
    ///   JSON or an event line without its fields, naming the line.
    static func recordedEvents(_ path: String) throws -> [ExpressionEvent] {
        // A FIFO without a writer would block the read for ever.
        if let reason = nonRegularFileReason(path) { throw LabelsError(path: path, reason: reason, exitCode: .noInput) }
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path)
                ? "cannot read the event file" + readFailureNote(path) : "no such event file"
            throw LabelsError(path: path, reason: reason, exitCode: .noInput)
        }
        let decoder = JSONDecoder()
        var events: [ExpressionEvent] = []
        var unknownTypes: [String: Int] = [:]
        defer {
            if !unknownTypes.isEmpty {
                let listed = unknownTypes.sorted { $0.key < $1.key }.map { "\($0.value) '\($0.key)'" }
                printError("evaluate: \(path): skipped lines of types winkd does not send: "
                           + listed.joined(separator: ", ") + " (only \"type\":\"event\" lines are scored)")
            }
        }
        // Blank lines count (an editor's line numbers), and are skipped.
        for (number, line) in data.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated()
        where !line.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else {
                throw LabelsError(path: path, reason: "line \(number + 1): not a JSON object", exitCode: .dataError)
            }
            // {"event":"faceFound",...,"event":"smile"} was scored as one of them, as labels files are not.
            if let repeated = JSONDuplicateKeys.find(in: Data(line)).first {
                throw LabelsError(path: path, reason: "line \(number + 1): \(repeated)", exitCode: .dataError)
            }
            // Lines without a type, or of a type winkd never sends ("Event"), were skipped without a word.
            guard let type = object["type"] as? String else {
                throw LabelsError(path: path, reason: "line \(number + 1): no \"type\" (an event line has "
                                  + "\"type\":\"event\")", exitCode: .dataError)
            }
            guard type == "event" else {
                if !Self.lineTypes.contains(type) { unknownTypes[type, default: 0] += 1 }
                continue
            }
            if let problem = eventLineProblem(object) {
                throw LabelsError(path: path, reason: "line \(number + 1): \(problem)", exitCode: .dataError)
            }
            do {
                events.append(try decoder.decode(ExpressionEvent.self, from: Data(line)))
            } catch {
                throw LabelsError(
                    path: path, reason: "line \(number + 1): not an event line (\(error))", exitCode: .dataError)
            }
        }
        return events
    }

    /// The `type`s of the lines winkd and `winkctl analyze` write (SPEC.md "The event socket", README),
    /// which an event file may hold besides its event lines.
    static let lineTypes: Set<String> = [
        "hello", "event", "coefficients", "status", "heartbeat", "dropped", "bye", "ok", "error", "analyzers", "rows",
        "measures", "eyeFeatures",
    ]

    /// What is wrong with an event line's fields (SPEC.md's event line), in words, or nil: the decoder's own
    /// messages named Swift types ("DecodingError.keyNotFound ... CodingKeys(stringValue: \"frame\" ...").
    static func eventLineProblem(_ object: [String: Any]) -> String? {
        func number(_ key: String) -> Double? {
            guard let value = object[key], !ClipLabels.isJSONBool(value) else { return nil }
            return (value as? NSNumber)?.doubleValue
        }
        guard let name = object["event"] as? String, !name.isEmpty else {
            return "event: expected the event's name"
        }
        guard let frame = number("frame"), frame >= 0, frame == frame.rounded(), frame <= Double(Int32.max) else {
            return "frame: expected a whole number, 0 or more"
        }
        guard let time = number("time"), time.isFinite, time >= 0 else {
            return "time: expected seconds, 0 or more"
        }
        if let phase = object["phase"], !(phase is NSNull) {
            guard let text = phase as? String, EventPhase(rawValue: text) != nil else {
                return "phase: expected began, ended or occurred"
            }
        }
        return nil
    }

    /// Whether `path` holds labels for still images (`images` and no `video`).
    static func isStillsLabels(_ path: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: path),
            let root = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        else { return false }
        return root["images"] != nil && root["video"] == nil
    }

    static func clipName(_ path: String) -> String {
        let base = URL(fileURLWithPath: path).lastPathComponent
        return base.hasSuffix(".labels.json") ? String(base.dropLast(".labels.json".count)) : base
    }

    static func row(_ name: String, _ s: Score) -> String {
        row(
            name, "\(s.truePositives)", "\(s.falsePositives)", "\(s.misses)", format(s.precision), format(s.recall),
            format(s.f1))
    }

    static func row(
        _ name: String, _ tp: String, _ fp: String, _ missed: String, _ p: String, _ r: String,
        _ f1: String
    ) -> String {
        pad(name, 14) + pad(tp, 5) + pad(fp, 5) + pad(missed, 8) + pad(p, 11) + pad(r, 8) + f1
    }

    static func format(_ x: Double) -> String { String(format: "%.3f", x) }
    static func pad(_ s: String, _ n: Int) -> String {
        s.count >= n ? s + " " : s + String(repeating: " ", count: n - s.count)
    }
}
