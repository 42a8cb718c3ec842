import Expressions
import Testing
import WinkCore

/// Drives the table with a scripted value per frame (30 fps unless times are given).
struct Script {
    var table: AnalyzerTable
    var events: [ExpressionEvent] = []
    var frame = 0

    init(_ rows: [AnalyzerRow]) { table = AnalyzerTable(rows: rows) }

    mutating func feed(_ values: [(BlendShape, Float)], seconds: Double = 1.0 / 30, gates: AnalyzerTable.Gates = .open,
                       times: Int = 1) {
        for _ in 0..<times {
            var c = BlendShapeCoefficients()
            for (s, v) in values { c[s] = v }
            table.step(frame: FrameInfo(index: frame, time: Double(frame) * seconds, monotonicNanoseconds: 0),
                       coefficients: c, gates: gates, into: &events)
            frame += 1
        }
    }

    var summary: [String] { events.map { "\($0.event):\($0.phase?.rawValue ?? "-")@\($0.frame)" } }
}

struct AnalyzerTableTests {
    let jaw = try! Formula(parsing: "jawOpen")

    @Test func hysteresisKeepsAHeldExpressionBetweenExitAndEnter() {
        var s = Script([AnalyzerRow(event: "mouthOpen", value: jaw, enter: 0.5, exit: 0.3)])
        s.feed([(.jawOpen, 0.6)])      // began at 0
        s.feed([(.jawOpen, 0.4)], times: 3)  // between exit and enter: still on
        s.feed([(.jawOpen, 0.2)])      // ended at 4
        s.feed([(.jawOpen, 0.45)])     // below enter: nothing
        #expect(s.summary == ["mouthOpen:began@0", "mouthOpen:ended@4"])
        #expect(s.events[1].duration == 0.133)
    }

    @Test func minimumDurationComesFromTimestampsNotFrameCounts() {
        let row = AnalyzerRow(event: "mouthOpen", value: jaw, enter: 0.5, exit: 0.3, minDuration: 0.25)
        var fast = Script([row])
        fast.feed([(.jawOpen, 0.8)], seconds: 1.0 / 60, times: 15)  // 15 frames = 0.233 s at 60 fps
        #expect(fast.events.isEmpty)
        fast.feed([(.jawOpen, 0.8)], seconds: 1.0 / 60)  // 0.25 s
        #expect(fast.summary == ["mouthOpen:began@15"])
        var slow = Script([row])
        slow.feed([(.jawOpen, 0.8)], seconds: 1.0 / 10, times: 4)  // 0.3 s by frame 3
        #expect(slow.summary == ["mouthOpen:began@3"])
    }

    @Test func speechLikeFlickerDoesNotOpenTheMouth() {
        var s = Script([AnalyzerRow(event: "mouthOpen", value: jaw, enter: 0.5, exit: 0.3, minDuration: 0.25)])
        for _ in 0..<20 {
            s.feed([(.jawOpen, 0.7)], times: 3)  // 0.1 s open
            s.feed([(.jawOpen, 0.1)], times: 2)
        }
        #expect(s.events.isEmpty)
    }

    @Test func oneShotBlinkOnlyWithinItsDurations() {
        let both = try! Formula(parsing: "min(eyeBlinkLeft, eyeBlinkRight)")
        let rows = [
            AnalyzerRow(event: "blink", kind: .oneShot, value: both, enter: 0.5, exit: 0.3, minDuration: 0.02,
                        maxDuration: 0.5),
            AnalyzerRow(event: "eyesClosed", value: both, enter: 0.5, exit: 0.3, minDuration: 0.5),
        ]
        var s = Script(rows)
        s.feed([(.eyeBlinkLeft, 0.9), (.eyeBlinkRight, 0.9)], times: 4)  // 4 frames closed
        s.feed([(.eyeBlinkLeft, 0.0), (.eyeBlinkRight, 0.0)], times: 5)
        #expect(s.summary == ["blink:occurred@4"])
        #expect(s.events[0].duration == 0.133)
        s.events.removeAll()
        s.feed([(.eyeBlinkLeft, 0.9), (.eyeBlinkRight, 0.9)], times: 40)  // 1.3 s closed
        s.feed([(.eyeBlinkLeft, 0.0), (.eyeBlinkRight, 0.0)])
        #expect(s.summary == ["eyesClosed:began@24", "eyesClosed:ended@49"])
    }

