import Capture
import Expressions
import FaceTracking
import Foundation
import Testing
import WinkCore
@testable import WinkDaemon
@testable import WinkctlCommands

/// The model loads once for the whole suite (about 1 s).
let sharedPredictor: ShapePredictor = {
    do { return try ShapePredictor(path: Fixtures.model) } catch { fatalError("model: \(error)") }
}()

func pipeline(mirrored: Bool = false) -> FramePipeline {
    var c = Configuration()
    c.mirrored = mirrored
    return FramePipeline(configuration: c, predictor: sharedPredictor)
}

func occurrences(_ events: [ExpressionEvent]) -> [String] {
    events.filter(\.isOccurrence).map(\.event)
}

/// dlib's predictor is not thread-safe and the model is shared: every suite that uses it is nested here
/// and runs one test at a time.
@Suite(.serialized)
struct ModelTests {}

extension ModelTests {
@Suite
struct FixtureAccuracyTests {
    @Test(arguments: ["single_face", "face_noface", "noface_face", "no_face", "single_face_wink_left",
                      "single_face_wink_right"])
    func labelledClipScoresExactly(_ name: String) throws {
        let labels = try ClipLabels.load(path: Fixtures.labels(name))
        let events = try pipeline(mirrored: labels.mirrored).events(of: try openMediaFile(path: labels.video))
        let result = score(events: events, labels: labels)
        #expect(result.findings.isEmpty, "\(name): \(result.findings)")
        #expect(result.total.f1 == 1.0)
    }

    @Test func winkClipsGiveOneWinkOfTheRightSideAndNoBlink() throws {
        for (clip, side, other) in [("single_face_wink_left.mp4", "winkLeft", "winkRight"),
                                    ("single_face_wink_right.mp4", "winkRight", "winkLeft")] {
            let names = occurrences(try pipeline().events(of: try openMediaFile(path: Fixtures.video(clip))))
            #expect(names.filter { $0 == side }.count == 1, "\(clip): \(names)")
            #expect(!names.contains(other) && !names.contains("blink"), "\(clip): \(names)")
        }
    }

    @Test func durationsComeFromTimestampsOnVariableFrameRateVideo() throws {
        // noface_face.mov: 24 fps title then a 30 fps face; the smile lasts ~1.6 s either way.
        let events = try pipeline().events(of: try openMediaFile(path: Fixtures.video("noface_face.mov")))
        let found = try #require(events.first { $0.event == "faceFound" })
        #expect(found.frame >= 93 && found.frame <= 99)
        #expect(abs(found.time - 3.97) < 0.1, "96 frames at 24 fps = 4.0 s, not 3.2 s at 30 fps")
        let ended = try #require(events.first { $0.event == "smile" && $0.phase == .ended })
        #expect(abs(try #require(ended.duration) - 1.6) < 0.2)
    }
}

@Suite
struct StillImageTests {
    struct Still {
        var coefficients: BlendShapeCoefficients
        var events: [String]
    }

    func analyse(_ relative: String) throws -> Still {
        let p = pipeline()
        var events: [String] = []
        var coefficients = BlendShapeCoefficients()
        try p.run(try openMediaFile(path: Fixtures.path(relative))) { _, face in
            events += occurrences(p.engine.events)
            if face != nil { coefficients = p.engine.coefficients }
        }
        return Still(coefficients: coefficients, events: events)
    }

    @Test func expressionsOnThePhotos() throws {
        let surprise = try analyse("images/expressions/0-f1-su-ph.jpg")
        let happy = try analyse("images/expressions/0-f15-hao-ph.jpg")
        let pressed = try analyse("images/expressions/15-f13-anc-ph.jpg")
        let turned = try analyse("images/expressions/45-m7-di-ph.jpg")
        let single = try analyse("images/expressions/single_face.jpg")
        #expect(surprise.events.contains("mouthOpen") && !surprise.events.contains("smile"), "\(surprise.events)")
        #expect(happy.events.contains("smile") && !happy.events.contains("mouthOpen"), "\(happy.events)")
        #expect(single.events.contains("smile") && !single.events.contains("mouthOpen"), "\(single.events)")
        #expect(!pressed.events.contains("smile") && !pressed.events.contains("mouthOpen"), "\(pressed.events)")
        #expect(!turned.events.contains("smile") && !turned.events.contains("mouthOpen"), "\(turned.events)")
        // stills.labels.json orderings
        let jaw = { (s: Still) in s.coefficients[.jawOpen] }
        #expect(jaw(surprise) > jaw(happy) && jaw(happy) > jaw(pressed))
        let smile = { (s: Still) in s.coefficients[.mouthSmileLeft] + s.coefficients[.mouthSmileRight] }
        #expect(smile(happy) > smile(pressed) && smile(happy) > smile(surprise))
        #expect(surprise.coefficients[.browInnerUp] > pressed.coefficients[.browInnerUp])
    }

    @Test func faceCountsOnStills() throws {
        let tracker = FaceTracker(predictor: sharedPredictor)
        func faces(_ relative: String) throws -> Int {
            let source = try openMediaFile(path: Fixtures.path(relative))
            let buffer = PixelBuffer()
            _ = try source.read(into: buffer)
            return try tracker.detectAll(buffer).count
        }
        #expect(try faces("images/expressions/multi_face.jpg") >= 4)
        #expect(try faces("images/dogs.jpg") == 0)
        #expect(try faces("images/expressions/single_face.jpg") == 1)
        #expect(try events("images/dogs.jpg").isEmpty)
    }

    func events(_ relative: String) throws -> [ExpressionEvent] {
        try pipeline().events(of: try openMediaFile(path: Fixtures.path(relative)))
    }
}
}
