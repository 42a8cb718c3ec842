import WinkCore

/// The analyzer table: one state machine per row, fed one frame at a time.
///
/// Feed it `step(frame:coefficients:gates:)` for every frame with a face, and `reset(frame:)` when the face
/// is lost (active held rows end; every row returns to idle). Not thread-safe.
public final class AnalyzerTable {
    /// The rows, in table order.
    public let rows: [AnalyzerRow]
    /// Each row's value (its formula on the coefficients) at the last `step`, in `rows` order; 0 after
    /// `reset` and before the first step. Overwritten in place every step (no allocation).
    public private(set) var values: [Float]
    var states: [RowState]
    let suppressors: [[Int]]
    /// What kept each row from starting at the last step (or cancelled its pending start); nil where
    /// nothing did. The one part of `traces` the row states cannot tell afterwards.
    private var blockedAtLastStep: [Blocker?]
    /// The last step's frame time (seconds) and gates, for `state(ofRow:)`.
    private(set) var lastTime: Double = 0
    private(set) var lastGates = Gates.open

    /// Where a row's state machine is.
    public enum Phase: Sendable, Equatable {
        /// Waiting for the value to reach `enter`.
        case idle
        /// The value crossed `enter` at `onset`; waiting for `minDuration` (held) or for release (oneShot).
        case pending
        /// A held expression is under way (`began` was emitted).
        case active
        /// Ended by `maxDuration` or a gate; waiting for the value to drop below `exit`.
        case latched
    }

    /// Why a row whose value was at or above `enter` could not start, or had its pending start cancelled.
    public enum Blocker: Sendable, Equatable {
        /// A row named in `suppressedBy` (this event name) was pending or active, or ended less than this
        /// row's `cooldown` ago.
        case suppressed(by: String)
        /// This row's own `cooldown` after its last end had not run out.
        case cooldown
        /// The row's face-quality gate (`AnalyzerRow.gate`) was closed.
        case gate
    }

    /// One row's state after a frame.
    public struct RowTrace: Sendable, Equatable {
        /// Where the row's state machine is.
        public var phase: Phase = .idle
        /// Seconds: when the value crossed `enter` for the current run (pending or active); nil when idle or
        /// latched.
        public var onset: Double?
        /// Seconds: when the value first dropped below `exit` while the row waits out `releaseDelay` (or
        /// `endDelay`); nil otherwise.
        public var releaseSince: Double?
        /// What kept the row from starting this frame, or cancelled its pending start; nil when nothing did
        /// (or the value was below `enter`).
        public var blocked: Blocker?
        /// An idle trace.
        public init() {}
    }

    struct RowState {
        var phase: Phase = .idle
        var onsetTime: Double = 0
        var cooldownUntil: Double = -.infinity
        /// When the row last left pending or active (an expression ended, occurred or was cancelled).
        var settledAt: Double = -.infinity
        var overlong = false
        /// When the value first dropped below `exit` in the current run (nil while it is up).
        var releaseTime: Double?
        /// Whether the row may start (always, without `AnalyzerRow.rearm`; else once the value fell below it).
        var armed = true
    }

    /// Which gates are open in this frame.
    public struct Gates: Sendable, Equatable {
        /// Whether the eye gate is open (rows with `gate: .eyes` may run).
        public var eyes: Bool
        /// Whether the mouth gate is open (rows with `gate: .mouth` may run).
        public var mouth: Bool
        /// Gates as given.
        public init(eyes: Bool, mouth: Bool) {
            self.eyes = eyes
            self.mouth = mouth
        }
        /// Both gates open.
        public static let open = Gates(eyes: true, mouth: true)
        /// Both gates closed.
        public static let closed = Gates(eyes: false, mouth: false)

        func allows(_ gate: AnalyzerRow.Gate) -> Bool {
            switch gate {
            case .eyes: eyes
            case .mouth: mouth
            case .none: true
            }
        }
    }

    /// A table of `rows`, every row idle. `suppressedBy` names no row are ignored.
    public init(rows: [AnalyzerRow]) {
        self.rows = rows
        states = Array(repeating: RowState(), count: rows.count)
        blockedAtLastStep = Array(repeating: nil, count: rows.count)
        values = Array(repeating: 0, count: rows.count)
        suppressors = rows.map { row in row.suppressedBy.compactMap { name in rows.firstIndex { $0.event == name } } }
    }

