import Capture
import Expressions
import FaceTracking
import Foundation
import Testing
import WinkCore
@testable import WinkDaemon
@testable import WinkctlCommands

extension ModelTests {
/// Accuracy on ../shared/fixtures/people: twelve labelled recordings of eleven people who are not the man
/// of the first fixtures. Each clip's figure (README, "Accuracy") is held so that a change that loses a
/// true event or adds a false one on anybody fails here; an improvement passes (and the figures should
/// then be raised).
@Suite
struct PeopleAccuracyTests {
    /// clip, true positives at least, false positives at most (SPEC.md scoring, all events).
    static let held: [(clip: String, truePositives: Int, falsePositives: Int)] = [
        ("liveportrait_d11", 2, 0),
        ("liveportrait_d13", 7, 0),
        ("liveportrait_d14", 13, 1),
        ("liveportrait_d18", 6, 0),
        ("liveportrait_d3", 5, 0),
        ("liveportrait_d9", 16, 0),
        ("liveportrait_old_d5", 5, 0),
        ("pcavs_vox_Audio_Source_00104", 6, 1),
        ("pcavs_vox_Pose_Source_741400163", 1, 0),
        ("tpsmm_driving_vox", 6, 0),
        ("videoretalking_face_4", 8, 0),
        ("xportrait_driving_video", 7, 0),
    ]

    static func labels(_ clip: String) -> String { Fixtures.path("people/labels/\(clip).labels.json") }

    @Test(arguments: held.map(\.clip))
    func clipKeepsItsFigure(_ clip: String) throws {
        let expected = try #require(Self.held.first { $0.clip == clip })
        let labels = try ClipLabels.load(path: Self.labels(clip))
        let events = try pipeline(mirrored: labels.mirrored).events(of: try openMediaFile(path: labels.video))
        let result = score(events: events, labels: labels)
        let t = result.total
        let held = "held \(expected.truePositives) tp, \(expected.falsePositives) fp"
        #expect(t.truePositives >= expected.truePositives && t.falsePositives <= expected.falsePositives,
                "\(clip): tp \(t.truePositives), fp \(t.falsePositives) (\(held)): \(result.findings)")
        // No false wink on anybody: a wink types a key.
        #expect(result.falseWinks.isEmpty, "\(clip): \(result.findings)")
        if clip == "liveportrait_d3" {
            // Lids lowered while looking down (60-167, 209-276; dontcare in the labels, so the score does not
            // see them): no wink, and blink/eyesClosed starts held at 5 (5 before the blink and eyesClosed rows
            // re-armed only on open eyes: the blink at 70 is the real one of 56-59 running into the lowered
            // lids, 231 an eyesClosed of lids nearly shut for 40 frames; 3 until the learned open-eye level was
            // bounded (`Calibration.Settings.maximumNeutralEyeClosed`), which read the lids at 155-161 as shut
            // rather than learn them as open, and so ended a false wink there in the noise; 4 until an
            // eyesClosed onset that reported nothing stopped disarming the row: 117 now, lids shut (Face
            // Mesh's lid gap 0.01-0.05), which found liveportrait_d14's 2 s closure under 8 degradations).
            let down = events.filter { e in
                ((60...167).contains(e.frame) || (209...276).contains(e.frame)) && e.phase != .ended
            }
            #expect(!down.contains { $0.event.hasPrefix("wink") }, "\(down)")
            let closures = down.filter { $0.event == "blink" || $0.event == "eyesClosed" }
            #expect(closures.count <= 5, "\(closures.map { "\($0.event)@\($0.frame)" })")
            // The only real winks of the set: the person's left eye at 6-20, the right at 32-47.
            let winks = events.filter { $0.event.hasPrefix("wink") && $0.phase == .began }
            #expect(winks.map(\.event) == ["winkLeft", "winkRight"], "\(winks)")
            #expect(winks.first.map { (3...23).contains($0.frame) } == true
                        && winks.last.map { (29...50).contains($0.frame) } == true,
                    "\(winks.map(\.frame))")
        }
    }
}
}