    @Test func maxDurationEndsAndNoRepeatUntilReleased() {
        var s = Script([AnalyzerRow(event: "smile", value: try! Formula(parsing: "mouthSmileLeft"), enter: 0.5,
                                    exit: 0.3, maxDuration: 1.0)])
        s.feed([(.mouthSmileLeft, 0.9)], times: 60)  // 2 s held
        #expect(s.summary == ["smile:began@0", "smile:ended@30"])
        s.feed([(.mouthSmileLeft, 0.1)])
        s.feed([(.mouthSmileLeft, 0.9)])
        #expect(s.summary.last == "smile:began@61")
    }

    @Test func cooldownBlocksAQuickRestart() {
        var s = Script([AnalyzerRow(event: "mouthOpen", value: jaw, enter: 0.5, exit: 0.3, cooldown: 0.5)])
        s.feed([(.jawOpen, 0.9)], times: 3)
        s.feed([(.jawOpen, 0.0)])  // ended at 3 (t=0.1)
        s.feed([(.jawOpen, 0.9)], times: 10)  // t up to 0.46: in cooldown
        #expect(s.summary == ["mouthOpen:began@0", "mouthOpen:ended@3"])
        s.feed([(.jawOpen, 0.9)], times: 2)  // t = 0.467, 0.5 -> began at t >= 0.6? frame 18 is 0.6
        s.feed([(.jawOpen, 0.9)], times: 3)
        #expect(s.summary.last == "mouthOpen:began@18")
    }

    /// The default mouthOpen is ARKit's open mouth, jawOpen - mouthClose: a jaw dropped behind sealed lips
    /// (a pucker, puffed cheeks: liveportrait_old_d5 37-62) is not an open mouth; with the lips apart it is.
    @Test func aJawMovedBehindSealedLipsIsNotAnOpenMouth() {
        let model = CoefficientModel()
        var neutral = CoefficientModel.populationNeutral
        neutral.lipGap = 0.002
        var pucker = neutral
        pucker.jawDrop = neutral.jawDrop + 0.34  // old_d5's pucker: jawOpen 0.87
        pucker.lipGap = 0.03
        var open = pucker
        open.lipGap = 0.2
        var s = Script(AnalyzerRow.defaultTable)
        func feed(_ m: FaceMeasures, times: Int) {
            let c = model.coefficients(m, neutral: neutral)
            s.feed([(.jawOpen, c[.jawOpen]), (.mouthClose, c[.mouthClose])], times: times)
        }
        feed(pucker, times: 30)
        #expect(model.coefficients(pucker, neutral: neutral)[.jawOpen] > 0.8)
        #expect(s.summary.isEmpty, "\(s.summary)")
        feed(neutral, times: 10)
        feed(open, times: 12)
        feed(neutral, times: 6)
        #expect(s.summary == ["mouthOpen:began@48", "mouthOpen:ended@55"], "\(s.summary)")
    }

    @Test func suppressionCancelsAWinkWhileBothEyesClose() {
        var s = Script(AnalyzerRow.defaultTable)
        // Left eye closes one frame before the right: a blink, not a wink.
        s.feed([(.eyeBlinkLeft, 0.9), (.eyeBlinkRight, 0.1)])
        s.feed([(.eyeBlinkLeft, 0.95), (.eyeBlinkRight, 0.9)], times: 3)
        s.feed([(.eyeBlinkLeft, 0.0), (.eyeBlinkRight, 0.0)], times: 3)
        // Reopened at frame 4: a blink has no release delay, so it is decided on that first open frame.
        #expect(s.summary == ["blink:occurred@4"])
        #expect(s.events.first?.duration == 0.1)
        // A real wink, once the wink's 0.5 s cooldown after the blink (decided at frame 4) has passed: left
        // closed, right open for 0.4 s from frame 22; it begins once held 0.25 s (frame 22 + 7.5 frames, so
        // frame 30) and ends where the eye reopened (frame 34), decided 0.15 s later (the rows' endDelay).
        s.events.removeAll()
        s.feed([(.eyeBlinkLeft, 0.0), (.eyeBlinkRight, 0.0)], times: 15)
        s.feed([(.eyeBlinkLeft, 0.9), (.eyeBlinkRight, 0.05)], times: 12)
        s.feed([(.eyeBlinkLeft, 0.0), (.eyeBlinkRight, 0.0)], times: 6)
        #expect(s.summary == ["winkLeft:began@30", "winkLeft:ended@39"])
        #expect(s.events.last?.duration == 0.4)
    }

