import Expressions
import Foundation
import Testing
import WinkCore

@testable import WinkDaemon

struct ConfigurationTests {
    func parse(_ json: String) throws -> Configuration { try Configuration.parse(Data(json.utf8), path: "c.json") }

    @Test func aRowChangesOnlyTheFieldsItGivesAndANewRowIsAdded() throws {
        let c = try parse(
            """
            {"analyzers": [{"event": "smile", "enter": 0.6},
                           {"event": "browRaise", "value": "browInnerUp", "enter": 0.5, "exit": 0.3,
                            "minDuration": 0.2}],
             "mirrored": true, "quality": {"maximumYaw": 20}}
            """)
        let smile = try #require(c.analyzers.first { $0.event == "smile" })
        let defaultSmile = try #require(AnalyzerRow.defaultTable.first { $0.event == "smile" })
        #expect(smile.enter == 0.6)
        #expect(smile.exit == defaultSmile.exit && smile.value == defaultSmile.value)
        let brow = try #require(c.analyzers.last)
        #expect(brow.event == "browRaise" && brow.value == .coefficient(.browInnerUp) && brow.minDuration == 0.2)
        #expect(c.analyzers.count == AnalyzerRow.defaultTable.count + 1)
        #expect(c.mirrored && c.tracker.mirrored)
        #expect(c.quality.maximumYaw == 20 && c.quality.maximumPitch == QualityGate().maximumPitch)
    }

    @Test func aNewRowFiresOnItsCoefficient() throws {
        let c = try parse(
            #"{"replaceDefaultAnalyzers": true, "analyzers": [{"event": "browRaise", "value": "browInnerUp", "enter": "#
            + #"0.5, "exit": 0.3}]}"#
        )
        let table = AnalyzerTable(rows: c.analyzers)
        var events: [ExpressionEvent] = []
        var coefficients = BlendShapeCoefficients()
        coefficients[.browInnerUp] = 0.7
        table.step(
            frame: FrameInfo(index: 0, time: 0, monotonicNanoseconds: 0), coefficients: coefficients, into: &events)
        #expect(events.map(\.event) == ["browRaise"])
    }

    @Test func everyProblemIsOneLineNamingTheKey() {
        do {
            _ = try parse(
                """
                {"mirrored": "yes", "frobnicate": 1,
                 "analyzers": [{"event": "smile", "enter": 0.2, "exit": 0.5},
                               {"event": "x", "value": "eyeBlinkMiddle", "enter": 0.5},
                               {"event": "y", "enter": 0.5}],
                 "quality": {"maximumYaw": "wide"}}
                """)
            Issue.record("expected Configuration.Invalid")
        } catch let e as Configuration.Invalid {
            let lines = e.description.split(separator: "\n").map(String.init)
            #expect(e.exitCode == .configuration)
            #expect(lines.allSatisfy { $0.hasPrefix("c.json: ") })
            #expect(lines.contains { $0.contains("frobnicate: unknown key") })
            #expect(lines.contains { $0.contains("mirrored: expected true or false") })
            #expect(lines.contains { $0.contains("quality.maximumYaw: expected a number") })
            #expect(lines.contains { $0.contains("analyzers[0] (smile).exit: expected at most enter") })
            #expect(lines.contains { $0.contains("unknown coefficient 'eyeBlinkMiddle'") })
            #expect(lines.contains { $0.contains("analyzers[2] (y).value: required") })
            #expect(lines.count == 6, "\(lines)")
        } catch { Issue.record("wrong error \(error)") }
    }

    /// A second "quality" section (or a row's second "enter") was dropped without a word: JSON keeps one.
    @Test func aKeyGivenTwiceIsRefusedNamingIt() {
        do {
            _ = try parse(
                """
                {"quality": {"maximumYaw": 30},
                 "analyzers": [{"event": "smile", "enter": 0.5, "enter": 0.6}],
                 "quality": {"minimumFaceSize": 40}}
                """)
            Issue.record("expected Configuration.Invalid")
        } catch let e as Configuration.Invalid {
            let lines = e.description.split(separator: "\n").map(String.init)
            #expect(e.exitCode == .configuration)
            let repeated = "c.json: quality: given twice in one object (lines 1 and 3); JSON keeps only one of them"
            #expect(lines.contains(repeated), "\(lines)")
            #expect(lines.contains { $0.contains("analyzers[0].enter: given twice in one object (lines 2 and 2)") })
        } catch { Issue.record("wrong error \(error)") }
    }

