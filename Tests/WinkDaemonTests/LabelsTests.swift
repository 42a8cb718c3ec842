import Foundation
import Testing
import WinkCore

@testable import WinkDaemon
@testable import WinkctlCommands

/// Labels files and SPEC.md's scoring rule, without running the pipeline.
struct LabelsTests {
    func labels(_ json: String) throws -> ClipLabels {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "labels-\(UUID().uuidString).labels.json")
        try Data(json.utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        return try ClipLabels.load(path: url.path)
    }

    func event(_ name: String, _ frame: Int, _ phase: EventPhase? = .began) -> ExpressionEvent {
        ExpressionEvent(event: name, phase: phase, frame: frame, time: Double(frame) / 30, tMonoNs: 0)
    }

    @Test func aBlinkMayComeUpTo015SecondsAfterItsLabelledEnd() throws {
        let l = try labels(
            #"""
            {"video": "/x.mp4", "frames": 100, "nominal_fps": 30, "tolerance_frames": 3,
                            "face": [[0, 99]], "events": [{"event": "blink", "start": 10, "end": 12}]}
            """#)
        // ceil(0.15 x 30) = 5 frames after the end, 3 before the start.
        #expect(l.window(of: l.events[0]) == 7...17)
        #expect(score(events: [event("faceFound", 0, nil), event("blink", 17, .occurred)], labels: l).total.f1 == 1)
        #expect(
            score(events: [event("faceFound", 0, nil), event("blink", 18, .occurred)], labels: l).total.misses == 1)
    }

    /// `evaluate --verbose` printed what it printed without (the findings of imperfect clips): it now gives
    /// the whole accounting, each occurrence's fate in emission order, then the misses.
    @Test func theAccountingSaysWhatBecameOfEveryOccurrence() throws {
        let l = try labels(
            #"""
            {"video": "/x.mp4", "frames": 100, "nominal_fps": 30, "tolerance_frames": 3, "face": [[0, 99]],
             "events": [{"event": "blink", "start": 10, "end": 12}, {"event": "smile", "start": 60, "end": 70}],
             "dontcare": [{"event": "blink", "start": 20, "end": 30}], "absent": ["winkLeft"]}
            """#)
        let result = score(
            events: [event("faceFound", 0, nil), event("blink", 13, .occurred), event("blink", 25, .occurred),
                     event("blink", 40, .occurred), event("winkLeft", 50)], labels: l)
        #expect(result.accounting == [
            "found: faceFound at frame 0 (labelled 0...0)",
            "found: blink at frame 13 (labelled 10...12)",
            "ignored: blink at frame 25 (dontcare 20...30)",
            "false positive: blink at frame 40",
            "false positive: winkLeft at frame 50 (labelled absent)",
            "missed: smile in frames 60...70",
        ])
        #expect(result.findings == Array(result.accounting[3...]))
    }

    /// Another detector's event lines (`evaluate --events-from`) with a bad field were refused with the
    /// decoder's Swift text ("DecodingError.keyNotFound ... CodingKeys(stringValue: \"frame\" ..."), or, for
    /// a frame of 0.5, "not valid JSON"; a negative frame and an empty name were scored. Each is named now.
    @Test func badEventLinesAreRefusedInWords() throws {
        let ok = #"{"type":"event","event":"blink","phase":"occurred","frame":3,"time":0.1}"#
        let cases: [(String, String)] = [
            (#"{"type":"event","event":"blink","frame":0.5,"time":0}"#, "frame: expected a whole number, 0 or more"),
            (#"{"type":"event","event":"blink","frame":1e30,"time":0}"#, "frame: expected a whole number, 0 or more"),
            (#"{"type":"event","event":"blink","frame":-5,"time":0}"#, "frame: expected a whole number, 0 or more"),
            (#"{"type":"event","event":"blink","time":0}"#, "frame: expected a whole number, 0 or more"),
            (#"{"type":"event","event":"blink","frame":true,"time":0}"#, "frame: expected a whole number, 0 or more"),
            (#"{"type":"event","event":"","frame":1,"time":0}"#, "event: expected the event's name"),
            (#"{"type":"event","frame":1,"time":0}"#, "event: expected the event's name"),
            (#"{"type":"event","event":"blink","frame":1}"#, "time: expected seconds, 0 or more"),
            (#"{"type":"event","event":"blink","frame":1,"time":0,"phase":"sideways"}"#,
             "phase: expected began, ended or occurred"),
        ]
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("events-\(UUID().uuidString).ndjson")
        defer { try? FileManager.default.removeItem(at: url) }
        for (line, problem) in cases {
            try Data((ok + "\n" + line + "\n").utf8).write(to: url)
            #expect(throws: LabelsError(path: url.path, reason: "line 2: \(problem)", exitCode: .dataError)) {
                try EvaluateCommand.recordedEvents(url.path)
            }
        }
        try Data((ok + "\n" + #"{"type":"coefficients","frame":"x"}"# + "\n").utf8).write(to: url)
        #expect(try EvaluateCommand.recordedEvents(url.path).map(\.frame) == [3])
        // A line without a type was skipped without a word (a file of them scored as all missed).
        try Data((ok + "\n" + #"{"event":"blink","phase":"occurred","frame":3,"time":0.1}"# + "\n").utf8).write(to: url)
        #expect(throws: LabelsError(path: url.path, reason: #"line 2: no "type" (an event line has "type":"event")"#,
                                    exitCode: .dataError)) { try EvaluateCommand.recordedEvents(url.path) }
        // A key given twice was scored as one of its values; after blank lines, the line named was the count of
        // lines with text (line 2 for the fourth). Both as a newcomer wrote them.
        let twice = #"{"type":"event","event":"faceFound","frame":0,"time":0,"event":"smile"}"#
        try Data((ok + "\n\n \t\r\n" + twice + "\n").utf8).write(to: url)
        #expect(throws: LabelsError(path: url.path, reason: "line 4: event: given twice in one object; JSON keeps "
                                    + "only one of them", exitCode: .dataError)) {
            try EvaluateCommand.recordedEvents(url.path)
        }
        try Data((ok + "\n\n\n" + #"{"type":"event","event":"smile","frame":3}"# + "\n").utf8).write(to: url)
        #expect(throws: LabelsError(path: url.path, reason: "line 4: time: expected seconds, 0 or more",
                                    exitCode: .dataError)) { try EvaluateCommand.recordedEvents(url.path) }
        // A type winkd never sends ("Event") is skipped, and said (on stderr), not refused.
        try Data((ok + "\n" + #"{"type":"Event","event":"blink","frame":3,"time":0.1}"# + "\n").utf8).write(to: url)
        #expect(try EvaluateCommand.recordedEvents(url.path).count == 1)
    }

    /// A misspelt "absnt" was ignored without a word, so the false winks it should have counted were not.
    /// Keys SPEC.md does not know are said (not refused: a labeller's own extra keys are harmless).
    @Test func unknownKeysAreSaid() throws {
        let l = try labels(
            #"{"video": "/x.mp4", "frames": 50, "face": [[0, 49]], "absnt": ["winkLeft"], "notes": "fine", "#
                + #""events": [{"event": "blink", "start": 1, "end": 2, "tolerance": 3}], "#
                + #""dontcare": [[3, 4], {"event": "smile", "start": 5, "end": 6, "why": "smirk"}]}"#)
        #expect(l.ignoredKeys == [
            "absnt: unknown key, ignored (known: absent, dontcare, events, face, frames, mirrored, nominal_fps, notes, "
                + "tolerance_frames, video)",
            "events[0].tolerance: unknown key, ignored (known: end, event, start, tolerance_frames)",
            "dontcare[1].why: unknown key, ignored (known: end, event, start)",
        ])
        #expect(l.absent.isEmpty && l.events.count == 1 && l.dontCare.count == 2)
    }

    /// A labels file with a syntax error, or nested 512 deep, was "not a JSON object": where and what now.
    @Test func invalidJSONIsToldFromAnotherKindOfValue() throws {
        func reason(_ json: String) -> String? {
            do { _ = try labels(json) } catch let e as LabelsError { return e.reason } catch { return "\(error)" }
            return nil
        }
        let syntax = reason(#"{"video": "x.mp4" "frames": 3}"#)
        #expect(syntax?.hasPrefix("not valid JSON (") == true && syntax != "not valid JSON ()", "\(syntax ?? "")")
        let deep = reason(
            #"{"notes": "# + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "}")
        #expect(deep?.hasPrefix("not valid JSON (") == true && deep?.contains("nested") == true, "\(deep ?? "")")
        #expect(reason("[1, 2]") == "not a JSON object")
    }

    @Test func aLabelsOwnToleranceOverridesTheClips() throws {
        let l = try labels(
            #"""
            {"video": "/x.mp4", "frames": 100, "tolerance_frames": 3, "face": [[0, 99]],
                            "events": [{"event": "smile", "start": 20, "end": 40, "tolerance_frames": 8}]}
            """#)
        #expect(l.window(of: l.events[0]) == 12...48)
        #expect(score(events: [event("faceFound", 0, nil), event("smile", 13)], labels: l).total.f1 == 1)
    }

    @Test func aDontcareOfAFaceEventCoversBothFaceEvents() throws {
        let l = try labels(
            #"""
            {"video": "/x.mp4", "frames": 100, "tolerance_frames": 3, "face": [[0, 99]],
                            "dontcare": [{"event": "faceLost", "start": 50, "end": 60}]}
            """#)
        let s = score(
            events: [event("faceFound", 0, nil), event("faceLost", 52, nil), event("faceFound", 55, nil)],
            labels: l)
        #expect(s.total.falsePositives == 0, "\(s.findings)")
    }

    /// Found by trying to break evaluate: these used to trap (exit 132) in the window arithmetic. Such files
    /// are now refused when read (below); the arithmetic still clamps whatever it is given.
    @Test func hostileTolerancesAndRangesDoNotTrap() throws {
        let negative = ClipLabels(
            video: "/x.mp4", frames: 50, toleranceFrames: -100, mirrored: false, face: [0...49],
            events: [.init(event: "blink", start: 10, end: 12)], absent: [], dontCare: [])
        #expect(negative.window(of: negative.events[0]).contains(11))
        _ = score(events: [event("blink", 11, .occurred)], labels: negative)
        let huge = ClipLabels(
            video: "/x.mp4", frames: 50, toleranceFrames: Int.max, mirrored: false, face: [0...49],
            events: [.init(event: "smile", start: Int.min, end: Int.max, toleranceFrames: Int.max)], absent: [],
            dontCare: [])
        let s = score(events: [event("smile", 3)], labels: huge)
        #expect(s.total.truePositives == 1)
    }

    /// A newcomer's finding: wrong types and ranges were taken silently and scored wrongly ("mirrored":
    /// "true" was ignored, scoring a mirrored wink clip 0.667; "frames": 0 made every label a miss and a
    /// false positive). Each is refused (65) naming the key and the entry.
    /// A second "events" list dropped the first one's labels without a word.
    @Test func aKeyGivenTwiceIsRefused() throws {
        let json = #"{"video": "/x.mp4", "frames": 50, "face": [[0, 49]], "events": [], "events": []}"#
        #expect(throws: LabelsError.self) { try labels(json) }
        do {
            _ = try labels(json)
        } catch let error as LabelsError {
            #expect(error.reason == "events: given twice in one object; JSON keeps only one of them")
        }
    }

    @Test func badFieldsAreRefusedNamingTheKey() throws {
        let base = #""video": "/x.mp4", "face": [[0, 49]]"#
        let wholeOrZero = "expected a whole number, 0 or more"
        let cases: [(String, String)] = [
            (#"{\#(base), "frames": 50, "mirrored": "true"}"#, "mirrored: expected true or false"),
            (#"{\#(base), "frames": 0}"#, "frames: expected a whole number, 1 or more"),
            (#"{"video": "/x.mp4"}"#, "frames: expected a whole number, 1 or more"),
            (#"{\#(base), "frames": 50, "nominal_fps": 0}"#,
             "nominal_fps: expected frames per second above 0 and at most 1000, or a description"),
            (#"{\#(base), "frames": 50, "nominal_fps": [30]}"#,
             "nominal_fps: expected frames per second above 0 and at most 1000, or a description"),
            (#"{\#(base), "frames": 50, "tolerance_frames": -1}"#, "tolerance_frames: \(wholeOrZero)"),
            (#"{\#(base), "frames": 50, "tolerance_frames": 1.5}"#, "tolerance_frames: \(wholeOrZero)"),
            (#"{\#(base), "frames": 50, "events": [{"event": "blink", "start": -5, "end": 3}]}"#,
             "events[0]: expected start <= end within the clip's frames 0...49, got -5...3"),
            (#"{\#(base), "frames": 50, "events": [{"event": "blink", "start": 5, "end": 3}]}"#,
             "events[0]: expected start <= end within the clip's frames 0...49, got 5...3"),
            (#"{\#(base), "frames": 50, "events": [{"event": "smile", "start": 5, "end": 9, "tolerance_frames": -2}]}"#,
             "events[0].tolerance_frames: expected a whole number, 0 or more"),
            (#"{\#(base), "frames": 50, "dontcare": [[10, 5]]}"#,
             "dontcare[0]: expected start <= end within the clip's frames 0...49, got 10...5"),
            (#"{"video": "/x.mp4", "frames": 50, "face": [[0, 900]]}"#,
             "face[0]: expected start <= end within the clip's frames 0...49, got 0...900"),
            (#"{\#(base), "frames": 50, "absent": "blink"}"#, "absent: expected a list of event names"),
            (#"{\#(base), "frames": 50, "events": [{"event": "blink", "start": 5, "end": 6}], "absent": ["blink"]}"#,
             "absent: expected names not also labelled in events ('blink' is both)"),
            (#"{\#(base), "frames": 50, "events": {"event": "blink"}}"#, "events: expected a list"),
            // JSON booleans and numbers are not each other ("mirrored": 1 was taken as true, "start": true as 1).
            (#"{\#(base), "frames": 50, "mirrored": 1}"#, "mirrored: expected true or false"),
            (#"{\#(base), "frames": true}"#, "frames: expected a whole number, 1 or more"),
            (#"{\#(base), "frames": 50, "events": [{"event": "blink", "start": true, "end": 3}]}"#,
             "events[0].start: expected a whole frame number"),
            // A newcomer's findings: a frame of 19.5 was "expected an object with event, start, end"; an empty
            // video path was "is a directory".
            (#"{\#(base), "frames": 50, "events": [{"event": "blink", "start": 19.5, "end": 21}]}"#,
             "events[0].start: expected a whole frame number"),
            (#"{\#(base), "frames": 50, "events": [{"event": "blink", "start": 19, "end": "21"}]}"#,
             "events[0].end: expected a whole frame number"),
            (#"{\#(base), "frames": 50, "events": [{"event": "", "start": 19, "end": 21}]}"#,
             "events[0].event: expected an event name"),
            (#"{\#(base), "frames": 50, "events": [5]}"#, "events[0]: expected an object with event, start, end"),
            (#"{"video": "", "frames": 50, "face": [[0, 49]]}"#, "video: expected the clip's path"),
            // Overlapping face ranges gave a bogus "missed: faceFound in frames 60...60".
            (#"{"video": "/x.mp4", "frames": 72, "face": [[0, 71], [60, 71]]}"#,
             "face[1]: expected a range apart from face[0] (0...71); ranges that meet are one"),
            (#"{"video": "/x.mp4", "frames": 72, "face": [[0, 40], [41, 71]]}"#,
             "face[1]: expected a range apart from face[0] (0...40); ranges that meet are one"),
            (#"{\#(base), "frames": 50, "events": [{"event": "blink", "start": 5, "end": 9}, "#
                + #"{"event": "blink", "start": 5, "end": 9}]}"#,
             "events[1]: expected a label other than events[0] (the same blink in frames 5...9)"),
            (#"{"video": "/x.mp4", "frames": 50, "face": [[false, true]]}"#, "face[0]: expected a [start, end] pair"),
            (#"{\#(base), "frames": 50, "nominal_fps": true}"#,
             "nominal_fps: expected frames per second above 0 and at most 1000, or a description"),
        ]
        for (json, reason) in cases {
            #expect {
                try labels(json)
            } throws: { error in
                let e = error as? LabelsError
                return e?.exitCode == .dataError && e?.description.hasSuffix(": \(reason)") == true
            }
        }
        let good = try labels(#"{\#(base), "frames": 50, "mirrored": true, "nominal_fps": 12.5, "absent": ["blnk"]}"#)
        #expect(good.mirrored && good.nominalFPS == 12.5 && good.eventNames == ["blnk"])
        // The fixtures describe a variable rate in words: 30 is used.
        let described = try labels(#"{\#(base), "frames": 50, "nominal_fps": "variable: 24 then 30"}"#)
        #expect(described.nominalFPS == 30)
    }

    @Test func aPathThatIsNotARegularFileIsRefusedWithExit66() {
        #expect(throws: LabelsError.self) { try ClipLabels.load(path: "/dev/zero") }
        do {
            _ = try ClipLabels.load(path: "/dev/zero")
        } catch let e as LabelsError {
            #expect(e.exitCode == .noInput && e.description == "/dev/zero: not a regular file")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