    /// Found on a recording of a man in glasses (liveportrait_d9, and a re-encoded copy): after a long
    /// blink his left eye reopened 0.3 s before the right, which read as a right wink. A wink cannot start
    /// within its cooldown (0.5 s) of a blink or eyesClosed ending; a real wink after that still counts.
    @Test func eyesReopeningOneAfterTheOtherAreNotAWink() {
        var s = Script(AnalyzerRow.defaultTable)
        s.feed([(.eyeBlinkLeft, 0.95), (.eyeBlinkRight, 0.95)], times: 9)  // a 0.3 s blink
        s.feed([(.eyeBlinkLeft, 0.05), (.eyeBlinkRight, 0.9)], times: 12)  // the right eye reopens 0.4 s later
        s.feed([(.eyeBlinkLeft, 0.0), (.eyeBlinkRight, 0.0)], times: 10)
        #expect(s.summary == ["blink:occurred@9"], "\(s.summary)")
        s.events.removeAll()
        s.feed([(.eyeBlinkLeft, 0.05), (.eyeBlinkRight, 0.9)], times: 12)  // 0.6 s after: a real right wink
        s.feed([(.eyeBlinkLeft, 0.0), (.eyeBlinkRight, 0.0)], times: 3)
        #expect(s.summary.first == "winkRight:began@39", "\(s.summary)")
    }

    @Test func closedGateEndsActiveRowsAndBlocksNewOnes() {
        var s = Script([AnalyzerRow(event: "smile", value: try! Formula(parsing: "mouthSmileLeft"), enter: 0.5,
                                    exit: 0.3, gate: .mouth)])
        s.feed([(.mouthSmileLeft, 0.9)], times: 2)
        s.feed([(.mouthSmileLeft, 0.9)], gates: .closed, times: 3)
        s.feed([(.mouthSmileLeft, 0.9)], times: 3)  // gate open again but not released: no repeat
        #expect(s.summary == ["smile:began@0", "smile:ended@2"])
        s.feed([(.mouthSmileLeft, 0.0)])
        s.feed([(.mouthSmileLeft, 0.9)])
        #expect(s.summary.last == "smile:began@9")
    }

    @Test func resetEndsHeldRows() {
        var s = Script([AnalyzerRow(event: "mouthOpen", value: jaw, enter: 0.5, exit: 0.3)])
        s.feed([(.jawOpen, 0.9)], times: 3)
        s.table.reset(frame: FrameInfo(index: 3, time: 0.1, monotonicNanoseconds: 0), into: &s.events)
        #expect(s.summary == ["mouthOpen:began@0", "mouthOpen:ended@3"])
    }

    @Test func releaseDelayRidesOutASingleNoisyFrame() {
        let row = AnalyzerRow(event: "winkLeft", value: try! Formula(parsing: "eyeBlinkLeft"), enter: 0.5, exit: 0.3,
                              minDuration: 0.15, releaseDelay: 0.06)
        var s = Script([row])
        s.feed([(.eyeBlinkLeft, 0.9)], times: 3)
        s.feed([(.eyeBlinkLeft, 0.1)])  // one noisy frame inside the wink
        s.feed([(.eyeBlinkLeft, 0.9)], times: 4)
        #expect(s.summary == ["winkLeft:began@5"])
        s.feed([(.eyeBlinkLeft, 0.1)], times: 3)  // released at frame 8, decided at 10
        #expect(s.summary == ["winkLeft:began@5", "winkLeft:ended@10"])
        #expect(s.events.last?.duration == 0.267)
        var strict = Script([AnalyzerRow(event: "winkLeft", value: try! Formula(parsing: "eyeBlinkLeft"), enter: 0.5,
                                         exit: 0.3, minDuration: 0.15)])
        strict.feed([(.eyeBlinkLeft, 0.9)], times: 3)
        strict.feed([(.eyeBlinkLeft, 0.1)])
        strict.feed([(.eyeBlinkLeft, 0.9)], times: 6)
        #expect(strict.summary == ["winkLeft:began@9"], "without the delay the dip restarts the wait")
    }

