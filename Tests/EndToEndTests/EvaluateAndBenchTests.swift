import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `winkctl evaluate` and `winkctl bench` as a user runs them.
@Suite(.serialized)
struct EvaluateAndBenchTests {
    @Test func evaluateScoresLabelledClipsAndFailsBelowMinF1() throws {
        let good = try Binaries.run(
            "winkctl",
            [
                "evaluate", Binaries.fixture("labels/single_face.labels.json"),
                Binaries.fixture("labels/no_face.labels.json"), "--min-f1", "1",
            ])
        #expect(good.status == 0, "\(good.stdout)\(good.stderr)")
        #expect(good.stdoutLines.last?.hasPrefix("total") == true)
        #expect(good.stdoutLines.last?.hasSuffix("1.000") == true, "\(good.stdout)")

        // Labels that describe a blink, applied to the left-wink clip: a miss and a false positive.
        let dir = try Binaries.temporaryDirectory()
        let labels = dir.appendingPathComponent("mismatch.labels.json")
        try Data(
            """
            {"video": "\(Binaries.fixture("video/single_face_wink_left.mp4"))", "frames": 80, "tolerance_frames": 3,
             "face": [[0, 79]], "events": [{"event": "smile", "start": 19, "end": 76},
                                           {"event": "blink", "start": 25, "end": 29}],
             "absent": ["winkRight"]}
            """.utf8
        ).write(to: labels)
        let bad = try Binaries.run("winkctl", ["evaluate", labels.path, "--min-f1", "1"])
        #expect(bad.status == 1)
        #expect(
            bad.stdout.contains("missed: blink") && bad.stdout.contains("false positive: winkLeft"), "\(bad.stdout)")
        // The run's summary line, then the one line saying why it failed.
        #expect(bad.stderrLines.count == 2 && bad.stderrLines[0].hasPrefix("evaluate: ")
            && bad.stderrLines[1].contains("below --min-f1"), "\(bad.stderr)")
        let missing = try Binaries.run("winkctl", ["evaluate", dir.appendingPathComponent("none.json").path])
        #expect(missing.status == 66 && missing.stderrLines.count == 1)
    }

    /// Scoring footage unlike the labelled recording: the same clip through a transform. A face shrunk to
    /// about 10 px is not found (faceFound missed); darkened with noise, the clip still scores 1.
    /// Every labels file is read before any clip is scored: stills labels (or a broken file) after a clip
    /// are refused at once, with no clip line printed first.
    @Test func aBadLabelsFileIsRefusedBeforeAnyClipRuns() throws {
        let r = try Binaries.run(
            "winkctl",
            [
                "evaluate", Binaries.fixture("labels/single_face.labels.json"),
                Binaries.fixture("labels/stills.labels.json"), "--quiet",
            ])
        #expect(r.status == 65, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.isEmpty, "\(r.stdout)")
        #expect(
            r.stderrLines.count == 1 && r.stderr.contains("stills.labels.json: labels for still images"), "\(r.stderr)")
    }

    @Test func evaluateScoresTheClipsThroughATransform() throws {
        let clip = Binaries.fixture("labels/single_face.labels.json")
        let tiny = try Binaries.run("winkctl", ["evaluate", clip, "--scale", "0.05", "--verbose", "--quiet"])
        #expect(tiny.status == 0 && tiny.stdout.contains("missed: faceFound"), "\(tiny.stdout)\(tiny.stderr)")
        let dark = try Binaries.run("winkctl", ["evaluate", clip, "--gain", "0.5", "--noise", "2", "--quiet"])
        #expect(dark.status == 0 && dark.stdoutLines.last?.hasSuffix("1.000") == true, "\(dark.stdout)")
        // The report says what the clips were seen through, in text and in JSON.
        #expect(dark.stdoutLines.contains("clips seen through: --gain 0.5 --noise 2"), "\(dark.stdout)")
        let json = try Binaries.run("winkctl", ["evaluate", clip, "--rotate", "-12.5", "--json", "--quiet"])
        let report = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(report?["transform"] as? String == "--rotate -12.5", "\(json.stdout.prefix(200))")
        let plain = try Binaries.run("winkctl", ["evaluate", clip, "--json", "--quiet"])
        let untransformed = try JSONSerialization.jsonObject(with: Data(plain.stdout.utf8)) as? [String: Any]
        #expect(untransformed?["transform"] == nil && untransformed?["total"] != nil)
        let recorded = try Binaries.run(
            "winkctl", ["evaluate", clip, "--events-from", Binaries.fixture("labels"), "--noise", "2"])
        #expect(recorded.status == 64 && recorded.stderr.contains("--events-from"), "\(recorded.stderr)")
    }

    /// Another detector's lines scored with `--events-from`: here winkd's own, recorded by analyze. Its summary
    /// said "evaluate: 0 frames, 0 with a face, 3 events" (a newcomer's finding): no frame is read then.
    @Test func evaluateScoresRecordedLines() throws {
        let dir = try Binaries.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let analysed = try Binaries.run("winkctl", ["analyze", Binaries.fixture("video/single_face.mp4"), "--quiet"])
        try Data(analysed.stdout.utf8).write(to: dir.appendingPathComponent("single_face.ndjson"))
        let r = try Binaries.run(
            "winkctl", ["evaluate", Binaries.fixture("labels/single_face.labels.json"), "--events-from", dir.path])
        #expect(r.status == 0 && r.stdoutLines.last?.hasSuffix("1.000") == true, "\(r.stdout)")
        #expect(r.stderrLines == ["evaluate: 3 events read from recorded lines; 1 clip, total F1 1.000"],
                "\(r.stderr)")
    }

    /// A newcomer's finding: `evaluate --json` left out every warning (they went to stderr only), so a script
    /// reading the JSON could not tell a clip was damaged or its labels misspelt. Each clip carries them.
    @Test func evaluateJSONCarriesEachClipsWarnings() throws {
        let dir = try Binaries.temporaryDirectory()
        var labels = try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: Binaries.fixture("labels/single_face.labels.json"))))
            as? [String: Any] ?? [:]
        labels["video"] = Binaries.fixture("video/single_face.mp4")
        labels["frames"] = 80
        labels["absnt"] = ["smiel"]
        let file = dir.appendingPathComponent("sf.labels.json")
        try JSONSerialization.data(withJSONObject: labels).write(to: file)
        let r = try Binaries.run("winkctl", ["evaluate", file.path, "--json", "--quiet"])
        let report = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        let clip = (report?["clips"] as? [[String: Any]])?.first
        let warnings = clip?["warnings"] as? [String] ?? []
        #expect(warnings.count == 2, "\(warnings)")
        #expect(warnings.first?.hasPrefix("absnt: unknown key, ignored") == true, "\(warnings)")
        #expect(warnings.last == "the labels say 80 frames; the video gave 72", "\(warnings)")
        #expect(r.stderrLines.count == 2 && r.stderrLines.allSatisfy { $0.hasPrefix("evaluate: \(file.path): ") })
        // A clip with nothing to say has an empty list.
        let whole = Binaries.fixture("labels/single_face.labels.json")
        let plain = try Binaries.run("winkctl", ["evaluate", whole, "--json"])
        let quietClip = ((try JSONSerialization.jsonObject(with: Data(plain.stdout.utf8)) as? [String: Any])?["clips"]
            as? [[String: Any]])?.first
        #expect(quietClip?["warnings"] as? [String] == [])
        // The same file twice (here by a symbolic link) was scored twice; it is scored once, and said.
        let link = dir.appendingPathComponent("link.labels.json")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: whole)
        let twice = try Binaries.run("winkctl", ["evaluate", whole, link.path, "--json", "--quiet"])
        let clips = (try JSONSerialization.jsonObject(with: Data(twice.stdout.utf8)) as? [String: Any])?["clips"]
        #expect((clips as? [Any])?.count == 1, "\(twice.stdout.prefix(300))")
        #expect(twice.stderrLines == ["evaluate: \(whole): given again as \(link.path); scored once"])
        // ... and in that clip's warnings for --json readers (it was on stderr only).
        #expect((clips as? [[String: Any]])?.first?["warnings"] as? [String]
                == ["given again as \(link.path); scored once"])
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

    /// A newcomer's findings: `bench` on a missing or empty file loaded the model first and printed "model load:
    /// ..." on stdout before its error line; `--clients 0` printed "received per client: " and nothing; a
    /// truncated recording was timed without the warning analyze gives.
    @Test func benchRefusesABadFileBeforeItsReportAndSaysWhatItMeasured() throws {
        let dir = try Binaries.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let empty = dir.appendingPathComponent("zero.mp4").path
        try #require(FileManager.default.createFile(atPath: empty, contents: Data()))
        for (file, status) in [(dir.appendingPathComponent("none.mp4").path, Int32(66)), (empty, 65)] {
            let r = try Binaries.run("winkctl", ["bench", file])
            #expect(r.status == status && r.stdout.isEmpty, "\(r.stdout)")
            #expect(r.stderrLines.filter { !$0.hasPrefix("!!") && !$0.allSatisfy { $0 == "!" } }.count == 1,
                    "\(r.stderr)")
        }
        let none = try Binaries.run("winkctl", ["bench", Binaries.fixture("video/single_face.mp4"), "--clients", "0"])
        #expect(none.stdoutLines.contains("lines published: 75; no client (--clients 0)"), "\(none.stdout)")
        let cut = try Binaries.truncatedFixture("people/video/tpsmm_driving_vox.mp4", in: dir, as: "cut.mp4")
        let damaged = try Binaries.run("winkctl", ["bench", cut, "--rounds", "2", "--quiet"])
        #expect(damaged.status == 0, "\(damaged.stderr)")
        let said = damaged.stderrLines.filter { $0.hasPrefix("bench: \(cut): ") && $0.contains("(truncated?)") }
        #expect(said.count == 1, "said once, not per round: \(damaged.stderr)")
    }

    /// Rounds alternate ours and the reference's; both ratios come from the reference's own figures.
    @Test func benchRoundsQuoteBothRatiosAndTheirMedian() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        // A stand-in reference that reports 1 frame/s both ways, so each ratio equals our own fps.
        let reference = dir.appendingPathComponent("ref.sh")
        try "#!/bin/sh\necho frames=72 fps_total=1.0 fps_process=1.0\n".write(
            to: reference, atomically: true, encoding: .utf8)
        chmod(reference.path, 0o755)
        let r = try Binaries.run(
            "winkctl",
            [
                "bench", Binaries.fixture("video/single_face.mp4"), "--repeat", "1",
                "--rounds", "3", "--reference", reference.path,
            ])
        #expect(r.status == 0, "\(r.stderr)")
        let fps = r.stdoutLines.filter { $0.hasPrefix("fps: ") }
        let ratios = r.stdoutLines.filter { $0.hasPrefix("ratio winkd/dlib_ref: ") }
        #expect(fps.count == 3 && ratios.count == 3)
        #expect(r.stdoutLines.filter { $0.hasPrefix("round ") } == ["round 1:", "round 2:", "round 3:"])
        // Each round's stage table, its tracking parts indented under tracking.
        #expect(r.stdoutLines.filter { $0.hasPrefix("  detection ") || $0.hasPrefix("  eye/pose ") }.count == 6)
        // "fps: decode+process A, process only B" (1 decimal) -> "ratio ...: ... A, ... B" (2 decimals).
        for (f, q) in zip(fps, ratios) {
            let numbers = f.split(whereSeparator: { !"0123456789.".contains($0) }).compactMap { Double($0) }
            let quoted = q.split(whereSeparator: { !"0123456789.".contains($0) }).compactMap { Double($0) }
            #expect(numbers.count == 2 && quoted.count == 2, "\(f) / \(q)")
            if numbers.count == 2 && quoted.count == 2 {
                #expect(abs(numbers[0] - quoted[0]) <= 0.051 && abs(numbers[1] - quoted[1]) <= 0.051, "\(f) / \(q)")
            }
        }
        #expect(r.stdout.contains("median ratio over 3 rounds: decode+process"), "\(r.stdout)")
    }

    /// `--daemon`: winkd itself on the clip paced in real time, measured from outside.
    @Test func benchMeasuresTheDaemonAsItsClientsSeeIt() throws {
        let r = try Binaries.run(
            "winkctl",
            [
                "bench", Binaries.fixture("video/single_face.mp4"), "--daemon",
                Binaries.directory.appendingPathComponent("winkd").path,
                "--clients", "3", "--seconds", "2",
            ])
        #expect(r.status == 0, "\(r.stderr)")
        let text = r.stdout
        #expect(text.contains("daemon start-up: socket accepting") && text.contains("first frame line"), "\(text)")
        #expect(text.contains("daemon CPU: ") && text.contains("peak RSS (VmHWM)"), "\(text)")
        // 2 s at 30 frames/s: about 60 coefficient lines per client, each with a latency.
        let latency = try #require(r.stdoutLines.first { $0.hasPrefix("daemon latency") })
        let lines = latency.split(separator: " ").first { $0.hasPrefix("lines=") }.flatMap { Int($0.dropFirst(6)) } ?? 0
        #expect(lines >= 3 * 45 && lines <= 3 * 75, "\(latency)")
        let perClient = try #require(r.stdoutLines.first { $0.hasPrefix("daemon lines per client") })
        #expect(!perClient.hasSuffix(" 0...0"), "\(perClient)")
        let missing = try Binaries.run(
            "winkctl",
            [
                "bench", Binaries.fixture("video/single_face.mp4"),
                "--daemon", "/nonexistent/winkd",
            ])
        #expect(missing.status == 64 && missing.stderrLines.count == 1, "\(missing.stderr)")
    }
}
