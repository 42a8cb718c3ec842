import WinkCore

/// One row of the analyzer table: when an expression counts as happening, and for how long.
///
/// The row's `value` formula turns the frame's coefficients into one number in 0...1. The expression
/// starts when the value reaches `enter` and continues while it stays at or above `exit` (hysteresis:
/// `exit < enter`). Durations are seconds of frame timestamps, never frame counts.
///
/// - `held` rows emit `began` once the value has stayed up for `minDuration`, and `ended` (with the
///   duration from onset to release) when it drops below `exit`, or when `maxDuration` passes; after a
///   forced end the value must drop below `exit` before the row can start again (no repeat until
///   released).
/// - `oneShot` rows (blink) emit a single `occurred` on release, if the expression lasted between
///   `minDuration` and `maxDuration`.
///
/// A drop below `exit` must last `releaseDelay` seconds to count (a debounce against single noisy frames);
/// once a held expression has begun, `endDelay` seconds if the row gives one.
/// `cooldown` seconds after an end, the row cannot start again. While a row named in `suppressedBy` is
/// pending or active, and for this row's `cooldown` after it ended, this row cannot start and a pending
/// start is cancelled (a blink is not also a wink, nor is the moment when its eyes reopen one after the
/// other).
/// `gate` names the face-quality gate the row needs (eyes, mouth or none).
public struct AnalyzerRow: Sendable, Equatable {
    /// `held` (began/ended) or `oneShot` (occurred); see the type's description.
    public enum Kind: String, Sendable, Codable, CaseIterable {
        case held, oneShot
        /// Decodes the name, listing the kinds when it is none of them.
        public init(from decoder: Decoder) throws { self = try decodeOneOf(decoder) }
    }

    /// Which part of the face must be measurable for the row to run.
    public enum Gate: String, Sendable, Codable, CaseIterable {
        case eyes, mouth, none
        /// Decodes the name, listing the gates when it is none of them.
        public init(from decoder: Decoder) throws { self = try decodeOneOf(decoder) }
    }

    /// The event name the row emits.
    public var event: String
    /// Held or one-shot.
    public var kind: Kind
    /// The row's value from the frame's coefficients, 0...1.
    public var value: Formula
    /// The value (0...1) at which the expression starts.
    public var enter: Float
    /// The value (0...1, at most `enter`) at or above which it continues.
    public var exit: Float
    /// Seconds the value must stay up before `began` (held); the shortest expression that counts (oneShot).
    public var minDuration: Double
    /// Seconds after which a held expression is ended, or above which a oneShot does not count; nil: no limit.
    public var maxDuration: Double?
    /// Seconds after an end during which the row cannot start again.
    public var cooldown: Double
    /// Event names of rows that keep this one from starting while pending or active, and for `cooldown` after.
    public var suppressedBy: [String]
    /// The face-quality gate the row needs.
    public var gate: Gate
    /// Seconds the value must stay below `exit` before the expression counts as released (a debounce:
    /// a single noisy frame does not end an onset, nor, without `endDelay`, a held expression). Durations
    /// still end at the first frame below `exit`.
    public var releaseDelay: Double
    /// Seconds the value of a held expression that has begun must stay below `exit` before it ends; nil:
    /// `releaseDelay`. Longer than `releaseDelay` for a deliberate hold: a wink that has begun is not split
    /// in two by the closed eye reading half open for a few frames, while the start stays as strict (a
    /// longer `releaseDelay` would also let an onset bridge dips, which made a false wink on a heavily
    /// compressed 224x224 clip). Durations still end at the first frame below `exit`. Held rows only.
    public var endDelay: Double?
    /// Re-arm level (nil: none). After an onset of this row ends (reported, cancelled or too long), the row
    /// starts again only once the value has fallen below `rearm` (the eyes opened), not merely below `exit`:
    /// lids that hover around the thresholds (lowered while looking down, half seen through tinted glasses)
    /// give one closure, not a train of blinks. Blinks start from open eyes (Stern et al. 1984; on the people
    /// set the eyes of back-to-back true blinks reopened to a value of 0.30 or less between them). The one
    /// exception: an onset that ended before `minDuration` reported nothing and leaves the row armed
    /// (liveportrait_d14's 2 s closure right after a 4-frame one whose lids reopened to 0.46; for a `oneShot`
    /// row, a closure shorter than its `minDuration`, as one frame at 60 fps is for the 0.03 s blink row), so
    /// hovering lids can give one `eyesClosed` besides one `blink`, still not a train.
    public var rearm: Float?

    /// A row; thresholds in 0...1, durations in seconds.
    public init(event: String, kind: Kind = .held, value: Formula, enter: Float, exit: Float,
                minDuration: Double = 0, maxDuration: Double? = nil, cooldown: Double = 0,
                suppressedBy: [String] = [], gate: Gate = .none, releaseDelay: Double = 0, endDelay: Double? = nil,
                rearm: Float? = nil) {
        self.event = event
        self.kind = kind
        self.value = value
        self.enter = enter
        self.exit = exit
        self.minDuration = minDuration
        self.maxDuration = maxDuration
        self.cooldown = cooldown
        self.suppressedBy = suppressedBy
        self.gate = gate
        self.releaseDelay = releaseDelay
        self.endDelay = endDelay
        self.rearm = rearm
    }

    /// Problems with the row, one line each naming the field ("row 'blink': exit: expected ..."; empty when
    /// valid).
    public func validate() -> [String] {
        fieldProblems().map { "row '\(event)': \($0.field): \($0.problem)" }
    }

