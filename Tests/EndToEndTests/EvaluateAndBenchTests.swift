import Foundation
import Testing

/// `winkctl evaluate` and `winkctl bench` as a user runs them.
@Suite(.serialized)
struct EvaluateAndBenchTests {
    @Test func evaluateScoresLabelledClipsAndFailsBelowMinF1() throws {
        let good = try Binaries.run("winkctl", ["evaluate", Binaries.fixture("labels/single_face.labels.json"),
                                                Binaries.fixture("labels/no_face.labels.json"), "--min-f1", "1"])
        #expect(good.status == 0, "\(good.stdout)\(good.stderr)")
        #expect(good.stdoutLines.last?.hasPrefix("total") == true)
        #expect(good.stdoutLines.last?.hasSuffix("1.000") == true, "\(good.stdout)")

        // Labels that describe a blink, applied to the left-wink clip: a miss and a false positive.
        let dir = try Binaries.temporaryDirectory()
        let labels = dir.appendingPathComponent("mismatch.labels.json")
        try Data("""
            {"video": "\(Binaries.fixture("video/single_face_wink_left.mp4"))", "frames": 80, "tolerance_frames": 3,
             "face": [[0, 79]], "events": [{"event": "smile", "start": 19, "end": 76},
                                           {"event": "blink", "start": 25, "end": 29}],
             "absent": ["winkRight"]}
            """.utf8).write(to: labels)
        let bad = try Binaries.run("winkctl", ["evaluate", labels.path, "--min-f1", "1"])
        #expect(bad.status == 1)
        #expect(bad.stdout.contains("missed: blink") && bad.stdout.contains("false positive: winkLeft"), "\(bad.stdout)")
        #expect(bad.stderrLines.count == 1 && bad.stderr.contains("below --min-f1"))
        let missing = try Binaries.run("winkctl", ["evaluate", dir.appendingPathComponent("none.json").path])
        #expect(missing.status == 66 && missing.stderrLines.count == 1)
    }

    @Test func benchPrintsEveryStage() throws {
        let r = try Binaries.run("winkctl", ["bench", Binaries.fixture("video/single_face.mp4"), "--repeat", "1"])
        #expect(r.status == 0, "\(r.stderr)")
        for stage in ["decode", "tracking", "detection", "landmarks", "eye/pose", "expressions", "encode+socket"] {
            #expect(r.stdoutLines.contains { $0.trimmingCharacters(in: .whitespaces).hasPrefix(stage) }, "\(stage)")
        }
        #expect(r.stdout.contains("detections per 100 frames") && r.stdout.contains("peak RSS"))
        #expect(r.stdout.contains("72 frames"), "\(r.stdout)")
        #if DEBUG
        #expect(r.stderr.contains("DEBUG BUILD"))
        #endif
    }
}
