import Expressions
import Foundation
import Testing
import WinkCore

/// A neutral a little off the population average, so a personalised model is distinguishable.
private let neutral = FaceMeasures(
    eyeAspectLeft: 0.30, eyeAspectRight: 0.32, eyeClosedLeft: 0.03, eyeClosedRight: 0.05, jawDrop: 1.0, lipGap: 0.02,
    mouthWidth: 0.58, cornerLiftLeft: 0.02, cornerLiftRight: 0.01, innerBrowHeight: 0.25, browHeightLeft: 0.34,
    browHeightRight: 0.35)

private func closedEyes() -> FaceMeasures {
    var m = neutral
    m.eyeAspectLeft = 0.18
    m.eyeAspectRight = 0.192  // both eyes drop 40% of their aspect ratio; their closed probability rises 0.6
    m.eyeClosedLeft = 0.63
    m.eyeClosedRight = 0.65
    return m
}

private func temporaryPath(_ name: String) -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("winkd-profile-\(UUID().uuidString)-\(name)").path
}

struct CalibrationProfileTests {
    @Test func namedMeasuresCoverEveryStoredProperty() {
        let stored = Mirror(reflecting: FaceMeasures()).children.compactMap(\.label)
        #expect(FaceMeasures.namedMeasures.map(\.name) == stored)
    }

    @Test func roundTripsThroughJSON() throws {
        var smile = neutral
        smile.mouthWidth = 0.8
        let profile = CalibrationProfile(
            neutral: neutral, expressions: [.eyesClosed: closedEyes(), .smile: smile],
            reach: 0.8, source: "/dev/video0")
        let data = try profile.encoded()
        #expect(try CalibrationProfile.decode(data) == profile)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["version"] as? Int == 1)
        #expect((object["expressions"] as? [String: Any])?.keys.sorted() == ["eyesClosed", "smile"])
        #expect(((object["neutral"] as? [String: Any])?["mouthWidth"] as? Double).map { abs($0 - 0.58) < 1e-6 } == true)
    }

    @Test func medianIsTakenPerMeasure() throws {
        var a = neutral
        var b = neutral
        var c = neutral
        a.jawDrop = 1.0
        b.jawDrop = 3.0
        c.jawDrop = 1.2
        a.lipGap = 0.5
        b.lipGap = 0.1
        c.lipGap = 0.2
        let m = try #require(FaceMeasures.median(of: [a, b, c]))
        #expect(m.jawDrop == 1.2)
        #expect(m.lipGap == 0.2)
        #expect(FaceMeasures.median(of: [a, b])?.jawDrop == 2.0)
        #expect(FaceMeasures.median(of: []) == nil)
    }

