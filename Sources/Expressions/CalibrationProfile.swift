import WinkCore

/// One person's face, recorded by `winkctl calibrate`: their neutral `FaceMeasures` and, for each
/// deliberate expression they recorded, the measures while holding it.
///
/// The neutral becomes `Calibration`'s prior (the starting point the running neutral adapts from), and the
/// expressions give per-person spans for `CoefficientModel` (see `personalised(_:)`), so a coefficient
/// reaches 1 at this person's own full expression rather than the population's.
///
/// Stored as versioned JSON (`save(to:)`, `load(path:)`):
/// ```json
/// { "version": 1, "reach": 0.9, "source": "/dev/video0",
///   "neutral": { "eyeAspectLeft": 0.31, "eyeClosedLeft": 0.8, "jawDrop": 0.95, ... },
///   "expressions": { "eyesClosed": { ... }, "smile": { ... } } }
/// ```
/// Measures are the unitless ratios of `FaceMeasures` (lengths per interocular distance).
public struct CalibrationProfile: Sendable, Equatable {
    /// The format version this code writes and reads.
    public static let formatVersion = 1

    /// What the person does during one step of a calibration recording. Left and right are the person's own.
    public enum Step: String, CaseIterable, Sendable, Codable, CodingKeyRepresentable {
        /// `neutral`: the relaxed face, required; the others are the deliberate expressions, each optional.
        case neutral, eyesClosed, winkLeft, winkRight, smile, mouthOpen, browsUp

        /// The instruction shown to the person before the step.
        public var prompt: String {
            switch self {
            case .neutral: "look at the camera with a neutral, relaxed face"
            case .eyesClosed: "close both eyes and keep them closed"
            case .winkLeft: "close your LEFT eye only (the one on the right of a mirror image)"
            case .winkRight: "close your RIGHT eye only"
            case .smile: "smile broadly and hold it"
            case .mouthOpen: "open your mouth wide (drop your jaw) and hold it"
            case .browsUp: "raise your eyebrows and hold them up"
            }
        }
    }

    /// Format version of this profile (`formatVersion` when written by this code).
    public var version: Int
    /// The person's neutral face.
    public var neutral: FaceMeasures
    /// Measures while holding each recorded deliberate expression (never `.neutral`).
    public var expressions: [Step: FaceMeasures]
    /// Fraction (0 < reach <= 1) of the recorded change from neutral at which a coefficient reaches 1:
    /// with 0.9, eyeBlink is 1 already at 90% of the recorded eye closure. Below 1 because a deliberate
    /// held expression is usually fuller than the same expression in use.
    public var reach: Float
    /// The recording the profile was made from (a device or file path), for people reading the file.
    public var source: String?

    /// A profile at `formatVersion`; `reach` in 0 < reach <= 1. An entry for `.neutral` in `expressions` is dropped.
    public init(
        neutral: FaceMeasures, expressions: [Step: FaceMeasures] = [:], reach: Float = 0.9,
        source: String? = nil
    ) {
        version = Self.formatVersion
        self.neutral = neutral
        self.expressions = expressions.filter { $0.key != .neutral }
        self.reach = reach
        self.source = source
    }

    /// The prior neutral for `Calibration(prior:)`: the recorded neutral.
    public var prior: FaceMeasures { neutral }
}

extension CalibrationProfile: Codable {
    enum CodingKeys: String, CodingKey { case version, neutral, expressions, reach, source }

