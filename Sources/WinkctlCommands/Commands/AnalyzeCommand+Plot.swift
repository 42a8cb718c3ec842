import Expressions
import Foundation
import Overlay
import WinkCore
import WinkDaemon

/// Collects, frame by frame, what `winkctl analyze --plot OUT.png` draws: each analyzer row's formula value,
/// the raw coefficients the default rows are built from, the rows' events and active spans, and what
/// explains them from the table's `AnalyzerTable.traces`: the time held before `minDuration` counted, the
/// `releaseDelay` waited out, the `cooldown` after each end, spans blocked by a `suppressedBy` row, the
/// cooldown or the gate; and the `faceFound`/`faceLost` events.
///
/// Not thread-safe. Keeps a few floats per frame (about 1 MB for an hour at 30 fps).
final class AnalyzePlotRecorder {
    /// The coefficients plotted in their own lanes, below the rows.
    static let coefficientLanes: [BlendShape] = [
        .eyeBlinkLeft, .eyeBlinkRight, .jawOpen, .mouthSmileLeft,
        .mouthSmileRight, .browInnerUp,
    ]
    let rows: [AnalyzerRow]
    private(set) var times: [Double] = []
    private var rowValues: [[Float]]
    private var coefficientValues: [[Float]]
    private var markers: [TimelinePlot.Marker] = []
    private var active: [[ClosedRange<Double>]]
    private var activeSince: [Double?]
    private var pending: [Spans]
    private var release: [Spans]
    private var cooldown: [[ClosedRange<Double>]]
    private var blocked: [[TimelinePlot.Note]]
    /// The cause and start of each row's current blocked span.
    private var blockedSince: [(text: String, time: Double)?]
    private var faceMarkers: [TimelinePlot.FaceMarker] = []

    /// Spans opened and closed frame by frame.
    struct Spans {
        var closed: [ClosedRange<Double>] = []
        var since: Double?
        /// Opens a span at `start` if none is open; closes an open one at `time` when `start` is nil.
        mutating func update(_ start: Double?, at time: Double) {
            if let start {
                if since == nil { since = min(start, time) }
            } else if let s = since {
                closed.append(s...max(s, time))
                since = nil
            }
        }
        /// The spans, an open one ending at `end`.
        func all(end: Double) -> [ClosedRange<Double>] { closed + (since.map { [$0...max($0, end)] } ?? []) }
    }

    init(rows: [AnalyzerRow]) {
        self.rows = rows
        rowValues = Array(repeating: [], count: rows.count)
        coefficientValues = Array(repeating: [], count: Self.coefficientLanes.count)
        active = Array(repeating: [], count: rows.count)
        activeSince = Array(repeating: nil, count: rows.count)
        pending = Array(repeating: Spans(), count: rows.count)
        release = Array(repeating: Spans(), count: rows.count)
        cooldown = Array(repeating: [], count: rows.count)
        blocked = Array(repeating: [], count: rows.count)
        blockedSince = Array(repeating: nil, count: rows.count)
    }

    /// The words for a blocked span.
    static func describe(_ blocker: AnalyzerTable.Blocker) -> String {
        switch blocker {
        case .suppressed(let by): "suppressed by \(by)"
        case .cooldown: "cooldown"
        case .gate: "gate closed"
        }
    }