    @Test func rearmTurnsHoveringLidsIntoOneBlinkNotATrain() {
        // Lids lowered while looking down: the value wanders between exit and enter without the eyes opening.
        let both = try! Formula(parsing: "min(eyeBlinkLeft, eyeBlinkRight)")
        func blinks(rearm: Float?) -> [String] {
            var s = Script([AnalyzerRow(event: "blink", kind: .oneShot, value: both, enter: 0.8, exit: 0.65,
                                        minDuration: 0.03, maxDuration: 0.5, rearm: rearm)])
            for v: Float in [0.0, 0.9, 0.9, 0.55, 0.9, 0.9, 0.5, 0.85, 0.6, 0.2, 0.9, 0.9, 0.1] {
                s.feed([(.eyeBlinkLeft, v), (.eyeBlinkRight, v)])
            }
            return s.summary
        }
        #expect(blinks(rearm: nil) == ["blink:occurred@3", "blink:occurred@6", "blink:occurred@8", "blink:occurred@12"])
        // Re-armed only by the open eyes at frame 9 (0.2 < 0.4): the first closure and the real blink after it.
        #expect(blinks(rearm: 0.4) == ["blink:occurred@3", "blink:occurred@12"])
        // A blink reopening straight to open eyes re-arms on the frame of its release: back-to-back blinks count.
        var s = Script([AnalyzerRow(event: "blink", kind: .oneShot, value: both, enter: 0.8, exit: 0.65,
                                    minDuration: 0.03, maxDuration: 0.5, rearm: 0.4)])
        for v: Float in [0.9, 0.9, 0.3, 0.9, 0.9, 0.3] { s.feed([(.eyeBlinkLeft, v), (.eyeBlinkRight, v)]) }
        #expect(s.summary == ["blink:occurred@2", "blink:occurred@5"])
        let bad = AnalyzerRow(event: "x", value: both, enter: 0.8, exit: 0.65, rearm: 0.7)
        #expect(bad.validate().count == 1)
    }