    /// A new row's exit defaults to its enter: an enter out of range was reported twice, the second time as an
    /// `exit` the file never wrote. An exit given is still checked, with one problem for it (an exit of 3 was
    /// also "at most enter").
    @Test func anExitThatFollowsABadEnterIsNotReportedAsWell() {
        func problems(_ json: String) -> String {
            do { _ = try parse(json); return "" } catch { return "\(error)" }
        }
        #expect(problems(#"{"analyzers": [{"event": "squint", "value": "eyeBlinkLeft", "enter": 2}]}"#)
            == "c.json: analyzers[0] (squint).enter: expected a number in 0...1, got 2")
        #expect(problems(#"{"analyzers": [{"event": "squint", "value": "eyeBlinkLeft", "enter": 2, "exit": 3}]}"#)
            == "c.json: analyzers[0] (squint).enter: expected a number in 0...1, got 2\n"
                + "c.json: analyzers[0] (squint).exit: expected a number in 0...1, got 3")
        #expect(problems(#"{"analyzers": [{"event": "squint", "value": "eyeBlinkLeft", "enter": 0.5, "exit": 3}]}"#)
            == "c.json: analyzers[0] (squint).exit: expected a number in 0...1, got 3")
        #expect(problems(#"{"analyzers": [{"event": "squint", "value": "eyeBlinkLeft", "enter": 0.5, "exit": 0.6}]}"#)
            == "c.json: analyzers[0] (squint).exit: expected at most enter (0.5), got 0.6")
        // helper-34: the same through a null exit, a rearm against the exit that followed a bad enter, and a
        // default row's enter lowered below its default exit (the message blamed the exit).
        #expect(problems(#"{"analyzers": [{"event": "squint", "value": "eyeBlinkLeft", "enter": 2, "exit": null}]}"#)
            == "c.json: analyzers[0] (squint).enter: expected a number in 0...1, got 2")
        #expect(problems(#"{"analyzers": [{"event": "x", "value": "eyeBlinkLeft", "enter": -1, "rearm": 0.1}]}"#)
            == "c.json: analyzers[0] (x).enter: expected a number in 0...1, got -1")
        #expect(problems(#"{"analyzers": [{"event": "winkLeft", "enter": 0.3}]}"#)
            == "c.json: analyzers[0] (winkLeft).enter: expected at least exit (0.5, the default row's; give exit "
                + "too), got 0.3")
        #expect(problems(#"{"analyzers": [{"event": "winkLeft", "enter": 0.3, "exit": 0.4}]}"#)
            == "c.json: analyzers[0] (winkLeft).exit: expected at most enter (0.3), got 0.4")
    }

    /// The default wink rows hold a begun wink through 0.15 s below exit (`endDelay`); a file may change it,
    /// remove it (null: `releaseDelay` then), and may not give one to a oneShot row.
    @Test func endDelayIsReadChangedAndRemoved() throws {
        let winkLeft = { (c: Configuration) in c.analyzers.first { $0.event == "winkLeft" } }
        #expect(try winkLeft(parse("{}"))?.endDelay == 0.15)
        #expect(try winkLeft(parse(#"{"analyzers": [{"event": "winkLeft", "endDelay": 0.3}]}"#))?.endDelay == 0.3)
        #expect(try winkLeft(parse(#"{"analyzers": [{"event": "winkLeft", "endDelay": null}]}"#))?.endDelay == nil)
        do {
            _ = try parse(#"{"analyzers": [{"event": "blink", "endDelay": 0.2}]}"#)
            Issue.record("a oneShot row's endDelay was taken")
        } catch {
            #expect("\(error)" == "c.json: analyzers[0] (blink).endDelay: a oneShot row never begins, so it takes "
                + "none (null removes a default's)")
        }
    }

    /// Two rows for one event in one file: the second won without a word.
    @Test func twoRowsForOneEventAreRefused() {
        #expect(throws: Configuration.Invalid.self) {
            try parse(#"{"analyzers": [{"event": "smile", "enter": 0.6}, {"event": "smile", "enter": 0.7}]}"#)
        }
        do {
            _ = try parse(#"{"analyzers": [{"event": "smile", "enter": 0.6}, {"event": "smile", "enter": 0.7}]}"#)
        } catch let e as Configuration.Invalid {
            #expect(e.description == "c.json: analyzers[1] (smile): a second row for 'smile' (analyzers[0]); "
                    + "give each event's changes in one row")
        } catch { Issue.record("wrong error \(error)") }
    }

    @Test func notJSONIsOneLine() {
        #expect(throws: Configuration.Invalid.self) { try parse("{not json") }
        #expect(throws: Configuration.Invalid.self) { try parse("[1, 2]") }
        // A missing file is not a bad one: exit 66 (issue 15), like a missing layout, map or profile.
        #expect(throws: Configuration.Missing.self) { try Configuration.load(path: "/nonexistent/winkd.json") }
    }
}

