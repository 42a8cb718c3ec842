import Capture
import Expressions
import Foundation
import Testing
import WinkCore

@testable import WinkDaemon
@testable import WinkctlCommands

private func temporaryPath(_ name: String) -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("winkd-calibrate-\(UUID().uuidString)-\(name)").path
}

/// Records a profile from `clip` with `segments`, using the shared model.
private func recordProfile(_ clip: String, _ segments: String) throws -> CalibrationProfile {
    try CalibrateCommand.record(
        source: try openMediaFile(path: Fixtures.video(clip)),
        segments: try CalibrationProfile.parseSegments(segments), pipeline: pipeline())
}

extension ModelTests {
    @Suite
    struct CalibrateCommandTests {
        @Test func neutralFromSegmentsIsCloseToWhatCalibrationLearns() throws {
            let profile = try recordProfile("single_face.mp4", "neutral=0-0.6,smile=1.0-2.0")
            // What winkd learns by itself on the whole clip (neutral start, then a long smile), without a prior.
            var configuration = Configuration()
            configuration.calibration.priorWeight = 0
            let learning = FramePipeline(configuration: configuration, predictor: sharedPredictor)
            _ = try learning.events(of: try openMediaFile(path: Fixtures.video("single_face.mp4")))
            let learned = learning.engine.calibration.neutral
            // The mouth and brows: the learned lower percentiles are the neutral stretch.
            for (name, key) in FaceMeasures.namedMeasures where !name.hasPrefix("eye") {
                #expect(
                    abs(profile.neutral[keyPath: key] - learned[keyPath: key]) < 0.02,
                    "\(name): profile \(profile.neutral[keyPath: key]), learned \(learned[keyPath: key])")
            }
            // The eyes: the learned upper percentile of openness is within the spread of this face's eyes.
            for key in [\FaceMeasures.eyeAspectLeft, \.eyeAspectRight] {
                #expect(abs(profile.neutral[keyPath: key] - learned[keyPath: key]) < 0.05)
            }
            // And the smile step is a smile: wider mouth, raised corners.
            let smile = try #require(profile.expressions[.smile])
            #expect(smile.mouthWidth - profile.neutral.mouthWidth > 0.15)
            #expect(smile.cornerLiftLeft - profile.neutral.cornerLiftLeft > 0.05)
        }

        /// A newcomer's finding: "neutral=0-100" on the 2.4 s clip, whose man smiles from 0.8 s, learned the
        /// smile as his neutral face (mouthWidth 0.752 against 0.526) without a word; one frame was taken too.
        @Test func segmentsPastTheEndAreRefusedAndAFewFramesAreSaid() throws {
            for (segments, prefix, suffix) in [
                ("neutral=0-100", "neutral=0-100 runs past the end of ", "(its last frame is at 2.367 s)"),
                // Between the last two frames' times (a second pass's finding: "no usable face", 65).
                ("neutral=0-1,smile=2.35-2.36", "smile=2.35-2.36 holds no frame of ", "(a frame every 0.033 s)"),
            ] {
                do {
                    _ = try recordProfile("single_face.mp4", segments)
                    Issue.record("\(segments) was taken")
                } catch let e as UsageError {
                    #expect(
                        e.description.hasPrefix("calibrate: --segments: " + prefix) && e.description.hasSuffix(suffix),
                        "\(e)")
                }
            }
            var said: [String] = []
            _ = try CalibrateCommand.record(
                source: try openMediaFile(path: Fixtures.video("single_face.mp4")),
                segments: try CalibrationProfile.parseSegments("neutral=0-0.01,smile=1-2.43"), pipeline: pipeline(),
                say: { said.append($0) })
            #expect(said == [
                "calibrate: neutral: only 1 frame with a usable face; its median is as noisy as they are "
                    + "(give it a second or more)",
            ])
        }

        @Test func loadingTheProfileChangesTheCoefficients() throws {
            let profile = try recordProfile("single_face.mp4", "neutral=0-0.6,smile=1.0-2.0")
            let path = temporaryPath("profile.json")
            defer { try? FileManager.default.removeItem(atPath: path) }
            try profile.save(to: path)
            var configuration = Configuration()
            configuration.profilePath = path
            let (personalised, prior) = try configuration.applyingProfile()
            #expect(prior == profile.neutral)
            #expect(personalised.coefficients == profile.personalised(CoefficientModel()))
            #expect(personalised.coefficients.smileWidthSpan < CoefficientModel().smileWidthSpan)

            func smileAndBlink(_ p: FramePipeline) throws -> [(smile: Float, blink: Float)] {
                var values: [(Float, Float)] = []
                try p.run(try openMediaFile(path: Fixtures.video("single_face.mp4"))) { _, face in
                    if face != nil {
                        values.append((p.engine.coefficients[.mouthSmileLeft], p.engine.coefficients[.eyeBlinkLeft]))
                    }
                }
                return values
            }
            let population = try smileAndBlink(pipeline())
            let personal = FramePipeline(configuration: personalised, predictor: sharedPredictor, prior: prior)
            #expect(personal.engine.calibration.prior == profile.neutral)
            let own = try smileAndBlink(personal)
            #expect(own.count == population.count)
            // The open eye at the start reads open with either neutral.
            #expect(own[0].blink < 0.1 && population[0].blink < 0.1)
            // Their own smile span: the held smile reaches 1 more often.
            let full = { (v: [(smile: Float, blink: Float)]) in v.filter { $0.smile > 0.99 }.count }
            #expect(full(own) > full(population))
        }

        @Test func aWinkSegmentGivesTheEyeSpansFromTheClosedEye() throws {
            let profile = try recordProfile("single_face_wink_left.mp4", "neutral=0-0.6,winkLeft=0.9-1.15")
            let n = profile.neutral
            let wink = try #require(profile.expressions[.winkLeft])
            // The eye-state model sees the left eye close and the right one stay open.
            #expect(
                wink.eyeClosedLeft - n.eyeClosedLeft > 0.5,
                "the left eye closed: \(n.eyeClosedLeft) -> \(wink.eyeClosedLeft)")
            #expect(wink.eyeClosedRight < 0.5, "the right eye stayed open: \(wink.eyeClosedRight)")
            let d = try #require(profile.spanDerivations().first { $0.span == .eyeClosedSpan })
            #expect(d.steps == [.winkLeft])
            #expect(d.value != nil)
        }

        @Test func guidedRecordingPromptsEachStepInTurnAndStopsAfterTheLast() throws {
            var lines: [String] = []
            let source = try openMediaFile(path: Fixtures.video("single_face.mp4"))
            let segments = CalibrationProfile.schedule([.neutral, .smile], secondsPerStep: 0.8, discard: 0.3)
            let profile = try CalibrateCommand.record(
                source: source, segments: segments, pipeline: pipeline(),
                guided: 0.8
            ) { lines.append($0) }
            let prompts = lines.filter { $0.hasPrefix("[") }
            #expect(
                prompts == [
                    "[1/2] look at the camera with a neutral, relaxed face... 0.8 s",
                    "[2/2] smile broadly and hold it... 0.8 s",
                ])
            #expect(lines.contains { $0.hasPrefix("  smile: ") && $0.hasSuffix(" frames") })
            #expect(profile.expressions.keys.map(\.rawValue) == ["smile"])
            // Stopped after 1.6 s: the clip has 2.4 s, so frames were left unread.
            var info = FrameInfo(index: 0, time: 0, monotonicNanoseconds: 0)
            if let next = try source.read(into: PixelBuffer()) { info = next }
            #expect(info.time > 1.6 && info.time < 1.8)
        }

        @Test func theCommandWritesAProfileThatAnalyzeLoads() throws {
            let path = temporaryPath("cli.json")
            defer { try? FileManager.default.removeItem(atPath: path) }
            var args = Arguments([
                "--source", Fixtures.video("single_face.mp4"), "-o", path,
                "--segments", "neutral=0-0.6,smile=1.0-2.0", "--model", Fixtures.model,
            ])
            #expect(try CalibrateCommand.run(&args) == .ok)
            let profile = try CalibrationProfile.load(path: path)
            #expect(profile.expressions.keys.map(\.rawValue) == ["smile"])
            var analyzeArgs = Arguments(["--profile", path, "--model", Fixtures.model])
            let options = try CommonOptions(&analyzeArgs)
            #expect(options.configuration.profilePath == path)
            #expect(try options.configuration.applyingProfile().prior == profile.neutral)
        }
    }
}