    /// Any key, to name one the format does not have.
    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Decodes a profile, checking it whole.
    /// - Throws: `DecodingError` for an unknown, missing or mistyped key, a version other than `formatVersion`,
    ///   a neutral length ratio (eye aspects, mouth width, jaw drop) that is not positive, an unknown step, a
    ///   `reach` outside 0 < reach <= 1, or an expression named `neutral`.
    public init(from decoder: Decoder) throws {
        // An unknown key (a misspelt "expresions") was ignored, while one inside "neutral" was refused.
        let all = try decoder.container(keyedBy: AnyKey.self)
        let known = ["version", "neutral", "expressions", "reach", "source"]
        if let unknown = all.allKeys.map(\.stringValue).sorted().first(where: { !known.contains($0) }) {
            throw DecodingError.dataCorruptedError(
                forKey: AnyKey(stringValue: unknown), in: all,
                debugDescription: "unknown key (known: \(known.joined(separator: ", ")))")
        }
        let c = try decoder.container(keyedBy: CodingKeys.self)
        // As a Double: a version of 1.5 is then named here, not in JSONDecoder's keyless error.
        let given = try c.decode(Double.self, forKey: .version)
        version = given.rounded() == given && abs(given) < 1e9 ? Int(given) : -1
        guard version == Self.formatVersion else {
            let shown = version >= 0 ? "\(version)" : "\(given)"
            throw DecodingError.dataCorruptedError(
                forKey: .version, in: c,
                debugDescription:
                    "version \(shown) is not supported (this winkctl reads version \(Self.formatVersion))")
        }
        // The neutral's ratios of two lengths are positive on any face (an eye aspect of 0 made eyeWide read 1
        // on every frame); a recorded expression's may come near 0 (a closed eye). Looked at before the
        // measures are decoded, so a negative one is told "positive" too, not the measures' "0 or more" (a
        // neutral that is not all numbers is refused by the measures' own decoding, naming the key).
        let positive = ["eyeAspectLeft", "eyeAspectRight", "mouthWidth", "jawDrop"]
        if let raw = try? c.decode([String: Double].self, forKey: .neutral) {
            for name in positive {
                if let value = raw[name], !(value > 0) {
                    throw DecodingError.dataCorrupted(.init(
                        codingPath: c.codingPath + [CodingKeys.neutral, AnyKey(stringValue: name)],
                        debugDescription: "expected a positive number, got \(plainNumber(value))"))
                }
            }
        }
        neutral = try c.decode(FaceMeasures.self, forKey: .neutral)
        // By name first, so that a misspelt step is named ("expressions: 'smil' is not a step ..."); decoded as
        // [Step: FaceMeasures] it read "Could not convert key to type Step".
        var named: [Step: FaceMeasures] = [:]
        let raw = try c.decodeIfPresent([String: FaceMeasures].self, forKey: .expressions) ?? [:]
        for (name, measures) in raw.sorted(by: { $0.key < $1.key }) {
            guard let step = Step(rawValue: name) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .expressions, in: c,
                    debugDescription: "'\(name)' is not a step (known: "
                        + Step.allCases.map(\.rawValue).joined(separator: ", ") + ")")
            }
            named[step] = measures
        }
        expressions = named
        if expressions[.neutral] != nil {
            throw DecodingError.dataCorruptedError(
                forKey: .expressions, in: c,
                debugDescription: "'neutral' belongs in the top-level 'neutral' key")
        }
        // As a Double: JSONDecoder reports a number beyond a Float (1e300) as "not valid JSON", with no key.
        let wideReach = try c.decodeIfPresent(Double.self, forKey: .reach) ?? 0.9
        guard wideReach > 0 && wideReach <= 1 else {
            throw DecodingError.dataCorruptedError(
                forKey: .reach, in: c,
                debugDescription: "expected a number in (0, 1], got \(plainNumber(wideReach))")
        }
        reach = Float(wideReach)
        source = try c.decodeIfPresent(String.self, forKey: .source)
    }

    /// Encodes the profile as `load(path:)` reads it. - Throws: the encoder's `EncodingError`.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(version, forKey: .version)
        try c.encode(reach, forKey: .reach)
        try c.encodeIfPresent(source, forKey: .source)
        try c.encode(neutral, forKey: .neutral)
        try c.encode(expressions, forKey: .expressions)
    }
}
