import Capture
import Expressions
import Foundation
import WinkCore
import WinkDaemon

/// `winkctl calibrate --source FILE|DEVICE -o PROFILE.json`: records a person's neutral face and deliberate
/// expressions and writes the calibration profile winkd loads (configuration key `profile`, or `--profile`).
///
/// From a camera (a `/dev/` path) the recording is guided: each step is prompted on stderr and lasts
/// `--seconds-per-step` seconds, of which the first 0.5 s (reaction time) is discarded. From a file,
/// `--segments neutral=0-0.6,smile=1.0-2.0` says which seconds of the recording show which expression;
/// without it, the file is taken to follow the same schedule as a guided recording. Each step's measures
/// are the median over its frames with a usable face (inside the quality gate).
enum CalibrateCommand {
    static let command = WinkctlMain.Command(
        spec: CommandSpec(
            name: "calibrate",
            summary: "learn a per-person profile from a guided camera session or a recording",
            options: [
                OptionSpec(
                    "--source", .file("FILE|DEVICE"),
                    "a recording, or a camera (/dev/...) for a guided session; required"),
                OptionSpec("--output", aliases: ["-o"], .file("PROFILE.json"), "where to write the profile; required"),
                OptionSpec(
                    "--steps", .text("STEP,..."),
                    "the expressions to record: neutral, eyesClosed, winkLeft, winkRight, smile, mouthOpen, browsUp",
                    default: "all seven"),
                OptionSpec("--seconds-per-step", .text("S"), "seconds each guided step lasts, 1...60", default: "3"),
                OptionSpec(
                    "--segments", .text("STEP=START-END,..."), "which seconds of a recording show which expression",
                    default: "the guided schedule"),
            // Not --profile: the profile being recorded is not read (it was taken and ignored without a word).
            ] + CommonOptions.specs.filter { $0.name != "--profile" }),
        run: run)

    /// Seconds at the start of each guided step that are not recorded.
    static let reactionSeconds = 0.5

    static func run(_ args: inout Arguments) throws -> ExitCode {
        var options = try CommonOptions(&args)
        let sourcePath = try args.option("--source")
        let output = try args.option("--output", or: "-o")
        let stepsText = try args.option("--steps")
        let secondsGiven: Double? = try args.number("--seconds-per-step", in: 1.0...60.0)
        let secondsPerStep = secondsGiven ?? 3
        let segmentsText = try args.option("--segments")
        try args.finish()
        let usage = "\(command.usage)"
        guard let sourcePath else { throw UsageError("calibrate: which source (--source FILE|DEVICE)? \(usage)") }
        guard let output else { throw UsageError("calibrate: where to write the profile (-o PROFILE.json)? \(usage)") }
        try OutputFile.checkCreatable(output)  // before the recording, not after it
        // The recording or the configuration was replaced by the profile (the profile in use may be: it is
        // left out of the recording, and a new calibration replaces it).
        try refuseOverwriting(
            output, command: "calibrate", what: "the profile", option: "-o",
            inputs: [("recording", sourcePath), ("configuration", options.configPath),
                     ("eye model", options.eyeModelPath)])
        let live = SourceKind(source: sourcePath) == .camera
        let segments: [CalibrationProfile.Segment]
        if let segmentsText {
            guard !live else { throw UsageError("calibrate: --segments is for a recorded file, not a camera") }
            guard stepsText == nil else { throw UsageError("calibrate: give --steps or --segments, not both") }
            guard secondsGiven == nil else {
                throw UsageError("calibrate: give --seconds-per-step or --segments, not both (--segments says the seconds)")
            }
            do {
                segments = try CalibrationProfile.parseSegments(segmentsText)
            } catch {
                throw UsageError("calibrate: --segments: \(error)")
            }
        } else {
            let steps = try parseSteps(stepsText)
            segments = CalibrationProfile.schedule(steps, secondsPerStep: secondsPerStep, discard: reactionSeconds)
        }

        // The profile being recorded must not be needed to record it.
        options.configuration.profilePath = nil
        let pipeline = try options.makePipeline()
        let source: FrameSource = live ? try V4L2Camera(path: sourcePath) : try openMediaFile(path: sourcePath)
        defer { source.close() }
        let profile = try record(
            source: source, segments: segments, pipeline: pipeline,
            guided: live ? secondsPerStep : nil,
            segmentsOrigin: segmentsText != nil
                ? "--segments"
                : "the steps' schedule (\(formatSeconds(secondsPerStep)) s each; give --segments for a recording)",
            say: printError)
        if let damage = source.damage { printError("calibrate: \(source.name): \(damage)") }
        // A profile of whoever was largest is not the user's if another face was there (quietly before).
        if pipeline.tracker.mostFacesFound > 1 {
            printError("calibrate: \(source.name): \(pipeline.tracker.mostFacesFound) faces were in view at once; "
                       + "the profile is of the largest (record one person alone to be sure it is theirs)")
        }
        try profile.save(to: output)
        print(summary(profile, output: output, model: options.configuration.coefficients))
        // One line on stderr too: a profile that keeps the defaults where the user meant to teach it.
        let wrongWay = profile.spanDerivations().filter { d in
            d.value == nil && (d.change ?? 0) <= -d.span.minimumChange
        }
        if !wrongWay.isEmpty {
            let steps = Set(wrongWay.flatMap(\.steps)).map(\.rawValue).sorted().joined(separator: ", ")
            let check = segmentsText != nil
                ? "is --segments right? each step's seconds must show that expression, neutral's a relaxed face"
                : "was each expression made when asked, and the face relaxed for neutral?"
            printError("calibrate: \(steps) moved the face the other way from the neutral's (\(check)); "
                       + "those spans keep the defaults")
        }
        return .ok
    }