extension ConfigurationTests {
    /// Found by the FuzzConfiguration fuzzer: an escaped newline in a key or a formula broke the
    /// one-line-per-problem rule.
    @Test func userTextWithNewlinesStaysOnOneLine() {
        for json in [#"{"\n":1}"#, #"{"analyzers":[{"event":"x","value":"a\nb","enter":0.5,"exit":0.3}]}"#] {
            do {
                _ = try parse(json)
                Issue.record("expected Configuration.Invalid for \(json)")
            } catch let e as Configuration.Invalid {
                #expect(e.description.split(separator: "\n").count == e.problems.count, "\(e.description)")
                #expect(e.description.contains("\\n"))
            } catch { Issue.record("wrong error \(error)") }
        }
    }
}

extension ConfigurationTests {
    /// Found by a newcomer: typos inside sections and rows were silently ignored.
    @Test func unknownKeysInsideSectionsAndRowsAreProblems() {
        do {
            _ = try parse(
                #"{"quality": {"maxYaw": 10}, "analyzers": [{"event": "smile", "entr": 0.6}, {"event": "z", "value": "#
                + #""jawOpen", "enter": 0.5, "colour": 1}]}"#
            )
            Issue.record("expected Configuration.Invalid")
        } catch let e as Configuration.Invalid {
            let lines = e.description.split(separator: "\n").map(String.init)
            #expect(lines.count == 3, "\(lines)")
            #expect(lines.contains { $0.contains("quality.maxYaw: unknown key") && $0.contains("maximumYaw") })
            #expect(lines.contains { $0.contains("(smile).entr: unknown key") })
            #expect(lines.contains { $0.contains("(z).colour: unknown key") })
        } catch { Issue.record("wrong error \(error)") }
    }
}

extension ConfigurationTests {
    @Test func reservedNamesAndNegativeQualityLimitsAreProblems() {
        #expect(throws: Configuration.Invalid.self) {
            try parse(#"{"analyzers": [{"event": "faceFound", "value": "jawOpen", "enter": 0.5}]}"#)
        }
        #expect(throws: Configuration.Invalid.self) { try parse(#"{"quality": {"maximumYaw": -10}}"#) }
        #expect(throws: Configuration.Invalid.self) { try parse(#"{"quality": {"minimumVisible": 2}}"#) }
        #expect(throws: Never.self) { try parse(#"{"quality": {"maximumYaw": 20}}"#) }
    }