    @Test func closedEyeMeasuresGiveFullBlinkAndHalfwayGivesHalf() {
        let profile = CalibrationProfile(neutral: neutral, expressions: [.eyesClosed: closedEyes()], reach: 0.9)
        let model = profile.personalised(CoefficientModel())
        let x = closedEyes()
        let atX = model.coefficients(x, neutral: profile.prior)
        #expect(abs(atX[.eyeBlinkLeft] - 1) < 1e-5)
        #expect(abs(atX[.eyeBlinkRight] - 1) < 1e-5)
        // Halfway to `reach` of the recorded closure: partly closed, monotonic in between.
        var half = neutral
        for key in [\FaceMeasures.eyeAspectLeft, \.eyeClosedLeft] {
            half[keyPath: key] = neutral[keyPath: key] + 0.45 * (x[keyPath: key] - neutral[keyPath: key])
        }
        #expect(abs(model.eyeAspectClosing - 0.9 * 0.4) < 1e-5)
        #expect(abs(model.eyeClosedSpan - (0.9 * 0.6 - model.eyeClosedDeadZone)) < 1e-5)
        let halfway = model.coefficients(half, neutral: neutral)[.eyeBlinkLeft]
        #expect(halfway > 0.1 && halfway < 0.9, "\(halfway)")
        #expect(
            CoefficientModel().coefficients(x, neutral: neutral)[.eyeBlinkLeft] < 0.99,
            "the population spans alone do not already saturate at X")
    }

    @Test func spansComeFromTheirOwnExpressions() {
        var smile = neutral
        var open = neutral
        var brows = neutral
        smile.mouthWidth += 0.30
        smile.cornerLiftLeft += 0.10
        smile.cornerLiftRight += 0.06
        open.jawDrop += 0.40
        brows.innerBrowHeight += 0.10
        let profile = CalibrationProfile(
            neutral: neutral, expressions: [.smile: smile, .mouthOpen: open, .browsUp: brows],
            reach: 1)
        let model = profile.personalised(CoefficientModel())
        #expect(abs(model.smileWidthSpan - 0.30) < 1e-5)
        #expect(abs(model.smileLiftSpan - 0.08) < 1e-5)
        #expect(abs(model.jawSpan - 0.40) < 1e-5)
        #expect(abs(model.browRaiseSpan - 0.10) < 1e-5)
        // No eye step: the eye spans stay the model's own.
        #expect(model.eyeAspectClosing == CoefficientModel().eyeAspectClosing)
        #expect(model.eyeClosedSpan == CoefficientModel().eyeClosedSpan)
        let c = model.coefficients(smile, neutral: neutral)
        #expect(abs(c[.mouthSmileLeft] - 1) < 1e-5, "width 1 and lift 0.10/0.08 clamped to 1")
        #expect(abs(c[.mouthSmileRight] - (0.5 + 0.5 * 0.06 / 0.08)) < 1e-5)
        #expect(abs(model.coefficients(brows, neutral: neutral)[.browInnerUp] - 1) < 1e-5)
    }

    @Test func winksSetTheEyeSpanOfTheirOwnEye() {
        var left = neutral
        left.eyeAspectLeft = 0.15  // a 50% drop
        left.eyeClosedLeft = 0.93  // a 0.90 rise
        let profile = CalibrationProfile(neutral: neutral, expressions: [.winkLeft: left], reach: 1)
        let d = profile.spanDerivations()
        let ear = d.first { $0.span == .eyeAspectClosing }
        #expect(ear?.steps == [.winkLeft])
        #expect(abs((ear?.value ?? 0) - 0.5) < 1e-5)
        let c = profile.personalised(CoefficientModel()).coefficients(left, neutral: neutral)
        #expect(abs(c[.eyeBlinkLeft] - 1) < 1e-5)
        #expect(c[.eyeBlinkRight] == 0)
    }

    @Test func aStepWithoutARealChangeKeepsTheModelsSpan() {
        var smile = neutral
        smile.mouthWidth += 0.005  // not a smile: below the 0.02 minimum
        var model = CoefficientModel()
        model.smileWidthSpan = 0.25
        let profile = CalibrationProfile(neutral: neutral, expressions: [.smile: smile])
        #expect(profile.personalised(model).smileWidthSpan == 0.25)
        let d = profile.spanDerivations().first { $0.span == .smileWidthSpan }
        #expect(d?.value == nil)
        #expect(d.flatMap(\.change).map { abs($0 - 0.005) < 1e-5 } == true)
        #expect(profile.spanDerivations().first { $0.span == .jawSpan }?.change == nil)
    }

    @Test func savesAndLoadsAFile() throws {
        let path = temporaryPath("ok.json")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let profile = CalibrationProfile(neutral: neutral, expressions: [.eyesClosed: closedEyes()], source: "clip.mp4")
        try profile.save(to: path)
        #expect(try CalibrationProfile.load(path: path) == profile)
    }

    @Test func aMissingProfileIsExit66NamingTheFile() {
        let path = temporaryPath("absent.json")
        #expect {
            try CalibrationProfile.load(path: path)
        } throws: { error in
            guard let e = error as? CalibrationProfileError else { return false }
            return e.exitCode == .noInput && e.description.hasPrefix(path + ": no such calibration profile")
        }
    }

    /// `"profile": "."` in a configuration said "is a directory, not a file", not which file was meant.
    @Test func aDirectoryIsNotACalibrationProfile() {
        let path = NSTemporaryDirectory()
        #expect {
            try CalibrationProfile.load(path: path)
        } throws: { error in
            (error as? CalibrationProfileError)?.description == path + ": is a directory, not a calibration profile"
        }
    }

    @Test(arguments: [
        ("{ not json", "not a valid calibration profile"),
        (#"{"version": 1}"#, "neutral: required"),
        (#"{"version": 2, "neutral": {}}"#, "version 2 is not supported"),
        (#"{"version": 1, "reach": 1.5, "neutral": {}}"#, "neutral"),
        (#"{"version": 1.5, "neutral": {}}"#, "version 1.5 is not supported"),
        ("[1, 2]", "not a valid calibration profile"),
        // JSONDecoder's "Expected to decode Double but found a string instead." (a newcomer's finding)
        (#"{"version": "1", "neutral": {}}"#, "version: expected a number"),
        (#"{"version": 1, "neutral": [1]}"#, "neutral: expected an object"),
    ])
    func aCorruptProfileIsExit78NamingTheFile(_ text: String, _ expected: String) throws {
        let path = temporaryPath("bad.json")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        #expect {
            try CalibrationProfile.load(path: path)
        } throws: { error in
            guard let e = error as? CalibrationProfileError else { return false }
            return e.exitCode == .configuration && e.description.hasPrefix(path + ": ")
                && e.description.contains(expected) && !e.description.contains("\n")
        }
    }

    /// A key given twice was taken without a word (JSON keeps one of them), where the README says a key given
    /// twice in any JSON a user writes is refused, as the configuration, maps and layouts did (a newcomer's
    /// finding).
    @Test func aKeyGivenTwiceIsRefused() throws {
        let text = String(decoding: try CalibrationProfile(neutral: neutral).encoded(), as: UTF8.self)
        #expect(text.hasPrefix("{"))
        let path = temporaryPath("twice.json")
        defer { try? FileManager.default.removeItem(atPath: path) }
        // The second also fails to decode ("x" is no version): the key given twice is said, not hidden by it.
        for first in ["1", "\"x\""] {
            try Data(("{\"version\": \(first), " + text.dropFirst()).utf8).write(to: URL(fileURLWithPath: path))
            #expect {
                try CalibrationProfile.load(path: path)
            } throws: { error in
                guard let e = error as? CalibrationProfileError else { return false }
                return e.exitCode == .configuration
                    && e.description.hasPrefix(
                        path + ": not a valid calibration profile: version: given twice in one object")
            }
        }
    }

    /// A newcomer's finding: a misspelt step read "expressions.smil: Could not convert key to type Step".
    @Test func aMisspeltStepIsNamed() throws {
        var object = try #require(
            try JSONSerialization.jsonObject(
                with: CalibrationProfile(neutral: neutral, expressions: [.smile: neutral]).encoded()) as? [String: Any])
        object["expressions"] = ["smil": object["neutral"]!]
        let path = temporaryPath("misspelt.json")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        #expect {
            try CalibrationProfile.load(path: path)
        } throws: { error in
            (error as? CalibrationProfileError)?.description == path
                + ": not a valid calibration profile: expressions: 'smil' is not a step (known: neutral, eyesClosed, "
                + "winkLeft, winkRight, smile, mouthOpen, browsUp)"
        }
        object["expressions"] = ["smile": object["neutral"]!]
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        #expect(try CalibrationProfile.load(path: path).expressions.keys.map(\.rawValue) == ["smile"])
    }

    @Test func aMeasureThatIsNotANumberIsNamed() throws {
        var object = try #require(
            try JSONSerialization.jsonObject(
                with: CalibrationProfile(neutral: neutral).encoded()) as? [String: Any])
        var n = try #require(object["neutral"] as? [String: Any])
        n["jawDrop"] = "wide"
        object["neutral"] = n
        let data = try JSONSerialization.data(withJSONObject: object)
        #expect(throws: DecodingError.self) { try CalibrationProfile.decode(data) }
        let path = temporaryPath("typed.json")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try data.write(to: URL(fileURLWithPath: path))
        #expect {
            try CalibrationProfile.load(path: path)
        } throws: { error in
            (error as? CalibrationProfileError)?.description.contains("neutral.jawDrop") == true
        }
    }

    /// The error loading a file holding this test's profile with `neutral[key]` set to `value`; nil if it loads.
    func loadError(neutral key: String, _ value: Any) throws -> CalibrationProfileError? {
        try loadError { object in
            var n = object["neutral"] as? [String: Any] ?? [:]
            n[key] = value
            object["neutral"] = n
        }
    }

    /// The error of loading a profile (this suite's neutral and a smile) after `edit` changed its JSON object.
    func loadError(editing edit: (inout [String: Any]) -> Void) throws -> CalibrationProfileError? {
        var smile = neutral
        smile.mouthWidth += 0.2
        var object = try #require(
            try JSONSerialization.jsonObject(
                with: CalibrationProfile(neutral: neutral, expressions: [.smile: smile]).encoded()) as? [String: Any])
        edit(&object)
        let path = temporaryPath("edited.json")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        do {
            _ = try CalibrationProfile.load(path: path)
            return nil
        } catch let e as CalibrationProfileError {
            return e
        }
    }

    /// A newcomer's finding: a smile's mouth width of -3 was accepted while the neutral's was refused, as were
    /// ratios of 1e30 and an unknown top-level key. Each is now named.
    @Test func everyMeasureAndKeyOfAProfileIsChecked() throws {
        let negative = try #require(try loadError { object in
            var expressions = object["expressions"] as? [String: Any] ?? [:]
            var smile = expressions["smile"] as? [String: Any] ?? [:]
            smile["mouthWidth"] = -3
            expressions["smile"] = smile
            object["expressions"] = expressions
        })
        let distances = "expressions.smile.mouthWidth: expected a ratio of distances, 0 or more, got -3"
        #expect(negative.description.hasSuffix(distances), "\(negative.description)")
        let huge = try #require(try loadError(neutral: "cornerLiftLeft", 1e30))
        let lengths = "neutral.cornerLiftLeft: expected a ratio of lengths within -10...10, got 1e+30"
        #expect(huge.description.hasSuffix(lengths), "\(huge.description)")
        let unknown = try #require(try loadError { $0["expresions"] = [String: Any]() })
        #expect(unknown.exitCode == .configuration && unknown.description.contains("expresions: unknown key"),
                "\(unknown.description)")
        #expect(try loadError { _ in } == nil, "the unedited profile loads")
    }

    /// The closed-probabilities are probabilities: a hand-edited -1 made every open eye read as closing.
    @Test func aClosedProbabilityOutside0To1IsNamed() throws {
        for bad in [-1.0, 1.5, 1e300] {
            let e = try #require(try loadError(neutral: "eyeClosedRight", bad), "\(bad) accepted")
            #expect(
                e.exitCode == .configuration && e.description.contains("neutral.eyeClosedRight")
                    && (e.description.contains("expected a probability in 0...1")
                        || e.description.contains("expected a finite number")), "\(e.description)")
        }
    }

    /// A neutral length ratio of 0 or below, and a key no measure has, are refused naming the key (an eye
    /// aspect of 0 made eyeWide read 1 on every frame; `neutral.foo` passed silently).
    @Test func aZeroLengthOrAnUnknownMeasureIsNamed() throws {
        for (key, bad, expected) in [
            ("eyeAspectLeft", 0.0, "expected a positive number"),
            ("mouthWidth", 0.0, "expected a positive number"),
            // It said "0 or more" of -0.3 and then refused 0 (a newcomer's finding): positive, both.
            ("mouthWidth", -0.3, "neutral.mouthWidth: expected a positive number, got -0.3"),
            ("foo", 1.0, "unknown key"),
        ] {
            let e = try #require(try loadError(neutral: key, bad), "\(key) \(bad) accepted")
            #expect(
                e.exitCode == .configuration && e.description.contains("neutral") && e.description.contains(key)
                    && e.description.contains(expected), "\(e.description)")
        }
    }

    /// A newcomer's finding: "reach": 1e300, or a measure of 1e-400, was "The given data was not valid JSON."
    /// (valid JSON, no key named); a literal beyond a Double says what the parser says.
    @Test func numbersBeyondRangeAreNamedWithTheirKey() throws {
        let text = String(decoding: try CalibrationProfile(neutral: neutral).encoded(), as: UTF8.self)
        func reason(_ edited: String) throws -> String? {
            let path = temporaryPath("range.json")
            defer { try? FileManager.default.removeItem(atPath: path) }
            try Data(edited.utf8).write(to: URL(fileURLWithPath: path))
            do {
                _ = try CalibrationProfile.load(path: path)
            } catch let e as CalibrationProfileError {
                return e.reason
            }
            return nil
        }
        let reach = try #require(text.range(of: #""reach" : 0.9"#), "\(text)")
        #expect(try reason(text.replacingCharacters(in: reach, with: #""reach" : 1e300"#))
                == "not a valid calibration profile: reach: expected a number in (0, 1], got 1e+300")
        // Too small for a Double: read as 0, as JSONSerialization reads it, and checked as 0.
        #expect(try reason(text.replacingCharacters(in: reach, with: #""reach" : 1e-400"#))
                == "not a valid calibration profile: reach: expected a number in (0, 1], got 0")
        let tiny = text.replacingOccurrences(
            of: #"("cornerLiftLeft" : )[-0-9.e]+"#, with: "$11e-400", options: .regularExpression)
        #expect(try reason(tiny) == nil, "a corner lift of 0 is a corner lift")
        let beyond = text.replacingCharacters(in: reach, with: #""reach" : 1e999"#)
        #expect(try reason(beyond)
                == "not a valid calibration profile: not valid JSON (Number 1e999 is not representable in Swift.)")
    }

    /// A newcomer's finding: saving over a 0600 profile made it 0644 (Foundation's atomic write); it is
    /// written as every output is now, keeping the old file's permission bits.
    @Test func aSavedProfileKeepsTheOldFilesMode() throws {
        let path = temporaryPath("private.json")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try #require(FileManager.default.createFile(atPath: path, contents: Data("{}".utf8)))
        #expect(chmod(path, 0o600) == 0)
        try CalibrationProfile(neutral: neutral).save(to: path)
        var st = stat()
        #expect(stat(path, &st) == 0 && st.st_mode & 0o777 == 0o600)
        #expect(try CalibrationProfile.load(path: path) == CalibrationProfile(neutral: neutral))
    }

    /// A profile saved through a symbolic link replaces the link's target and keeps the link.
    @Test func aProfileSavedThroughALinkKeepsTheLink() throws {
        let target = temporaryPath("target.json"), link = temporaryPath("link.json")
        defer { for p in [target, link] { try? FileManager.default.removeItem(atPath: p) } }
        try #require(FileManager.default.createFile(atPath: target, contents: Data("old".utf8)))
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        try CalibrationProfile(neutral: neutral).save(to: link)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
        #expect(try CalibrationProfile.load(path: target).neutral == neutral)
    }

    /// SPEC.md's 73: an output file that cannot be created, saying why.
    @Test func aProfileInAMissingDirectoryIsExit73() {
        let directory = temporaryPath("no-such-dir")
        let path = directory + "/profile.json"
        #expect(throws: OutputFileError(.cannotCreate, subject: path, reason: "no such directory \(directory)")) {
            try CalibrationProfile(neutral: neutral).save(to: path)
        }
        #expect(OutputFileError(.cannotCreate, subject: path, reason: "").exitCode.rawValue == 73)
    }
}

