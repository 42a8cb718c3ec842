import EventServer
import Expressions
import WinkCore

extension RowsLine {
    /// Every row of `table` after its last step, at the frame `info`: values to 2 decimals, seconds to 3.
    /// - Parameter face: whether a face is present.
    init(table: AnalyzerTable, info: FrameInfo, face: Bool) {
        var rows: [Row] = []
        rows.reserveCapacity(table.rows.count)
        for (i, row) in table.rows.enumerated() {
            var line = Row(event: row.event, value: rounded(Double(table.values[i]), places: 2), state: "idle")
            switch table.state(ofRow: i) {
            case .idle: break
            case .pending(let held):
                line.state = "pending"
                line.held = rounded(held, places: 3)
            case .active(let held):
                line.state = "active"
                line.held = rounded(held, places: 3)
            case .latched: line.state = "latched"
            case .coolingDown(let remaining):
                line.state = "cooling"
                line.remaining = rounded(remaining, places: 3)
            case .suppressed(let by):
                line.state = "suppressed"
                line.by = by
            case .gated(let gate):
                line.state = "gated"
                line.gate = gate.rawValue
            }
            rows.append(line)
        }
        self.init(frame: info.index, time: rounded(info.time, places: 3), tMonoNs: info.monotonicNanoseconds,
                  face: face, rows: rows)
    }
}
