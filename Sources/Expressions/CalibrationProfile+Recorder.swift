import Foundation
import WinkCore

extension CalibrationProfile {
    /// A stretch of a recording, in seconds of frame time, during which the person holds `step`.
    public struct Segment: Sendable, Equatable, CustomStringConvertible {
        /// The expression held.
        public var step: Step
        /// Start, seconds of frame time.
        public var start: Double
        /// End, seconds of frame time (inclusive).
        public var end: Double

        /// A segment from `start` to `end` seconds.
        public init(step: Step, start: Double, end: Double) {
            self.step = step
            self.start = start
            self.end = end
        }

        /// `STEP=START-END`, as `--segments` takes it.
        public var description: String { "\(step.rawValue)=\(format(start))-\(format(end))" }

        /// Whether frame time `t` lies in `start...end`.
        public func contains(_ t: Double) -> Bool { t >= start && t <= end }
    }

    /// A `--segments` value that cannot be used; `message` names the bad part.
    public struct SegmentSyntaxError: Error, Equatable, CustomStringConvertible {
        /// What is wrong, quoting the bad part.
        public var message: String
        /// `message`.
        public var description: String { message }
    }

    /// Parses `"neutral=0-0.6,smile=1.0-2.0"`: comma-separated `STEP=START-END` with times in seconds and
    /// START < END. A step may appear more than once (its samples are pooled); segments of two steps may not
    /// overlap. `neutral` is required.
    /// - Throws: `SegmentSyntaxError` for an unknown step, a malformed or empty range, or no neutral.
    public static func parseSegments(_ text: String) throws -> [Segment] {
        var segments: [Segment] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: true) {
            let item = part.trimmingCharacters(in: .whitespaces)
            let pair = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else { throw SegmentSyntaxError(message: "'\(item)': expected STEP=START-END") }
            guard let step = Step(rawValue: pair[0]) else {
                throw SegmentSyntaxError(message: "'\(item)': unknown step '\(pair[0])' (known: "
                                         + Step.allCases.map(\.rawValue).joined(separator: ", ") + ")")
            }
            let range = pair[1].split(separator: "-", maxSplits: 1).map(String.init)
            guard range.count == 2, let start = Double(range[0]), let end = Double(range[1]), start >= 0,
                  start < end, end.isFinite else {
                throw SegmentSyntaxError(message: "'\(item)': expected a time range in seconds like 1.0-2.5")
            }
            segments.append(Segment(step: step, start: start, end: end))
        }
        guard segments.contains(where: { $0.step == .neutral }) else {
            throw SegmentSyntaxError(message: "'\(text)': a neutral segment is required")
        }
        // Segments of one step pool their frames; a frame in two steps' segments would be both (a neutral
        // face that smiles), which no recording shows.
        for (i, a) in segments.enumerated() {
            for b in segments[(i + 1)...] where a.step != b.step && a.start < b.end && b.start < a.end {
                throw SegmentSyntaxError(
                    message: "\(a.step.rawValue)=\(format(a.start))-\(format(a.end)) and "
                        + "\(b.step.rawValue)=\(format(b.start))-\(format(b.end)) overlap: a frame shows one expression")
            }
        }
        return segments
    }

    /// The segments of a guided recording: step `i` of `steps` is prompted at `i * secondsPerStep` and its
    /// samples are taken from `i * secondsPerStep + discard` to `(i + 1) * secondsPerStep` (the first
    /// `discard` seconds, at most half a step, give the person time to react to the prompt).
    public static func schedule(_ steps: [Step], secondsPerStep: Double, discard: Double = 0.5) -> [Segment] {
        steps.enumerated().map { i, step in
            let start = Double(i) * secondsPerStep
            return Segment(step: step, start: start + min(discard, secondsPerStep / 2), end: start + secondsPerStep)
        }
    }

    /// Collects the measures of a recording into the segments it belongs to and makes the profile from
    /// each step's median.
    ///
    /// Not thread-safe; keeps every sample in memory (a few seconds of frames per step).
    public struct Recorder: Sendable {
        /// The segments samples are collected for.
        public let segments: [Segment]
        private var samples: [Step: [FaceMeasures]] = [:]

        /// A recorder for `segments`, with no samples yet.
        public init(segments: [Segment]) { self.segments = segments }

        /// Adds the measures of a usable face seen at frame time `time` (seconds) to every segment
        /// containing it; a frame outside every segment is ignored.
        public mutating func add(_ m: FaceMeasures, time: Double) {
            for s in segments where s.contains(time) { samples[s.step, default: []].append(m) }
        }

        /// Number of samples collected for `step`.
        public func count(_ step: Step) -> Int { samples[step]?.count ?? 0 }

        /// The median measures of `step`, or `nil` without samples.
        public func median(_ step: Step) -> FaceMeasures? { FaceMeasures.median(of: samples[step] ?? []) }

        /// The profile: the neutral step's median and every other step's median.
        /// - Parameter source: the recording, named in errors and stored in the profile.
        /// - Throws: `CalibrationProfileError.noFace` (65) naming the first step without samples.
        public func profile(source: String, reach: Float = 0.9) throws -> CalibrationProfile {
            var steps: [Step] = []
            for s in segments where !steps.contains(s.step) { steps.append(s.step) }
            for step in steps where count(step) == 0 {
                let ranges = segments.filter { $0.step == step }.map { "\(format($0.start))-\(format($0.end)) s" }
                throw CalibrationProfileError(
                    .noFace, subject: source,
                    reason: "no usable face during the '\(step.rawValue)' step (\(ranges.joined(separator: ", ")))")
            }
            guard let neutral = median(.neutral) else {
                throw CalibrationProfileError(.noFace, subject: source, reason: "the recording has no neutral step")
            }
            var expressions: [Step: FaceMeasures] = [:]
            for step in steps where step != .neutral { expressions[step] = median(step) }
            return CalibrationProfile(neutral: neutral, expressions: expressions, reach: reach, source: source)
        }
    }
}

/// Seconds with up to 3 decimals and no trailing zeros ("0.6", "2").
private func format(_ seconds: Double) -> String {
    var text = String((seconds * 1000).rounded() / 1000)
    if text.hasSuffix(".0") { text.removeLast(2) }
    return text
}