    /// A table of `rows` that carries on from `old` (a configuration reload between two frames): each row
    /// equal to one of `old`'s (`AnalyzerRow` equality, wherever it stands) keeps its state, so a held smile
    /// stays held when only the wink rows changed; a row of `old` that changed or is gone ends at `frame` if
    /// it was active (its `ended` event, with its value at the last step, is appended to `events`), and a
    /// new or changed row starts idle.
    public convenience init(rows: [AnalyzerRow], continuing old: AnalyzerTable, frame: FrameInfo,
                            into events: inout [ExpressionEvent]) {
        self.init(rows: rows)
        lastTime = old.lastTime
        lastGates = old.lastGates
        var carried = Array(repeating: false, count: old.rows.count)
        for i in rows.indices {
            guard let j = old.rows.indices.first(where: { !carried[$0] && old.rows[$0] == rows[i] }) else { continue }
            carried[j] = true
            states[i] = old.states[j]
            values[i] = old.values[j]
            blockedAtLastStep[i] = old.blockedAtLastStep[j]
        }
        for j in old.rows.indices where !carried[j] && old.states[j].phase == .active {
            events.append(old.endedEvent(row: j, frame: frame, value: old.values[j]))
        }
    }

    /// Row `index`'s `ended` event at `frame`, its duration counted from the onset.
    private func endedEvent(row index: Int, frame: FrameInfo, value: Float) -> ExpressionEvent {
        ExpressionEvent(
            event: rows[index].event, phase: .ended, frame: frame.index, time: rounded(frame.time, places: 3),
            value: rounded(Double(value), places: 2),
            duration: rounded(frame.time - states[index].onsetTime, places: 3),
            tMonoNs: frame.monotonicNanoseconds)
    }

    /// Advances every row by one frame and appends the events it decides to `events`.
    ///
    /// - Parameter instant: the frame is a still image, a single instant: held rows start on their value
    ///   alone (durations cannot be judged) and one-shot rows, which need a release, do not run.
    public func step(frame: FrameInfo, coefficients: BlendShapeCoefficients, gates: Gates = .open,
                     instant: Bool = false, into events: inout [ExpressionEvent]) {
        let t = frame.time
        lastTime = t
        lastGates = gates
        for i in rows.indices {
            var row = rows[i]
            if instant {
                if row.kind == .oneShot { continue }
                row.minDuration = 0
            }
            let v = row.value.evaluate(coefficients)
            values[i] = v
            var s = states[i]
            let allowed = gates.allows(row.gate)
            // A suppressing row under way, or settled less than this row's cooldown ago: a wink cannot be
            // the tail of a blink whose eyes reopen one after the other.
            let suppressor = suppressors[i].first { j in
                states[j].phase == .pending || states[j].phase == .active || t - states[j].settledAt < row.cooldown
            }
            let suppressed = suppressor != nil
            var blocked: Blocker?
            // An onset that ended before its minDuration, having reported nothing: it does not disarm the
            // row (see below).
            var unreported = false
            func emit(_ phase: EventPhase, duration: Double? = nil) {
                events.append(ExpressionEvent(
                    event: row.event, phase: phase, frame: frame.index, time: rounded(t, places: 3),
                    value: rounded(Double(v), places: 2), duration: duration.map { rounded($0, places: 3) },
                    tMonoNs: frame.monotonicNanoseconds))
            }
            switch s.phase {
            case .idle:
                if allowed, !suppressed, s.armed, v >= row.enter, t >= s.cooldownUntil {
                    s.phase = .pending
                    s.onsetTime = t
                    s.overlong = false
                    if row.kind == .held && row.minDuration <= 0 {
                        s.phase = .active
                        emit(.began)
                    }
                } else if v >= row.enter {
                    blocked = !allowed ? .gate : suppressor.map { .suppressed(by: rows[$0].event) } ?? .cooldown
                }
            case .pending:
                let released = below(v, row, t, &s)
                if !allowed || suppressed {
                    blocked = !allowed ? .gate : suppressor.map { .suppressed(by: rows[$0].event) }
                    s.phase = allowed ? .idle : .latched
                } else if let releaseTime = released {
                    let duration = releaseTime - s.onsetTime
                    if row.kind == .oneShot, !s.overlong, duration >= row.minDuration {
                        emit(.occurred, duration: duration)
                        s.cooldownUntil = t + row.cooldown
                    }
                    // Too short to report (a oneShot closure too long for the row still disarms it).
                    unreported = row.kind == .held || (!s.overlong && duration < row.minDuration)
                    s.phase = .idle
                } else if s.releaseTime != nil {
                    break  // below exit, waiting out the release delay
                } else if row.kind == .held, t - s.onsetTime >= row.minDuration {
                    s.phase = .active
                    emit(.began)
                } else if row.kind == .oneShot, let m = row.maxDuration, t - s.onsetTime > m {
                    s.overlong = true
                }
            case .active:
                let released = below(v, row, t, &s)
                if !allowed {
                    emit(.ended, duration: t - s.onsetTime)
                    s.phase = .latched
                    s.cooldownUntil = t + row.cooldown
                } else if let releaseTime = released {
                    emit(.ended, duration: releaseTime - s.onsetTime)
                    s.phase = .idle
                    s.cooldownUntil = t + row.cooldown
                } else if let m = row.maxDuration, t - s.onsetTime >= m {
                    emit(.ended, duration: t - s.onsetTime)
                    s.phase = .latched
                    s.cooldownUntil = t + row.cooldown
                }
            case .latched:
                if v < row.exit { s.phase = .idle }
            }
            if s.phase == .idle || s.phase == .latched {
                s.releaseTime = nil
                if states[i].phase == .pending || states[i].phase == .active {
                    s.settledAt = t
                    // What the row reported (or a oneShot closure too long for it) must end in open eyes before
                    // the next one counts; an onset shorter than its minDuration reported nothing, so a
                    // closure that follows it at once still counts (liveportrait_d14's eyes shut for 2 s
                    // after a 4-frame closure whose lids reopened only to 0.46 were never reported).
                    if row.rearm != nil && !unreported { s.armed = false }
                }
            }
            // The frame of the release counts: a blink that reopens straight to open eyes re-arms at once.
            if let r = row.rearm, s.phase == .idle, v < r { s.armed = true }
            states[i] = s
            blockedAtLastStep[i] = blocked
        }
    }