struct CalibrateArgumentTests {
    @Test func stepsAreParsedWithNeutralFirst() throws {
        #expect(try CalibrateCommand.parseSteps("smile,winkLeft") == [.neutral, .smile, .winkLeft])
        #expect(try CalibrateCommand.parseSteps(nil) == CalibrationProfile.Step.allCases)
        #expect(throws: UsageError.self) { try CalibrateCommand.parseSteps("smile,grin") }
        #expect(throws: UsageError.self) { try CalibrateCommand.parseSteps("smile,smile") }
    }

    @Test(arguments: [
        ["-o", "/tmp/x.json"],
        ["--source", "clip.mp4"],
        ["--source", "/dev/video0", "-o", "/tmp/x.json", "--segments", "neutral=0-1"],
        ["--source", "clip.mp4", "-o", "/tmp/x.json", "--segments", "neutral=0-1", "--steps", "smile"],
        ["--source", "clip.mp4", "-o", "/tmp/x.json", "--segments", "neutral=1-0"],
        ["--source", "clip.mp4", "-o", "/tmp/x.json", "--seconds-per-step", "0"],
    ])
    func usageErrorsAreExit64(_ argv: [String]) {
        var args = Arguments(argv)
        #expect(throws: UsageError.self) { try CalibrateCommand.run(&args) }
    }

    @Test func aMissingProfileIsExit66AndACorruptOneExit78BeforeTheModelLoads() throws {
        let missing = temporaryPath("absent.json")
        var args = Arguments(["--profile", missing, "--model", "/nonexistent/model.dat"])
        let options = try CommonOptions(&args)
        #expect {
            try options.makePipeline()
        } throws: { error in
            (error as? CalibrationProfileError).map { $0.exitCode == .noInput && $0.subject == missing } == true
        }
        let corrupt = temporaryPath("corrupt.json")
        defer { try? FileManager.default.removeItem(atPath: corrupt) }
        try Data("{\"version\": 1, \"neutral\": {\"jawDrop\": 1}}".utf8).write(to: URL(fileURLWithPath: corrupt))
        var args2 = Arguments(["--profile", corrupt, "--model", "/nonexistent/model.dat"])
        #expect {
            try CommonOptions(&args2).makePipeline()
        } throws: { error in
            guard let e = error as? CalibrationProfileError else { return false }
            return e.exitCode == .configuration
                && e.description.hasPrefix(corrupt + ": not a valid calibration profile")
        }
    }

    @Test func aRelativeProfileInAConfigurationFileIsRelativeToThatFile() throws {
        var c = try Configuration.parse(Data(#"{"profile": "me.json"}"#.utf8))
        c.path = "/etc/winkd/winkd.json"
        #expect(c.resolvedProfilePath == "/etc/winkd/me.json")
        c.profilePath = "/home/me/p.json"
        #expect(c.resolvedProfilePath == "/home/me/p.json")
        #expect(try Configuration().applyingProfile().prior == nil)
    }
}
