import WinkCore

extension AnalyzerRow {
    /// The default table: SPEC.md's events (faceFound/faceLost are decided by the tracker, not by a row).
    ///
    /// Thresholds and durations were chosen on the twelve labelled clips of eleven people in
    /// ../shared/fixtures/people and checked leaving each person out (README, "Accuracy"): wide plateaus,
    /// not one face's optimum.
    /// - `blink`: both eyes close and reopen within 0.5 s (involuntary blinks last 0.1-0.4 s; Stern et al.
    ///   1984). A closure of a single frame counts (0.033 s at 30 fps: some people's blinks are that short),
    ///   and the reopening is taken at once (no release delay) and early (below 0.65: lids mostly up), as a
    ///   person would say the blink ended. Entering needs 0.8: the eye-state model is sure of a closed eye.
    ///   Longer closures become `eyesClosed` instead. Both re-arm at 0.4: after a closure the eyes must open
    ///   (value below 0.4, not just below exit) before the next one counts, so lids lowered while looking
    ///   down, whose value wanders between 0.35 and 1 for seconds, give one event rather than a train. Any
    ///   level in 0.35-0.5 scores the same on the people set; 0.3 loses a real double blink
    ///   (liveportrait_d9 292-298 and 305-311, whose eyes reopened only to 0.30 between them).
    /// - `winkLeft`/`winkRight`: one eye closed for at least 0.25 s while the other stays clearly open: the
    ///   value is the closed eye's coefficient, capped by 1 - 1.5 x the other eye's, so lids lowered on both
    ///   sides (looking down, smirking, a shadow on one eye) are not a wink. It must reach 0.7 and stay above
    ///   0.5: a wink closes the eye fully (0.85-1.0 on the people set's real winks and on winks made from
    ///   real closures), while one eye reading half closed for a moment (a shadow, a half-lid, sensor noise)
    ///   hovers at 0.3-0.7. Cancelled while the other eye is closing too (`blink`/`eyesClosed` pending or
    ///   active) and for 0.2 s after, as the eyes of a blink may reopen one after the other; longer would
    ///   swallow a wink that follows a blink or starts with both eyes closing. Chosen on the people set,
    ///   20 winks made from 10 real closures of 6 of its people (`make_wink.py`), the Eyeblink8 cuts of
    ///   three more people (2,895 frames without a wink) and the people set with sensor noise, 15-degree
    ///   rotation and darkening: 0.7-0.75 / 0.5-0.55 with a 0.1-0.2 s cooldown all give no false wink and
    ///   18 of 20 made winks; 0.5 / 0.35 gave 3 false winks on Eyeblink8, 0.6 / 0.45 one; a factor 2 on the
    ///   other eye lost a made wink whose open eye flickered to 0.5; a 0.2 s hold gave a false wink.
    ///   Before it has begun, one frame below exit is forgiven and two end the onset (`releaseDelay` 0.03 s,
    ///   one frame up to 33 fps): an onset whose value swings between the eyes (rolled-up eyes drawn into
    ///   pcavs_vox_Audio, lids lowered while looking down under sensor noise) bridged 2-frame dips with 0.06 s
    ///   and became a wink: 4 false winks fewer over the checks, 3 made winks fewer found under heavy noise
    ///   (`--noise 8`, `--gain 0.4 --noise 4`), the rest alike. Once begun, a wink ends only after 0.15 s
    ///   below exit (`endDelay`): a made wink of liveportrait_d3 whose closed eye read 0.3-0.44 for 4 frames
    ///   was reported as two winks; 0.1 s still split it, 0.15-0.2 s score every check alike, and a 0.15 s
    ///   `releaseDelay` instead gave a false wink at CRF 38 (README, "Accuracy").
    /// - `smile`: mean of both smile coefficients, held 0.15 s (a smile flickering across speech is not one).
    /// - `mouthOpen`: the jaw dropped (nose-chin distance, so a toothy smile does not count) with the lips
    ///   apart, for at least 0.25 s, so speech does not trigger it. The value is ARKit's open mouth,
    ///   `jawOpen - mouthClose` (`mouthClose` is the part of `jawOpen` made with the lips together): a jaw
    ///   moved behind sealed lips, as in a pucker or puffed cheeks, is not an open mouth
    ///   (liveportrait_old_d5's pucker at 37-62 read jawOpen 0.87 with the lips 0.02-0.04 apart, against
    ///   0.17-0.21 in its 'O' at 65-95).
    public static let defaultTable: [AnalyzerRow] = {
        func f(_ s: String) -> Formula {
            do { return try Formula(parsing: s) } catch { fatalError("default formula '\(s)': \(error)") }
        }
        return [
            AnalyzerRow(
                event: EventName.blink, kind: .oneShot, value: f("min(eyeBlinkLeft, eyeBlinkRight)"),
                enter: 0.8, exit: 0.65, minDuration: 0.03, maxDuration: 0.5, cooldown: 0.05, gate: .eyes,
                releaseDelay: 0, rearm: 0.4),
            AnalyzerRow(
                event: EventName.eyesClosed, kind: .held, value: f("min(eyeBlinkLeft, eyeBlinkRight)"),
                enter: 0.8, exit: 0.65, minDuration: 0.5, gate: .eyes, releaseDelay: 0, rearm: 0.4),
            AnalyzerRow(
                event: EventName.winkLeft, kind: .held, value: f("min(eyeBlinkLeft, 1 - 1.5 * eyeBlinkRight)"),
                enter: 0.7, exit: 0.5, minDuration: 0.25, cooldown: 0.2,
                suppressedBy: [EventName.blink, EventName.eyesClosed], gate: .eyes, releaseDelay: 0.03,
                endDelay: 0.15),
            AnalyzerRow(
                event: EventName.winkRight, kind: .held, value: f("min(eyeBlinkRight, 1 - 1.5 * eyeBlinkLeft)"),
                enter: 0.7, exit: 0.5, minDuration: 0.25, cooldown: 0.2,
                suppressedBy: [EventName.blink, EventName.eyesClosed], gate: .eyes, releaseDelay: 0.03,
                endDelay: 0.15),
            AnalyzerRow(
                event: EventName.smile, kind: .held, value: f("(mouthSmileLeft + mouthSmileRight) / 2"),
                enter: 0.5, exit: 0.3, minDuration: 0.15, cooldown: 0.5, gate: .mouth, releaseDelay: 0.1),
            AnalyzerRow(
                event: EventName.mouthOpen, kind: .held, value: f("jawOpen - mouthClose"),
                enter: 0.5, exit: 0.3, minDuration: 0.25, cooldown: 0.2, gate: .mouth, releaseDelay: 0.1),
        ]
    }()
}