    /// Adds one frame at `time` seconds: its coefficients (`nil` without a face), the events it decided and
    /// the table's traces after it (`AnalyzerTable.traces`, one per row; empty to leave the explanations out).
    func add(
        time: Double, coefficients: BlendShapeCoefficients?, events: [ExpressionEvent],
        traces: [AnalyzerTable.RowTrace] = []
    ) {
        times.append(time)
        // A lost face ends every row at the face's last frame (the table's reset), without a cooldown.
        let lost = events.first { $0.event == EventName.faceLost }?.time
        let end = lost ?? time
        for (i, trace) in traces.enumerated() where i < rows.count {
            pending[i].update(trace.phase == .pending ? trace.onset ?? time : nil, at: end)
            release[i].update(trace.releaseSince, at: end)
            let cause = trace.blocked.map(Self.describe)
            if let open = blockedSince[i], open.text != cause {
                blocked[i].append(.init(span: open.time...max(open.time, end), text: open.text))
                blockedSince[i] = nil
            }
            if let cause, blockedSince[i] == nil { blockedSince[i] = (cause, time) }
        }
        for (i, row) in rows.enumerated() { rowValues[i].append(coefficients.map { row.value.evaluate($0) } ?? .nan) }
        for (i, shape) in Self.coefficientLanes.enumerated() {
            coefficientValues[i].append(coefficients?[shape] ?? .nan)
        }
        for event in events {
            if event.event == EventName.faceFound || event.event == EventName.faceLost {
                faceMarkers.append(.init(time: event.time, found: event.event == EventName.faceFound))
            }
            if lost == nil, let lane = rows.firstIndex(where: { $0.event == event.event }),
                event.phase == .ended || event.phase == .occurred, rows[lane].cooldown > 0
            {
                cooldown[lane].append(event.time...(event.time + rows[lane].cooldown))
            }
            guard let phase = event.phase, let lane = rows.firstIndex(where: { $0.event == event.event }) else {
                continue
            }
            switch phase {
            case .began:
                markers.append(.init(lane: lane, time: event.time, kind: .began))
                activeSince[lane] = event.time
            case .ended:
                markers.append(.init(lane: lane, time: event.time, kind: .ended))
                let start = activeSince[lane] ?? event.time - (event.duration ?? 0)
                active[lane].append(min(start, event.time)...event.time)
                activeSince[lane] = nil
            case .occurred:
                markers.append(.init(lane: lane, time: event.time, kind: .occurred))
                active[lane].append(max(0, event.time - (event.duration ?? 0))...event.time)
            }
        }
    }

    /// The plot: one lane per row (its value, enter/exit thresholds, active spans, events, and what explains
    /// them), then one per coefficient in `coefficientLanes`. Spans still open at the end reach the last
    /// frame; cooldowns are cut there.
    func plot(title: String) -> TimelinePlot {
        var plot = TimelinePlot(title: title, times: times)
        let last = times.last ?? 0
        for (i, row) in rows.enumerated() {
            var spans = active[i]
            if let since = activeSince[i] { spans.append(since...max(since, last)) }
            var notes = blocked[i]
            if let open = blockedSince[i] {
                notes.append(.init(span: open.time...max(open.time, last), text: open.text))
            }
            plot.lanes.append(
                TimelinePlot.Lane(
                    title: row.event, subtitle: Self.subtitle(row), values: rowValues[i], enter: row.enter,
                    exit: row.exit,
                    active: spans, pending: pending[i].all(end: last), release: release[i].all(end: last),
                    cooldown: cooldown[i].map { $0.lowerBound...min($0.upperBound, max($0.lowerBound, last)) },
                    blocked: notes))
        }
        for (i, shape) in Self.coefficientLanes.enumerated() {
            plot.lanes.append(
                TimelinePlot.Lane(title: shape.rawValue, subtitle: "coefficient", values: coefficientValues[i]))
        }
        plot.markers = markers
        plot.faceMarkers = faceMarkers
        return plot
    }

    /// A row's lines under its title: formula; thresholds and how long the value must hold; the release
    /// delay and cooldown; suppressors. Durations in seconds.
    static func subtitle(_ row: AnalyzerRow) -> String {
        func s(_ seconds: Double) -> String {
            let ms = (seconds * 1000).rounded()
            return ms.truncatingRemainder(dividingBy: 1000) == 0 ? "\(Int(ms / 1000)) s" : "\(ms / 1000) s"
        }
        let hold =
            row.kind == .oneShot
            ? "oneShot \(s(row.minDuration).dropLast(2))...\(s(row.maxDuration ?? .infinity))"
            : "min \(s(row.minDuration))" + (row.maxDuration.map { "  max \(s($0))" } ?? "")
        var lines = [
            "\(row.value)", "enter \(row.enter)  exit \(row.exit)  \(hold)",
            "releaseDelay \(s(row.releaseDelay))" + (row.endDelay.map { "  endDelay \(s($0))" } ?? "")
                + "  cooldown \(s(row.cooldown))",
        ]
        if !row.suppressedBy.isEmpty { lines.append("suppressedBy " + row.suppressedBy.joined(separator: ", ")) }
        return lines.joined(separator: "\n")
    }
}
