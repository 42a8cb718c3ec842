import WinkCore

extension FaceMeasures {
    /// Every measure by name, in declaration order. The names are the JSON keys of a stored profile.
    ///
    /// `CalibrationProfileTests` checks that this list covers every stored property of `FaceMeasures`,
    /// so a measure added there cannot be silently left out of profiles.
    public static let namedMeasures: [(name: String, keyPath: WritableKeyPath<FaceMeasures, Float>)] = [
        ("eyeAspectLeft", \.eyeAspectLeft), ("eyeAspectRight", \.eyeAspectRight),
        ("eyeClosedLeft", \.eyeClosedLeft), ("eyeClosedRight", \.eyeClosedRight),
        ("jawDrop", \.jawDrop), ("lipGap", \.lipGap), ("mouthWidth", \.mouthWidth),
        ("cornerLiftLeft", \.cornerLiftLeft), ("cornerLiftRight", \.cornerLiftRight),
        ("innerBrowHeight", \.innerBrowHeight), ("browHeightLeft", \.browHeightLeft),
        ("browHeightRight", \.browHeightRight),
    ]

    /// The per-measure median of `samples` (each measure sorted on its own; the mean of the two middle
    /// values for an even count), or `nil` for no samples. Robust to a few frames with a blink or a
    /// mistracked landmark, unlike the mean.
    public static func median(of samples: [FaceMeasures]) -> FaceMeasures? {
        guard !samples.isEmpty else { return nil }
        var result = FaceMeasures()
        var column = [Float](repeating: 0, count: samples.count)
        for (_, key) in namedMeasures {
            for i in samples.indices { column[i] = samples[i][keyPath: key] }
            column.sort()
            let mid = column.count / 2
            result[keyPath: key] = column.count % 2 == 1 ? column[mid] : (column[mid - 1] + column[mid]) / 2
        }
        return result
    }
}

/// A profile stores measures as a JSON object keyed by `FaceMeasures.namedMeasures` names; every key is
/// required and must be a finite number, the closed-probabilities in 0...1, the ratios of lengths within
/// -10...10 (a face's are within about -0.5...2; 1e30 was taken) and the eye aspects, mouth width and jaw
/// drop, which are ratios of distances, not negative; no other key is accepted. (A profile's neutral must
/// also have positive length ratios: `CalibrationProfile`.)
extension FaceMeasures: Codable {
    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Decodes the measures by name, checked as the extension's description says.
    /// - Throws: `DecodingError` for a missing, unknown, non-finite or out-of-range measure.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        self.init()
        let names = Set(Self.namedMeasures.map(\.name))
        if let unknown = c.allKeys.map(\.stringValue).sorted().first(where: { !names.contains($0) }) {
            throw DecodingError.dataCorruptedError(
                forKey: Key(stringValue: unknown), in: c,
                debugDescription: "unknown key (known: \(Self.namedMeasures.map(\.name).joined(separator: ", ")))")
        }
        for (name, key) in Self.namedMeasures {
            // As a Double first: a number beyond single precision (1e300) then fails here, naming the key,
            // instead of inside JSONDecoder with no key.
            let wide = try c.decode(Double.self, forKey: Key(stringValue: name))
            let value = Float(wide)
            guard value.isFinite else {
                throw DecodingError.dataCorruptedError(forKey: Key(stringValue: name), in: c,
                                                       debugDescription: "expected a finite number")
            }
            // The eye-state model's closed-probabilities (a -1 made every open eye read as closing).
            if key == \.eyeClosedLeft || key == \.eyeClosedRight, !(0...1).contains(value) {
                throw DecodingError.dataCorruptedError(
                    forKey: Key(stringValue: name), in: c,
                    debugDescription: "expected a probability in 0...1, got \(plainNumber(value))")
            }
            if key != \.eyeClosedLeft && key != \.eyeClosedRight, !(-10...10).contains(value) {
                throw DecodingError.dataCorruptedError(
                    forKey: Key(stringValue: name), in: c,
                    debugDescription: "expected a ratio of lengths within -10...10, got \(plainNumber(value))")
            }
            if Self.distanceRatios.contains(key), value < 0 {
                throw DecodingError.dataCorruptedError(
                    forKey: Key(stringValue: name), in: c,
                    debugDescription: "expected a ratio of distances, 0 or more, got \(plainNumber(value))")
            }
            self[keyPath: key] = value
        }
    }

    /// The measures that are ratios of two distances, never negative.
    static let distanceRatios: [WritableKeyPath<FaceMeasures, Float>] = [
        \.eyeAspectLeft, \.eyeAspectRight, \.mouthWidth, \.jawDrop,
    ]

    /// Encodes every measure by name. - Throws: the encoder's `EncodingError` (a non-finite number).
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        for (name, key) in Self.namedMeasures { try c.encode(self[keyPath: key], forKey: Key(stringValue: name)) }
    }
}