    /// `--steps` as steps in order; `neutral` first when missing (it is required). All steps when `nil`.
    /// - Throws: `UsageError` for an unknown or repeated step.
    static func parseSteps(_ text: String?) throws -> [CalibrationProfile.Step] {
        guard let text else { return CalibrationProfile.Step.allCases }
        var steps: [CalibrationProfile.Step] = []
        for name in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            guard let step = CalibrationProfile.Step(rawValue: name) else {
                throw UsageError(
                    "calibrate: --steps: unknown step '\(name)' (known: "
                        + CalibrationProfile.Step.allCases.map(\.rawValue).joined(separator: ", ") + ")")
            }
            guard !steps.contains(step) else { throw UsageError("calibrate: --steps: '\(name)' given twice") }
            steps.append(step)
        }
        if !steps.contains(.neutral) { steps.insert(.neutral, at: 0) }
        return steps
    }

    /// Fewer frames than this in a step of a file is said: one frame's measures are that frame's noise.
    static let fewFrames = 5

    /// Runs `pipeline` over `source` and makes the profile from the measures of the frames in `segments`.
    ///
    /// For a file the segments are in the file's own frame time. With `guided` (the seconds per step of a
    /// live recording), they are relative to the first frame; each step's prompt goes to `say` when its
    /// time comes, and reading stops after the last segment.
    /// `segmentsOrigin` names where the segments came from in messages. For a file, a segment that runs
    /// past the recording's last frame is refused (the profile would be learned from other seconds than
    /// those named), and a step of fewer than `fewFrames` frames is said; not for a still image.
    /// - Throws: the source's `CaptureError`, `FaceTrackingError`, `CalibrationProfileError.noFace` (65),
    ///   `UsageError` (64) for a segment past the end of a file.
    static func record(
        source: FrameSource, segments: [CalibrationProfile.Segment], pipeline: FramePipeline,
        guided secondsPerStep: Double? = nil, segmentsOrigin: String = "--segments",
        say: (String) -> Void = { _ in }
    ) throws -> CalibrationProfile {
        var recorder = CalibrationProfile.Recorder(segments: segments)
        let buffer = PixelBuffer()
        let end = segments.map(\.end).max() ?? 0
        var start: Double?
        var last: (time: Double, interval: Double)?
        var framesIn = [Int](repeating: 0, count: segments.count)  // frames whose time each segment holds
        var prompted = -1
        if secondsPerStep != nil { say("calibrate: \(segments.count) steps; follow the prompts, face the camera") }
        while let info = try source.read(into: buffer) {
            let first = start ?? info.time
            start = first
            let t = secondsPerStep == nil ? info.time : info.time - first
            last = (t, last.map { t - $0.time } ?? 0)
            for (i, segment) in segments.enumerated() where segment.contains(t) { framesIn[i] += 1 }
            if let s = secondsPerStep {
                let step = Int(t / s)
                if step != prompted && step < segments.count {
                    if prompted >= 0 {
                        say("  \(segments[prompted].step.rawValue): \(recorder.count(segments[prompted].step)) frames")
                    }
                    prompted = step
                    say("[\(step + 1)/\(segments.count)] \(segments[step].step.prompt)... \(formatSeconds(s)) s")
                }
            }
            if t > end && secondsPerStep != nil { break }
            guard let face = try pipeline.process(buffer, info: info).face,
                pipeline.configuration.quality.gates(for: face) == .open
            else { continue }
            recorder.add(pipeline.engine.measures, time: t)
        }
        if secondsPerStep != nil, prompted >= 0 {
            say("  \(segments[prompted].step.rawValue): \(recorder.count(segments[prompted].step)) frames")
        }
        // A still image is one instant whatever the segments say (its one frame is in each that holds 0 s).
        if secondsPerStep == nil, !source.isStill, let last {
            // A range reaching past the end of the last frame (by more than a frame: a container's duration may
            // count one more) named seconds the file does not have: "neutral=0-100" on a 2.4 s clip learned
            // its smile as the neutral face without a word.
            let past = segments.filter { $0.end > last.time + 2 * last.interval + 1e-3 }
            if !past.isEmpty {
                throw UsageError(
                    "calibrate: \(segmentsOrigin): " + past.map(\.description).joined(separator: ", ")
                        + " \(past.count == 1 ? "runs" : "run") past the end of \(source.name) "
                        + "(its last frame is at \(String(format: "%.3f", last.time)) s)")
            }
            // Between two frames ("neutral=2.39-2.4" with frames at 2.367 and 2.4 exclusive): nothing to learn.
            let empty = segments.indices.filter { framesIn[$0] == 0 }.map { segments[$0].description }
            if !empty.isEmpty {
                throw UsageError(
                    "calibrate: \(segmentsOrigin): " + empty.joined(separator: ", ")
                        + " \(empty.count == 1 ? "holds" : "hold") no frame of \(source.name) "
                        + "(a frame every \(String(format: "%.3f", last.interval)) s)")
            }
            var told: Set<CalibrationProfile.Step> = []
            for segment in segments where !told.contains(segment.step) {
                told.insert(segment.step)
                let n = recorder.count(segment.step)
                if n > 0 && n < fewFrames {
                    say("calibrate: \(segment.step.rawValue): only \(n) frame\(n == 1 ? "" : "s") with a usable face; "
                        + "its median is as noisy as they are (give it a second or more)")
                }
            }
        }
        return try recorder.profile(source: source.name)
    }

    /// The lines printed after writing: each coefficient's measures with their neutral and their span before
    /// and after personalisation (in the measure's own units), and where the span came from.
    static func summary(_ profile: CalibrationProfile, output: String, model: CoefficientModel) -> String {
        typealias Span = CalibrationProfile.Span
        let derivations = Dictionary(uniqueKeysWithValues: profile.spanDerivations().map { ($0.span, $0) })
        let personal = profile.personalised(model)
        let n = profile.neutral
        let rows: [(String, String, KeyPath<FaceMeasures, Float>, Span, Bool)] = [
            ("eyeBlinkLeft", "eyeAspectLeft", \.eyeAspectLeft, .eyeAspectClosing, true),
            ("eyeBlinkLeft", "eyeClosedLeft", \.eyeClosedLeft, .eyeClosedSpan, false),
            ("eyeBlinkRight", "eyeAspectRight", \.eyeAspectRight, .eyeAspectClosing, true),
            ("eyeBlinkRight", "eyeClosedRight", \.eyeClosedRight, .eyeClosedSpan, false),
            ("jawOpen", "jawDrop", \.jawDrop, .jawSpan, false),
            ("mouthSmileLeft", "mouthWidth", \.mouthWidth, .smileWidthSpan, false),
            ("mouthSmileLeft", "cornerLiftLeft", \.cornerLiftLeft, .smileLiftSpan, false),
            ("mouthSmileRight", "mouthWidth", \.mouthWidth, .smileWidthSpan, false),
            ("mouthSmileRight", "cornerLiftRight", \.cornerLiftRight, .smileLiftSpan, false),
            ("browInnerUp", "innerBrowHeight", \.innerBrowHeight, .browRaiseSpan, false),
        ]
        let recorded = profile.expressions.keys.map(\.rawValue).sorted()
        var lines = [
            "wrote \(output): neutral" + (recorded.isEmpty ? "" : " and " + recorded.joined(separator: ", "))
                + " from \(profile.source ?? "?")"
        ]
        lines.append(pad("coefficient", 17) + pad("measure", 17) + pad("neutral", 9) + pad("span", 18) + "from")
        for (coefficient, measure, key, span, relative) in rows {
            let scale = relative ? n[keyPath: key] : 1  // the eye-aspect span is a fraction of neutral
            let before = model[keyPath: span.keyPath] * scale
            let after = personal[keyPath: span.keyPath] * scale
            let d = derivations[span]
            let from: String
            if let d, d.value != nil {
                from = d.steps.map(\.rawValue).joined(separator: ", ")
            } else if let d, let change = d.change {
                // A change as large as one that counts, but the wrong way: the segments are likely swapped
                // (a "smile" narrower than the "neutral"; it said "is too small").
                let wrongWay = change <= -d.span.minimumChange
                from =
                    "kept: change \(f(change * scale)) in "
                    + "\(d.steps.map(\.rawValue).joined(separator: ", "))"
                    + (wrongWay ? " goes the wrong way (are the segments right?)" : " is too small")
            } else {
                from = "kept: not recorded"
            }
            lines.append(
                pad(coefficient, 17) + pad(measure, 17) + pad(f(n[keyPath: key]), 9)
                    + pad("\(f(before)) -> \(f(after))", 18) + from)
        }
        return lines.joined(separator: "\n")
    }

    private static func f(_ x: Float) -> String { String(format: "%.3f", x) }
    private static func pad(_ s: String, _ n: Int) -> String { EvaluateCommand.pad(s, n) }
    private static func formatSeconds(_ s: Double) -> String {
        s == s.rounded() ? String(Int(s)) : String(format: "%.1f", s)
    }
}
