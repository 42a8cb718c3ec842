import Foundation

/// The phase of an expression event (SPEC.md "Event lines").
public enum EventPhase: String, Sendable, Codable, Equatable {
    /// A held expression started.
    case began
    /// A held expression stopped; the event carries its `duration`.
    case ended
    /// A one-shot expression (`blink`) happened; emitted when it is over, with its `duration`.
    case occurred
}

/// Names of the events in SPEC.md's default table. Users may add rows with other names.
public enum EventName {
    public static let faceFound = "faceFound"
    public static let faceLost = "faceLost"
    public static let blink = "blink"
    public static let eyesClosed = "eyesClosed"
    public static let winkLeft = "winkLeft"
    public static let winkRight = "winkRight"
    public static let smile = "smile"
    public static let mouthOpen = "mouthOpen"
}

/// One `{"type":"event",...}` line of SPEC.md.
///
/// `time` and `duration` are seconds from frame timestamps; `frame` is the 0-based index of the source
/// frame that decided the event; `value` is the deciding coefficient (0...1); `tMonoNs` is the capture
/// time of that frame on `CLOCK_MONOTONIC` in nanoseconds (JSON key `t_mono_ns`).
public struct ExpressionEvent: Sendable, Equatable, Codable {
    public var type: String = "event"
    public var event: String
    public var phase: EventPhase?
    public var frame: Int
    public var time: Double
    public var value: Double?
    public var duration: Double?
    public var tMonoNs: UInt64?

    enum CodingKeys: String, CodingKey {
        case type, event, phase, frame, time, value, duration
        case tMonoNs = "t_mono_ns"
    }

    public init(event: String, phase: EventPhase?, frame: Int, time: Double, value: Double? = nil,
                duration: Double? = nil, tMonoNs: UInt64? = nil) {
        self.event = event
        self.phase = phase
        self.frame = frame
        self.time = time
        self.value = value
        self.duration = duration
        self.tMonoNs = tMonoNs
    }

    /// Whether this is an *occurrence* under SPEC.md's scoring: a `began`, an `occurred`, or a face event.
    public var isOccurrence: Bool { phase == nil || phase == .began || phase == .occurred }
}

/// One `{"type":"coefficients",...}` line: every coefficient at one frame, keyed by ARKit name, plus head
/// pose in degrees (`headYaw`, `headPitch`, `headRoll`).
public struct CoefficientsLine: Sendable, Equatable, Codable {
    public var type: String = "coefficients"
    public var frame: Int
    public var time: Double
    public var values: [String: Double]
    public var tMonoNs: UInt64?

    enum CodingKeys: String, CodingKey {
        case type, frame, time, values
        case tMonoNs = "t_mono_ns"
    }

    public init(frame: Int, time: Double, values: [String: Double], tMonoNs: UInt64? = nil) {
        self.frame = frame
        self.time = time
        self.values = values
        self.tMonoNs = tMonoNs
    }
}

/// Rounds to `places` decimals so JSON lines stay short and stable (`0.833`, not `0.83333333333`).
@inline(__always)
public func rounded(_ x: Double, places: Int) -> Double {
    let p = pow(10.0, Double(places))
    return (x * p).rounded() / p
}

/// Encodes protocol values as NDJSON lines (one JSON object, no raw newline, then `\n`).
///
/// Uses Foundation's `JSONEncoder` with sorted keys, so the same value always gives the same bytes;
/// not thread-safe (one encoder per thread).
public final class LineEncoder {
    private let encoder: JSONEncoder

    public init() {
        encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
    }

    /// The value as one line of UTF-8 JSON ending in `\n`.
    /// - Throws: `EncodingError` if the value cannot be encoded (a non-finite number).
    public func line<T: Encodable>(_ value: T) throws -> Data {
        var data = try encoder.encode(value)
        data.append(0x0A)
        return data
    }

    /// The value as a `String` without the trailing newline.
    public func string<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
