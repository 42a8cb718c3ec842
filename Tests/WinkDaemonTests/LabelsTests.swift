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

    /// Found by trying to break evaluate: these used to trap (exit 132) in the window arithmetic.
    @Test func hostileTolerancesAndRangesDoNotTrap() throws {
        let negative = try labels(
            #"""
            {"video": "/x.mp4", "frames": 50, "tolerance_frames": -100, "face": [[0, 49]],
                                   "events": [{"event": "blink", "start": 10, "end": 12}]}
            """#)
        #expect(negative.window(of: negative.events[0]).contains(11))
        _ = score(events: [event("blink", 11, .occurred)], labels: negative)
        let huge = try labels(
            """
            {"video": "/x.mp4", "frames": 50, "tolerance_frames": \(Int.max), "face": [[0, 49]],
             "events": [{"event": "smile", "start": \(Int.min), "end": \(Int.max), "tolerance_frames": \(Int.max)}]}
            """)
        let s = score(events: [event("smile", 3)], labels: huge)
        #expect(s.total.truePositives == 1)
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