    /// Every numeric setting is checked against the range it can work in, one line per key (found by a
    /// newcomer: `calibration.windowSeconds` 1e300 trapped winkd converting the ring's size, 1e9 asked for
    /// hundreds of gigabytes, `tracker.detectionWidth` 0 failed inside dlib without naming the key).
    @Test func numericSettingsOutsideTheirRangesAreProblemsNamingTheKey() throws {
        do {
            _ = try parse(
                #"{"calibration": {"windowSeconds": 1e300, "samplesPerSecond": -1, "priorWeight": -1,"#
                    + #" "expressiveSamplesPerSecond": -1}, "quality": {"faceLostGrace": -1, "maximumEyeYaw": -5,"#
                    + #" "maximumYaw": 181, "minimumBrightness": 256},"#
                    + #" "tracker": {"detectionWidth": 0, "verifyInterval": 0, "maximumMisses": -1,"#
                    + #" "minimumSimilarity": 2}, "coefficients": {"jawSpan": -1, "eyeStateWeight": 1.5}}"#)
            Issue.record("accepted")
        } catch let e as Configuration.Invalid {
            #expect(
                e.problems == [
                    "calibration.windowSeconds: expected a number in 1...3600, got 1e+300",
                    "calibration.samplesPerSecond: expected a number in 0.01...120, got -1",
                    "calibration.priorWeight: expected a number in 0...1000000, got -1",
                    "calibration.expressiveSamplesPerSecond: expected a number in 0...120, got -1",
                    "quality.maximumYaw: expected a number in 0...180, got 181",
                    "quality.maximumEyeYaw: expected a number in 0...180, got -5",
                    "quality.minimumBrightness: expected a number in 0...255, got 256",
                    "quality.faceLostGrace: expected a number in 0...3600, got -1",
                    "tracker.detectionWidth: expected a number in 64...8192, got 0",
                    "tracker.maximumMisses: expected a number in 0...100000, got -1",
                    "tracker.minimumSimilarity: expected a number in -1...1, got 2",
                    "tracker.verifyInterval: expected a number in 1...100000, got 0",
                    "coefficients.jawSpan: expected a number in 0.001...10, got -1",
                    "coefficients.eyeStateWeight: expected a number in 0...1, got 1.5",
                ], "\(e.problems)")
        }
        // The defaults and the edges are accepted.
        #expect(Configuration.rangeProblems(Configuration()).isEmpty)
        let edges = try parse(
            #"{"calibration": {"windowSeconds": 3600, "samplesPerSecond": 120, "expressiveSamplesPerSecond": 0},"#
                + #" "tracker": {"detectionWidth": 64}}"#)
        #expect(edges.calibration.windowSeconds == 3600 && edges.tracker.detectionWidth == 64)
    }

    /// Every bad key of a section is named, not only the first (a newcomer found only one of two named).
    @Test func everyBadKeyOfASectionIsNamed() {
        do {
            _ = try parse(#"{"calibration": {"maximumNeutralEyeClosed": "x", "priorWeight": "y", "windowSecs": 1}}"#)
            Issue.record("accepted")
        } catch let e as Configuration.Invalid {
            #expect(e.problems.count == 3, "\(e.problems)")
            #expect(e.problems[0] == "calibration.maximumNeutralEyeClosed: expected a number", "\(e.problems)")
            #expect(e.problems[1] == "calibration.priorWeight: expected a number", "\(e.problems)")
            #expect(e.problems[2].hasPrefix("calibration.windowSecs: unknown key"), "\(e.problems)")
        } catch { Issue.record("wrong error \(error)") }
    }

    /// A number its setting's type cannot hold (a fraction for a whole number, beyond single precision) is
    /// named: JSONDecoder reports it without a key ("tracker.: The given data was not valid JSON.").
    @Test func aNumberTheSettingCannotHoldIsNamed() {
        do {
            _ = try parse(
                #"{"tracker": {"detectionWidth": 320.5}, "quality": {"maximumYaw": 1e39},"#
                    + #" "analyzers": [{"event": "smile", "enter": 1e300}]}"#)
            Issue.record("accepted")
        } catch let e as Configuration.Invalid {
            let fits = "expected a number this setting can hold (a whole number where it counts; at most about 3.4e38)"
            #expect(
                e.problems == [
                    "quality.maximumYaw: \(fits), got 1e+39", "tracker.detectionWidth: \(fits), got 320.5",
                    "analyzers[0] (smile).enter: \(fits), got 1e+300",
                ], "\(e.problems)")
        } catch { Issue.record("wrong error \(error)") }
    }

    /// A newcomer's finding: a gate or kind that is not one read "Cannot initialize Gate from invalid String
    /// value nose", naming neither the gates nor the spelling meant.
    @Test func aGateOrKindThatIsNotOneListsTheNames() {
        do {
            _ = try parse(
                #"{"analyzers": [{"event": "smile", "gate": "nose"}, {"event": "blink", "kind": "oneshot"}]}"#)
            Issue.record("accepted an unknown gate")
        } catch let e as Configuration.Invalid {
            #expect(e.problems == [
                "analyzers[0] (smile).gate: 'nose' is not one of eyes, mouth, none",
                "analyzers[1] (blink).kind: 'oneshot' is not one of held, oneShot (did you mean 'oneShot'?)",
            ], "\(e.problems)")
        } catch { Issue.record("wrong error \(error)") }
    }

    @Test func aRowCannotSuppressItself() {
        do {
            _ = try parse(#"{"analyzers": [{"event": "smile", "suppressedBy": ["smile", "blink"]}]}"#)
            Issue.record("accepted a self-suppressing row")
        } catch let e as Configuration.Invalid {
            #expect(
                e.problems == ["analyzers[0] (smile).suppressedBy: a row cannot suppress itself"], "\(e.problems)")
        } catch { Issue.record("wrong error \(error)") }
    }

    /// A newcomer's finding: `"profile": ""` was the configuration's folder ("is a directory", exit 66).
    @Test func anEmptyProfilePathIsNamed() throws {
        #expect(throws: Configuration.Invalid.self) { try parse(#"{"profile": ""}"#) }
        do { _ = try parse(#"{"profile": ""}"#) } catch let e as Configuration.Invalid {
            #expect(e.problems == [#"profile: expected a file path, got """#] && e.exitCode == .configuration)
        }
    }

    /// A newcomer's finding: `"replaceDefaultAnalyzers": true` alone was taken, and winkd announced only the
    /// face events. Without "analyzers" it is refused; an explicit empty list is a table of none.
    @Test func replacingTheTableWithNoneGivenIsRefusedButAnEmptyListIsTaken() throws {
        do {
            _ = try parse(#"{"replaceDefaultAnalyzers": true}"#)
            Issue.record("an empty table by omission was taken")
        } catch let e as Configuration.Invalid {
            #expect(e.problems == [
                "replaceDefaultAnalyzers: true replaces the default table, but no \"analyzers\" are given "
                    + "(for face events only, give \"analyzers\": [])",
            ], "\(e.problems)")
        }
        #expect(try parse(#"{"replaceDefaultAnalyzers": true, "analyzers": []}"#).analyzers.isEmpty)
    }

    /// A calibration setting out of its range is refused in words; one in range is taken; each has its default.
    @Test(arguments: [
        ("maximumNeutralEyeClosed", 1.5, "expected a probability in 0...1, got 1.5", 0.3, 0.2),
        ("forgetAfterAbsence", -1, "expected a number in 0...86400, got -1", 30, 3),
    ] as [(String, Double, String, Double, Double)])
    func aCalibrationSettingIsCheckedTakenAndDefaulted(
        key: String, bad: Double, problem: String, good: Double, standard: Double
    ) throws {
        let value: (Configuration) -> Double = {
            key == "forgetAfterAbsence" ? $0.calibration.forgetAfterAbsence : $0.calibration.maximumNeutralEyeClosed
        }
        do {
            _ = try parse(#"{"calibration": {"\#(key)": \#(plainNumber(bad))}}"#)
            Issue.record("accepted \(bad)")
        } catch let e as Configuration.Invalid {
            #expect(e.problems == ["calibration.\(key): \(problem)"], "\(e.problems)")
        }
        #expect(value(try parse(#"{"calibration": {"\#(key)": \#(plainNumber(good))}}"#)) == good)
        #expect(value(Configuration()) == standard)
    }

    /// A settings file of hundreds of MB was read whole (a 200 MB profile took 640 MB); over 16 MiB each
    /// kind is refused with one line, before reading.
    @Test func settingsFilesOver16MiBAreRefused() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("big-\(UUID().uuidString).json")
        try #require(FileManager.default.createFile(atPath: url.path, contents: nil))
        defer { try? FileManager.default.removeItem(at: url) }
        #expect(truncate(url.path, 17 << 20) == 0)  // sparse: no disk used
        let over = "the file is 17825792 bytes, over the limit of 16 MiB for"
        #expect {
            try Configuration.load(path: url.path)
        } throws: { error in
            (error as? Configuration.Invalid)?.description == "\(url.path): \(over) a configuration"
        }
        #expect(throws: CalibrationProfileError(.corrupt, subject: url.path, reason: "\(over) a calibration profile")) {
            try CalibrationProfile.load(path: url.path)
        }
    }
}