    /// What each row (same order as `rows`) was doing after the last `step` or `reset`, and what held it
    /// back: for explaining why an event fired or did not (`winkctl analyze --plot`). Read from the row
    /// states when asked (an array per call), so a frame costs nothing for it while nobody plots.
    public var traces: [RowTrace] {
        rows.indices.map { i in
            let s = states[i]
            let running = s.phase == .pending || s.phase == .active
            var trace = RowTrace()
            trace.phase = s.phase
            trace.onset = running ? s.onsetTime : nil
            trace.releaseSince = running ? s.releaseTime : nil
            trace.blocked = blockedAtLastStep[i]
            return trace
        }
    }

    /// Whether any row is active after the last `step`: an expression is under way (the calibration then
    /// learns the neutral more slowly). Pending rows do not count: a blink on its way is too short to
    /// matter, and a start that is then cancelled was no expression.
    public var isExpressing: Bool {
        states.contains { $0.phase == .active }
    }

    /// Tracks the release debounce: returns the time the value first went below `exit` once it has stayed
    /// below for `releaseDelay` seconds (`endDelay`, when the row gives one, once a held row has begun), else
    /// nil.
    private func below(_ v: Float, _ row: AnalyzerRow, _ t: Double, _ s: inout RowState) -> Double? {
        guard v < row.exit else {
            s.releaseTime = nil
            return nil
        }
        let start = s.releaseTime ?? t
        s.releaseTime = start
        let delay = s.phase == .active ? row.endDelay ?? row.releaseDelay : row.releaseDelay
        return t - start >= delay - 1e-9 ? start : nil
    }

    /// Ends every active held row at `frame` (emitting `ended`) and returns all rows to idle; for a lost face.
    public func reset(frame: FrameInfo, into events: inout [ExpressionEvent]) {
        for i in rows.indices {
            if states[i].phase == .active { events.append(endedEvent(row: i, frame: frame, value: 0)) }
            states[i] = RowState()
            blockedAtLastStep[i] = nil
            values[i] = 0
        }
    }
}