struct CalibrationRecorderTests {
    @Test func parsesSegments() throws {
        let s = try CalibrationProfile.parseSegments("neutral=0-0.6, smile=1.0-2.0,smile=2.5-3")
        #expect(
            s == [
                .init(step: .neutral, start: 0, end: 0.6), .init(step: .smile, start: 1, end: 2),
                .init(step: .smile, start: 2.5, end: 3),
            ])
        #expect(s[0].description == "neutral=0-0.6")
    }

    @Test(arguments: ["neutral=0-0.6,grin=1-2", "neutral=0.6-0.2", "neutral=a-b", "neutral", "smile=1-2", ""])
    func refusesBadSegments(_ text: String) {
        #expect(throws: CalibrationProfile.SegmentSyntaxError.self) { try CalibrationProfile.parseSegments(text) }
    }

    /// A newcomer's finding: overlapping segments of two steps were taken, their frames counted as both.
    /// Segments of one step may overlap (they pool); touching ends are not an overlap.
    @Test func segmentsOfTwoStepsMustNotOverlap() throws {
        do {
            _ = try CalibrationProfile.parseSegments("neutral=0-1.5,smile=1-2")
            Issue.record("overlapping segments were taken")
        } catch let error as CalibrationProfile.SegmentSyntaxError {
            #expect(error.message == "neutral=0-1.5 and smile=1-2 overlap: a frame shows one expression")
        }
        #expect(try CalibrationProfile.parseSegments("neutral=0-1,smile=1-2,neutral=0.5-0.8").count == 3)
    }

    @Test func scheduleLeavesTimeToReact() {
        let s = CalibrationProfile.schedule([.neutral, .smile, .browsUp], secondsPerStep: 3, discard: 0.5)
        #expect(
            s == [
                .init(step: .neutral, start: 0.5, end: 3), .init(step: .smile, start: 3.5, end: 6),
                .init(step: .browsUp, start: 6.5, end: 9),
            ])
    }

    @Test func profileIsTheMedianOfEachSegment() throws {
        var recorder = CalibrationProfile.Recorder(
            segments: try CalibrationProfile.parseSegments("neutral=0-1,smile=2-3"))
        var m = neutral
        for i in 0..<40 {
            let t = Double(i) * 0.1
            m.mouthWidth = t >= 2 && t <= 3 ? 0.80 + Float(i % 3) * 0.01 : 0.58
            // One mistracked neutral frame must not move the median.
            m.jawDrop = i == 5 ? 3 : 1
            recorder.add(m, time: t)
        }
        #expect(recorder.count(.neutral) == 11)
        #expect(recorder.count(.smile) == 11)
        let profile = try recorder.profile(source: "clip.mp4")
        #expect(profile.neutral.mouthWidth == 0.58)
        #expect(profile.neutral.jawDrop == 1)
        #expect(abs((profile.expressions[.smile]?.mouthWidth ?? 0) - 0.81) < 1e-5)
        #expect(profile.expressions.keys.sorted { $0.rawValue < $1.rawValue } == [.smile])
        #expect(profile.source == "clip.mp4")
    }

    @Test func aStepWithoutFaceIsExit65NamingStepAndRange() throws {
        var recorder = CalibrationProfile.Recorder(
            segments: try CalibrationProfile.parseSegments("neutral=0-1,smile=2-3"))
        recorder.add(neutral, time: 0.5)
        #expect {
            try recorder.profile(source: "clip.mp4")
        } throws: { error in
            guard let e = error as? CalibrationProfileError else { return false }
            return e.exitCode == .dataError
                && e.description == "clip.mp4: no usable face during the 'smile' step (2-3 s)"
        }
    }
}
