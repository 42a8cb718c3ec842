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
    /// - `winkLeft`/`winkRight`: one eye closed for at least 0.25 s while the other stays clearly open (its
    ///   closure counts twice against the wink, so lids lowered unevenly, while looking down or smirking,
    ///   are not a wink); cancelled while the other eye is closing too (`blink`/`eyesClosed` pending or
    ///   active) and for 0.5 s after (the eyes of a long blink may reopen one after the other).
    /// - `smile`: mean of both smile coefficients, held 0.15 s (a smile flickering across speech is not one).
    /// `mouthOpen`: the jaw dropped (nose-chin distance, not the
    ///   lip gap, so a toothy smile does not count) for at least 0.25 s, so speech does not trigger it.
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
                event: EventName.winkLeft, kind: .held, value: f("min(eyeBlinkLeft, 1 - 2 * eyeBlinkRight)"),
                enter: 0.5, exit: 0.35, minDuration: 0.25, cooldown: 0.5,
                suppressedBy: [EventName.blink, EventName.eyesClosed], gate: .eyes, releaseDelay: 0.06),
            AnalyzerRow(
                event: EventName.winkRight, kind: .held, value: f("min(eyeBlinkRight, 1 - 2 * eyeBlinkLeft)"),
                enter: 0.5, exit: 0.35, minDuration: 0.25, cooldown: 0.5,
                suppressedBy: [EventName.blink, EventName.eyesClosed], gate: .eyes, releaseDelay: 0.06),
            AnalyzerRow(
                event: EventName.smile, kind: .held, value: f("(mouthSmileLeft + mouthSmileRight) / 2"),
                enter: 0.5, exit: 0.3, minDuration: 0.15, cooldown: 0.5, gate: .mouth, releaseDelay: 0.1),
            AnalyzerRow(
                event: EventName.mouthOpen, kind: .held, value: f("jawOpen"),
                enter: 0.5, exit: 0.3, minDuration: 0.25, cooldown: 0.2, gate: .mouth, releaseDelay: 0.1),
        ]
    }()
}