    /// Problems with the row as (field, what is wrong) pairs, for a caller that names the row its own way (a
    /// configuration file: `analyzers[2] (blink).exit: ...`). Empty when valid.
    public func fieldProblems() -> [(field: String, problem: String)] {
        var problems: [(field: String, problem: String)] = []
        func say(_ field: String, _ expected: String, _ got: some CustomStringConvertible) {
            problems.append((field, "expected \(expected), got \(plainNumber(got))"))
        }
        if event.isEmpty { problems.append(("event", "expected a non-empty name")) }
        if !(0...1).contains(enter) { say("enter", "a number in 0...1", enter) }
        // One problem per field: an exit out of range, or one above an enter that is itself in range.
        if !(0...1).contains(exit) {
            say("exit", "a number in 0...1", exit)
        } else if (0...1).contains(enter), exit > enter {
            say("exit", "at most enter (\(plainNumber(enter)))", exit)
        }
        if !(minDuration >= 0) { say("minDuration", "seconds >= 0", minDuration) }
        if let m = maxDuration, !(m > minDuration) {
            say("maxDuration", "seconds > minDuration (\(plainNumber(minDuration)))", m)
        }
        if !(cooldown >= 0) { say("cooldown", "seconds >= 0", cooldown) }
        if !(releaseDelay >= 0) { say("releaseDelay", "seconds >= 0", releaseDelay) }
        if let d = endDelay {
            if !(d >= 0) {
                say("endDelay", "seconds >= 0", d)
            } else if kind == .oneShot {
                problems.append(("endDelay", "a oneShot row never begins, so it takes none (null removes a default's)"))
            }
        }
        // Compared, not `(0...exit).contains`: a range with a negative `exit` traps (it crashed winkd on a
        // configuration `{"event": "blink", "exit": -0.1}`, also on a SIGHUP reload).
        // Against an exit out of range (already a problem), only rearm's own range is checked.
        if let r = rearm {
            if (0...1).contains(exit) {
                if !(r >= 0 && r <= exit) { say("rearm", "a number in 0...exit (\(plainNumber(exit)))", r) }
            } else if !(0...1).contains(r) {
                say("rearm", "a number in 0...1", r)
            }
        }
        if kind == .oneShot && maxDuration == nil {
            problems.append(("maxDuration", "a oneShot row needs one"))
        }
        return problems
    }
}

extension AnalyzerRow: Codable {
    /// The keys a row may have in a configuration file.
    public static let keys: Set<String> = ["event", "kind", "value", "enter", "exit", "minDuration", "maxDuration",
                                           "cooldown", "suppressedBy", "gate", "releaseDelay", "endDelay",
                                           "rearm"]

    enum CodingKeys: String, CodingKey {
        case event, kind, value, enter, exit, minDuration, maxDuration, cooldown, suppressedBy, gate, releaseDelay,
            endDelay, rearm
    }

    /// Decodes the configuration file's form: `event`, `value` (formula text) and `enter` are required; `exit`
    /// defaults to `enter`, `kind` to `held`, `gate` to `none`, durations to 0, `maxDuration`/`rearm` to none,
    /// `endDelay` to none (`releaseDelay` then).
    /// - Throws: `DecodingError` for a missing or mistyped key, or a `value` that does not parse.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        event = try c.decode(String.self, forKey: .event)
        kind = try c.decodeIfPresent(Kind.self, forKey: .kind) ?? .held
        let text = try c.decode(String.self, forKey: .value)
        do {
            value = try Formula(parsing: text)
        } catch let error as Formula.ParseError {
            throw DecodingError.dataCorruptedError(forKey: .value, in: c, debugDescription: "'\(text)': \(error)")
        }
        enter = try c.decode(Float.self, forKey: .enter)
        exit = try c.decodeIfPresent(Float.self, forKey: .exit) ?? enter
        minDuration = try c.decodeIfPresent(Double.self, forKey: .minDuration) ?? 0
        maxDuration = try c.decodeIfPresent(Double.self, forKey: .maxDuration)
        cooldown = try c.decodeIfPresent(Double.self, forKey: .cooldown) ?? 0
        suppressedBy = try c.decodeIfPresent([String].self, forKey: .suppressedBy) ?? []
        gate = try c.decodeIfPresent(Gate.self, forKey: .gate) ?? .none
        releaseDelay = try c.decodeIfPresent(Double.self, forKey: .releaseDelay) ?? 0
        endDelay = try c.decodeIfPresent(Double.self, forKey: .endDelay)
        rearm = try c.decodeIfPresent(Float.self, forKey: .rearm)
    }

    /// Encodes every key (`value` as its formula text), as the configuration file writes it.
    /// - Throws: the encoder's `EncodingError` (a non-finite number).
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(event, forKey: .event)
        try c.encode(kind, forKey: .kind)
        try c.encode(value.description, forKey: .value)
        try c.encode(enter, forKey: .enter)
        try c.encode(exit, forKey: .exit)
        try c.encode(minDuration, forKey: .minDuration)
        try c.encodeIfPresent(maxDuration, forKey: .maxDuration)
        try c.encode(cooldown, forKey: .cooldown)
        try c.encode(suppressedBy, forKey: .suppressedBy)
        try c.encode(gate, forKey: .gate)
        try c.encode(releaseDelay, forKey: .releaseDelay)
        try c.encodeIfPresent(endDelay, forKey: .endDelay)
        try c.encodeIfPresent(rearm, forKey: .rearm)
    }
}
