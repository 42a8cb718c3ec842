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
    /// A face appeared (no phase).
    public static let faceFound = "faceFound"
    /// The face was lost (no phase).
    public static let faceLost = "faceLost"
    /// Both eyes closed briefly (one-shot, `occurred`).
    public static let blink = "blink"
    /// Both eyes held closed (held).
    public static let eyesClosed = "eyesClosed"
    /// The person's own left eye closed, the right open (held).
    public static let winkLeft = "winkLeft"
    /// The person's own right eye closed, the left open (held).
    public static let winkRight = "winkRight"
    /// A smile (held).
    public static let smile = "smile"
    /// The jaw dropped (held).
    public static let mouthOpen = "mouthOpen"
}

/// One `{"type":"event",...}` line of SPEC.md.
///
/// `time` and `duration` are seconds from frame timestamps; `frame` is the 0-based index of the source
/// frame that decided the event; `value` is the deciding coefficient (0...1); `tMonoNs` is the capture
/// time of that frame on `CLOCK_MONOTONIC` in nanoseconds (JSON key `t_mono_ns`).
public struct ExpressionEvent: Sendable, Equatable, Codable {
    /// Always "event".
    public var type: String = "event"
    /// The event's name (an analyzer row's, or `faceFound`/`faceLost`).
    public var event: String
    /// `began`, `ended` or `occurred`; nil for the face events.
    public var phase: EventPhase?
    /// 0-based index of the source frame that decided the event.
    public var frame: Int
    /// Seconds from the source's first frame, from that frame's timestamp.
    public var time: Double
    /// The deciding coefficient, 0...1; nil when there is none (face events).
    public var value: Double?
    /// Seconds the expression lasted, on `ended` and `occurred`; nil otherwise.
    public var duration: Double?
    /// Capture time of the deciding frame on `CLOCK_MONOTONIC`, nanoseconds (JSON `t_mono_ns`).
    public var tMonoNs: UInt64?

    enum CodingKeys: String, CodingKey {
        case type, event, phase, frame, time, value, duration
        case tMonoNs = "t_mono_ns"
    }

