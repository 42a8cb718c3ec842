import Expressions
import Foundation
import Overlay
import WinkCore
import WinkDaemon

/// Collects, frame by frame, what `winkctl analyze --plot OUT.png` draws: each analyzer row's formula value,
/// the raw coefficients the default rows are built from, the rows' events and active spans.
///
/// Not thread-safe. Keeps a few floats per frame (about 1 MB for an hour at 30 fps).
final class AnalyzePlotRecorder {
    /// The coefficients plotted in their own lanes, below the rows.
    static let coefficientLanes: [BlendShape] = [.eyeBlinkLeft, .eyeBlinkRight, .jawOpen, .mouthSmileLeft,
                                                 .mouthSmileRight, .browInnerUp]
    let rows: [AnalyzerRow]
    private(set) var times: [Double] = []
    private var rowValues: [[Float]]
    private var coefficientValues: [[Float]]
    private var markers: [TimelinePlot.Marker] = []
    private var active: [[ClosedRange<Double>]]
    private var activeSince: [Double?]

    init(rows: [AnalyzerRow]) {
        self.rows = rows
        rowValues = Array(repeating: [], count: rows.count)
        coefficientValues = Array(repeating: [], count: Self.coefficientLanes.count)
        active = Array(repeating: [], count: rows.count)
        activeSince = Array(repeating: nil, count: rows.count)
    }

    /// Adds one frame at `time` seconds: its coefficients (`nil` without a face) and the events it decided.
    func add(time: Double, coefficients: BlendShapeCoefficients?, events: [ExpressionEvent]) {
        times.append(time)
        for (i, row) in rows.enumerated() { rowValues[i].append(coefficients.map { row.value.evaluate($0) } ?? .nan) }
        for (i, shape) in Self.coefficientLanes.enumerated() { coefficientValues[i].append(coefficients?[shape] ?? .nan) }
        for event in events {
            guard let phase = event.phase, let lane = rows.firstIndex(where: { $0.event == event.event }) else { continue }
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

    /// The plot: one lane per row (its value, enter/exit thresholds, active spans, events), then one per
    /// coefficient in `coefficientLanes`. Rows still active at the end are shaded to the last frame.
    func plot(title: String) -> TimelinePlot {
        var plot = TimelinePlot(title: title, times: times)
        let last = times.last ?? 0
        for (i, row) in rows.enumerated() {
            var spans = active[i]
            if let since = activeSince[i] { spans.append(since...max(since, last)) }
            plot.lanes.append(TimelinePlot.Lane(
                title: row.event, subtitle: "\(row.value)\nenter \(row.enter)  exit \(row.exit)",
                values: rowValues[i], enter: row.enter, exit: row.exit, active: spans))
        }
        for (i, shape) in Self.coefficientLanes.enumerated() {
            plot.lanes.append(TimelinePlot.Lane(title: shape.rawValue, subtitle: "coefficient", values: coefficientValues[i]))
        }
        plot.markers = markers
        return plot
    }
}