    /// liveportrait_d14 shut her eyes for 2 s after a 4-frame closure whose lids reopened only to 0.46 (above
    /// the re-arm level): the held eyesClosed row, cancelled before its minDuration with nothing reported, was
    /// disarmed by it, and the 2 s closure was never reported (under 8 of 16 degradations of the clip). An
    /// onset that reported nothing leaves a held row armed; one that reported still needs open eyes.
    @Test func aHeldOnsetThatReportedNothingDoesNotDisarm() {
        let both = try! Formula(parsing: "min(eyeBlinkLeft, eyeBlinkRight)")
        let row = AnalyzerRow(event: "eyesClosed", value: both, enter: 0.8, exit: 0.65, minDuration: 0.09, rearm: 0.4)
        func run(_ values: [Float]) -> [String] {
            var s = Script([row])
            for v in values { s.feed([(.eyeBlinkLeft, v), (.eyeBlinkRight, v)]) }
            return s.summary
        }
        // Two frames shut (under 0.09 s), lids back to 0.46 for one frame, then shut: began 3 frames into it.
        #expect(run([0, 0.9, 0.9, 0.46, 0.9, 0.9, 0.9, 0.9, 0.9]) == ["eyesClosed:began@7"])
        // A reported closure ending at 0.46 still needs open eyes before the next one counts...
        #expect(run([0, 0.9, 0.9, 0.9, 0.9, 0.46, 0.9, 0.9, 0.9, 0.9, 0.9])
            == ["eyesClosed:began@4", "eyesClosed:ended@5"])
        // ... and counts once they opened (0.2).
        #expect(run([0, 0.9, 0.9, 0.9, 0.9, 0.46, 0.2, 0.9, 0.9, 0.9, 0.9, 0.9])
            == ["eyesClosed:began@4", "eyesClosed:ended@5", "eyesClosed:began@10"])
    }

    /// The same for a oneShot row: a closure shorter than its minDuration (one frame at 60 fps against the
    /// blink row's 0.03 s; here one frame at 30 fps against 0.05 s) reported nothing and leaves the row armed,
    /// while a closure too long for it (eyesClosed's) still needs open eyes before the next blink counts.
    @Test func aOneShotClosureTooShortToReportDoesNotDisarm() {
        let both = try! Formula(parsing: "min(eyeBlinkLeft, eyeBlinkRight)")
        let row = AnalyzerRow(event: "blink", kind: .oneShot, value: both, enter: 0.8, exit: 0.65, minDuration: 0.05,
                              maxDuration: 0.2, rearm: 0.4)
        func run(_ values: [Float]) -> [String] {
            var s = Script([row])
            for v in values { s.feed([(.eyeBlinkLeft, v), (.eyeBlinkRight, v)]) }
            return s.summary
        }
        // One frame shut, lids back to 0.5 (above the re-arm level), then a 3-frame blink: it counts.
        #expect(run([0, 0.9, 0.5, 0.9, 0.9, 0.9, 0.1]) == ["blink:occurred@6"])
        // A closure too long for the row (8 frames > 0.2 s), lids to 0.5, then a blink: not counted...
        #expect(run([0, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.5, 0.9, 0.9, 0.1]) == [])
        // ... until the eyes opened.
        #expect(run([0, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.5, 0.2, 0.9, 0.9, 0.1]) == ["blink:occurred@13"])
    }

    /// `endDelay`: a held expression that has begun holds through a dip below exit shorter than it, while a
    /// dip before it began still restarts the wait (`releaseDelay`), and durations end at the first frame
    /// below exit.
    @Test func endDelayHoldsABegunExpressionThroughADipButNotAnOnset() {
        let row = AnalyzerRow(event: "winkLeft", value: try! Formula(parsing: "eyeBlinkLeft"), enter: 0.7, exit: 0.5,
                              minDuration: 0.1, releaseDelay: 0.06, endDelay: 0.15)
        var s = Script([row])
        s.feed([(.eyeBlinkLeft, 0.9)], times: 5)  // began at 3 (0.1 s)
        s.feed([(.eyeBlinkLeft, 0.3)], times: 4)  // 4 frames below exit (0.1 s < 0.15 s): still on
        s.feed([(.eyeBlinkLeft, 0.9)], times: 3)
        #expect(s.summary == ["winkLeft:began@3"])
        s.feed([(.eyeBlinkLeft, 0.1)], times: 6)  // below from frame 12; ended once 0.15 s had passed (17)
        #expect(s.summary == ["winkLeft:began@3", "winkLeft:ended@17"])
        #expect(s.events.last?.duration == 0.4, "onset 0 to the first frame below exit, 12")
        var onset = Script([row])
        onset.feed([(.eyeBlinkLeft, 0.9)], times: 2)
        onset.feed([(.eyeBlinkLeft, 0.3)], times: 3)  // 0.067 s below exit before it began: the onset is over
        onset.feed([(.eyeBlinkLeft, 0.9)], times: 4)
        #expect(onset.summary == ["winkLeft:began@8"], "the wait restarted at 5")
        let oneShot = AnalyzerRow(event: "blink", kind: .oneShot, value: jaw, enter: 0.8, exit: 0.65, minDuration: 0.03,
                                  maxDuration: 0.5, endDelay: 0.1)
        #expect(oneShot.validate() == ["row 'blink': endDelay: a oneShot row never begins, so it takes none "
            + "(null removes a default's)"])
        let negative = AnalyzerRow(event: "x", value: jaw, enter: 0.8, exit: 0.65, endDelay: -1)
        #expect(negative.validate() == ["row 'x': endDelay: expected seconds >= 0, got -1"])
    }

    /// A wink made with make_wink.py from liveportrait_d3's closure (frames 58-118 of
    /// liveportrait_d3_a_winkLeft, `make_synthetic_winks.py`): the closed eye read 0.30-0.44 for 3 frames and 0
    /// on a fourth in the middle of the wink, which was reported as two winks (0.06 s release delay).
    @Test func aHeldWinkWhoseEyeReadsHalfOpenForFourFramesIsOneWink() {
        let left: [Float] = [
            0.88, 0.89, 0.84, 0.82, 0.84, 0.80, 0.81, 0.84, 0.77, 0.80, 0.83, 0.80, 0.80, 0.82, 0.84, 0.74, 0.82, 0.82,
            0.82, 0.78, 0.82, 0.77, 0.82, 0.86, 0.87, 0.87, 0.80, 0.79, 0.79, 0.44, 0.36, 0.30, 0.00, 0.71, 0.72, 0.74,
            0.74, 0.80, 0.77, 0.76, 0.72, 0.76, 0.75, 0.75, 0.73, 0.72, 0.74, 0.74, 0.73, 0.75, 0.70, 0.77, 0.70, 0.70,
            0.70, 0.57, 0.04, 0.00, 0.00, 0.00, 0.00,
        ]
        let right: [Float] = [
            0.88, 0.87, 0.09, 0.08, 0.11, 0.08, 0.07, 0.03, 0.07, 0.07, 0.06, 0.07, 0.07, 0.08, 0.07, 0.01, 0.08, 0.07,
            0.04, 0.04, 0.07, 0.04, 0.08, 0.06, 0.06, 0.09, 0.03, 0.05, 0.01, 0.06, 0.01, 0.00, 0.00, 0.00, 0.03, 0.03,
            0.03, 0.06, 0.04, 0.04, 0.04, 0.04, 0.04, 0.04, 0.04, 0.00, 0.04, 0.04, 0.02, 0.04, 0.04, 0.07, 0.02, 0.00,
            0.05, 0.92, 0.91, 0.87, 0.92, 0.43, 0.00,
        ]
        var s = Script(AnalyzerRow.defaultTable)
        for (l, r) in zip(left, right) { s.feed([(.eyeBlinkLeft, l), (.eyeBlinkRight, r)]) }
        // Held back 0.2 s after the blink of frames 0-1 (cooldown), held 0.25 s, ended 0.15 s after the right eye
        // closed at 55.
        #expect(s.summary.filter { $0.hasPrefix("wink") } == ["winkLeft:began@16", "winkLeft:ended@60"], "\(s.summary)")
    }

    /// Eyes rolled up (drawn into pcavs_vox_Audio_Source_00104 at 25 fps by make_gaze_clips.py, frames 40-80):
    /// the left eye read closed, the right 0.03-0.44, and the wink value swung around exit in 2-frame dips
    /// that the wink rows' 0.06 s release delay bridged: a false winkLeft at 65. Two frames below exit end an
    /// onset now (0.03 s).
    @Test func anOnsetWhoseOtherEyeDipsForTwoFramesIsNotAWink() {
        let left: [Float] = [
            0.76, 0.59, 0.26, 0.33, 0.11, 0.05, 0.04, 0.01, 0.06, 0.03, 0.04, 0.04, 0.01, 0.00, 0.02, 0.02, 0.00,
            0.04, 0.92, 0.84, 0.86, 0.91, 0.76, 0.88, 0.92, 0.86, 0.91, 0.87, 0.78, 0.93, 0.90, 0.91, 0.67, 0.73,
            0.90, 0.79, 0.92, 0.77, 0.42, 0.74, 0.70,
        ]
        let right: [Float] = [
            0.60, 0.31, 0.36, 0.13, 0.04, 0.00, 0.00, 0.00, 0.00, 0.00, 0.02, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00,
            0.00, 0.12, 0.36, 0.34, 0.27, 0.44, 0.41, 0.22, 0.03, 0.17, 0.56, 0.62, 0.56, 0.53, 0.74, 0.32, 0.37,
            0.18, 0.33, 0.56, 0.57, 0.60, 0.53, 0.67,
        ]
        var s = Script(AnalyzerRow.defaultTable)
        for (l, r) in zip(left, right) { s.feed([(.eyeBlinkLeft, l), (.eyeBlinkRight, r)], seconds: 1.0 / 25) }
        #expect(!s.summary.contains { $0.hasPrefix("wink") }, "\(s.summary)")
    }

    @Test func defaultTableIsValid() {
        for row in AnalyzerRow.defaultTable { #expect(row.validate().isEmpty) }
        let bad = AnalyzerRow(event: "x", value: jaw, enter: 0.3, exit: 0.5, minDuration: 1, maxDuration: 0.5)
        #expect(bad.validate().count == 2)
        // A negative exit with a rearm level (the default blink row's 0.4) is a problem, not a trap: a
        // newcomer's `{"event": "blink", "exit": -0.1}` crashed winkd, also on a SIGHUP reload. The rearm is
        // not blamed for the exit's fault (helper-34), unless it is out of range itself.
        let negative = AnalyzerRow(event: "blink", value: jaw, enter: 0.8, exit: -0.1, rearm: 0.4)
        #expect(negative.validate() == ["row 'blink': exit: expected a number in 0...1, got -0.1"])
        let both = AnalyzerRow(event: "blink", value: jaw, enter: 0.8, exit: -0.1, rearm: 2)
        #expect(
            both.validate() == [
                "row 'blink': exit: expected a number in 0...1, got -0.1",
                "row 'blink': rearm: expected a number in 0...1, got 2",
            ], "\(both.validate())")
        // Numbers are written as configuration problems write them elsewhere: `-1`, not Float's `-1.0`.
        let whole = AnalyzerRow(event: "x", value: jaw, enter: 2, exit: 0.5, cooldown: -1)
        #expect(
            whole.validate() == [
                "row 'x': enter: expected a number in 0...1, got 2",
                "row 'x': cooldown: expected seconds >= 0, got -1",
            ], "\(whole.validate())")
    }
}