    /// An event line; `time` and `duration` in seconds, `value` in 0...1.
    public init(
        event: String, phase: EventPhase?, frame: Int, time: Double, value: Double? = nil,
        duration: Double? = nil, tMonoNs: UInt64? = nil
    ) {
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
    /// Always "coefficients".
    public var type: String = "coefficients"
    /// 0-based index of the source frame.
    public var frame: Int
    /// Seconds from the source's first frame, from the frame's timestamp.
    public var time: Double
    /// ARKit blend-shape coefficients by name, each in 0...1 (3 decimals): only those.
    public var values: [String: Double]
    /// The head's orientation in degrees (0.1 resolution), in its own field so that `values` holds
    /// coefficients only: `{"yaw":..,"pitch":..,"roll":..}`, signs as `HeadPose` documents them.
    public var headPose: HeadPose?
    /// Capture time of the frame on `CLOCK_MONOTONIC`, nanoseconds (JSON `t_mono_ns`).
    public var tMonoNs: UInt64?

    enum CodingKeys: String, CodingKey {
        case type, frame, time, values, headPose
        case tMonoNs = "t_mono_ns"
    }

    /// A coefficients line; `time` in seconds, `values` in 0...1 by ARKit name, `headPose` in degrees.
    public init(frame: Int, time: Double, values: [String: Double], headPose: HeadPose? = nil, tMonoNs: UInt64? = nil) {
        self.frame = frame
        self.time = time
        self.values = values
        self.headPose = headPose
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

    /// An encoder with sorted keys and unescaped slashes.
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
    /// - Throws: `EncodingError` if the value cannot be encoded (a non-finite number).
    public func string<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}

/// Writes `CoefficientsLine`s as NDJSON without Foundation's `JSONEncoder`: the same bytes as
/// `LineEncoder.line` (keys sorted, numbers as Swift prints them with a trailing `.0` dropped), at a
/// fraction of its cost and with one allocation per line (the returned array) instead of dozens. The sorted
/// order of the `values` keys is worked out once and reused while the key set stays the same.
///
/// Not thread-safe (one writer per thread, or under a lock).
public final class CoefficientsLineWriter {
    /// The `values` keys in the order they are written, and their JSON form (`"key":`).
    private var keys: [String] = []
    private var keyBytes: [[UInt8]] = []
    private var buffer: [UInt8] = []

    /// An empty writer (it learns the key order from its first line).
    public init() { buffer.reserveCapacity(2048) }

    /// The line as UTF-8 JSON ending in `\n`, or `nil` when it holds something this writer leaves to
    /// `LineEncoder` (a non-finite number, a key that needs escaping).
    public func line(_ line: CoefficientsLine) -> [UInt8]? {
        if !sameKeys(line.values) && !learnKeys(line.values) { return nil }
        buffer.removeAll(keepingCapacity: true)
        append("{\"frame\":")
        append(integer: line.frame)
        if let pose = line.headPose {
            // Float to Double as JSONEncoder encodes a Float (`Double(Float)` then shortest digits would
            // differ): through the Float's own description.
            append(",\"headPose\":{\"pitch\":")
            guard append(float: pose.pitch) else { return nil }
            append(",\"roll\":")
            guard append(float: pose.roll) else { return nil }
            append(",\"yaw\":")
            guard append(float: pose.yaw) else { return nil }
            buffer.append(UInt8(ascii: "}"))
        }
        if let t = line.tMonoNs {
            append(",\"t_mono_ns\":")
            append(unsigned: t)
        }
        append(",\"time\":")
        guard append(number: line.time) else { return nil }
        append(",\"type\":")
        guard appendString(line.type) else { return nil }
        append(",\"values\":{")
        for (i, key) in keys.enumerated() {
            if i > 0 { buffer.append(UInt8(ascii: ",")) }
            buffer.append(contentsOf: keyBytes[i])
            guard let v = line.values[key], append(number: v) else { return nil }
        }
        append("}}\n")
        return buffer
    }

    private func sameKeys(_ values: [String: Double]) -> Bool {
        guard values.count == keys.count else { return false }
        for key in keys where values[key] == nil { return false }
        return true
    }

    /// Sorts the keys as `JSONEncoder`'s `.sortedKeys` does for plain ASCII names (by UTF-8 bytes); false
    /// for keys that would need escaping or other ordering rules.
    private func learnKeys(_ values: [String: Double]) -> Bool {
        let plain = values.keys.allSatisfy { key in
            key.utf8.allSatisfy {
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A)
            }
        }
        guard plain else { return false }
        keys = values.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        keyBytes = keys.map { Array("\"\($0)\":".utf8) }
        return true
    }

    private func append(_ text: StaticString) {
        text.withUTF8Buffer { buffer.append(contentsOf: $0) }
    }

    private func append(integer value: Int) {
        if value < 0 {
            buffer.append(UInt8(ascii: "-"))
            append(unsigned: value.magnitude)
        } else {
            append(unsigned: UInt64(value))
        }
    }

    private func append(unsigned value: some UnsignedInteger) {
        var v = UInt64(value)
        var i = buffer.count
        repeat {
            buffer.append(UInt8(ascii: "0") + UInt8(v % 10))
            v /= 10
        } while v > 0
        var j = buffer.count - 1
        while i < j {  // digits came least significant first (not through a slice: that would copy)
            buffer.swapAt(i, j)
            i += 1
            j -= 1
        }
    }

    /// A finite number as `JSONEncoder` writes it: Swift's shortest round-trip `description`, without a
    /// trailing `.0`. False for NaN and infinities.
    private func append(number value: Double) -> Bool {
        guard value.isFinite else { return false }
        var text = value.description  // at most 24 UTF-8 bytes: a small string, no allocation
        if text.hasSuffix(".0") { text.removeLast(2) }
        text.withUTF8 { buffer.append(contentsOf: $0) }
        return true
    }

    /// A finite `Float` as `JSONEncoder` writes it (its shortest round-trip `description`, no trailing
    /// `.0`). False for NaN and infinities.
    private func append(float value: Float) -> Bool {
        guard value.isFinite else { return false }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        text.withUTF8 { buffer.append(contentsOf: $0) }
        return true
    }

    private func appendString(_ s: String) -> Bool {
        guard s.utf8.allSatisfy({ $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") && $0 < 0x80 })
        else { return false }
        var s = s
        buffer.append(UInt8(ascii: "\""))
        s.withUTF8 { buffer.append(contentsOf: $0) }
        buffer.append(UInt8(ascii: "\""))
        return true
    }
}
