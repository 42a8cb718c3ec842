import EventServer
import Expressions
import Foundation
import WinkCore

/// Lays out `winkctl monitor`'s screen from a `MonitorState`: pure text placement (ASCII only, so it reads
/// the same in any locale and in a captured pane), drawn by `Terminal`. Works from 80x24 up; a smaller
/// screen shows what fits.
///
/// ```
/// winkd monitor  single_face_wink_left.mp4  source_opened          q quit  p pause  c clear
/// 30.0 fps  latency 5.1 ms  clients 1  face found  frame 31  t 1.033 s
/// *winkLeft   0.62 [################|:####       ] 0.50/0.35 pending 0.10/0.25s
/// ```
/// Each row: its value, a bar from 0 to 1 with `|` at `enter` and `:` at `exit`, the thresholds as numbers,
/// and its state; `*` and reverse video for a second after it fired.
enum MonitorScreen {
    /// How a piece of text is drawn (the values are CNcurses' `WINK_STYLE_*`).
    enum Style: Int32 {
        case plain = 0, bold, pending, active, dim, flash, header, alert
    }

    /// A piece of text at a cell (0-based row and column).
    struct Text: Equatable {
        var row: Int
        var column: Int
        var text: String
        var style: Style
    }

    /// Width of a row's name column, and of the state column at the right.
    static let nameWidth = 11
    static let stateWidth = 22
    /// The coefficients shown, in order, then the head pose (degrees, drawn from -45 to 45).
    static let poseNames = ["headYaw", "headPitch", "headRoll"]

    /// The smallest terminal the view is laid out for.
    static let minimumSize = (rows: 24, columns: 80)

    /// The whole screen for `state` on a `rows` x `columns` terminal at monotonic time `now`. A terminal
    /// smaller than `minimumSize` gets one line asking for a larger one (until it is resized), not a
    /// garbled view.
    /// The title for `room` columns: "winkd monitor  SOURCE  STATE  RELOAD". The states come first: the source
    /// name is shortened ("…" at its end) to leave them room, then "winkd monitor" goes (at 80 columns a
    /// `reload_failed` was cut off, and a long file name hid the source's state too).
    static func title(_ state: MonitorState, room: Int) -> String {
        let source = state.source.map { ($0 as NSString).lastPathComponent } ?? state.socket
        let states = (state.sourceState ?? "") + (state.otherState.map { "  \($0)" } ?? "")
        func shortened(_ name: String, to width: Int) -> String {
            name.count <= width ? name : width <= 0 ? "" : String(name.prefix(width - 1)) + "…"
        }
        let prefix = "winkd monitor  "
        let spare = room - prefix.count - 2 - states.count
        if spare >= min(source.count, 8) { return prefix + shortened(source, to: spare) + "  " + states }
        return shortened(source, to: max(0, room - 2 - states.count)) + "  " + states
    }

    static func layout(_ state: MonitorState, rows: Int, columns: Int, now: Double, paused: Bool) -> [Text] {
        guard rows > 0, columns > 0 else { return [] }
        var out: [Text] = []
        func put(_ row: Int, _ column: Int, _ text: String, _ style: Style = .plain) {
            guard row < rows, column < columns else { return }
            out.append(Text(row: row, column: column, text: String(text.prefix(columns - column)), style: style))
        }
        if rows < minimumSize.rows || columns < minimumSize.columns {
            put(0, 0, "winkctl monitor needs \(minimumSize.columns)x\(minimumSize.rows); this terminal is "
                + "\(columns)x\(rows). Enlarge it, or q to quit.", .bold)
            return out
        }

        // Title bar and the daemon's numbers.
        let keys = paused ? "PAUSED (p resumes)  q quit" : "q quit  p pause  c clear"
        put(0, 0, pad(title(state, room: max(0, columns - keys.count - 1)), to: max(0, columns - keys.count - 1))
                + " " + keys, .header)
        var numbers = String(format: "%.1f fps  ", state.framesPerSecond(now: now))
        numbers += state.latencyMilliseconds.map { String(format: "latency %.1f ms  ", $0) } ?? "latency -  "
        numbers += "clients \(state.clients.map(String.init) ?? "-")  "
        numbers += state.face == nil ? "face -" : state.face! ? "face found" : "no face"
        if let frame = state.frame, let t = state.time { numbers += String(format: "  frame %d  t %.3f s", frame, t) }
        put(1, 0, numbers)

        // One bar per analyzer row.
        var line = 2
        if state.table.isEmpty {
            put(line, 0, "waiting for the analyzer table (winkd too old for 'analyzers'?)", .dim)
            line += 1
        }
        let barWidth = min(60, max(10, columns - (1 + nameWidth + 1 + 4 + 1 + 2 + 1 + 9 + 1 + stateWidth)))
        for row in state.table {
            guard line < rows else { break }
            let live = state.rows[row.event]
            let value = live?.value ?? 0
            let flashing = (state.flashes[row.event] ?? 0) > now
            let (status, style) = describe(live, row)
            let bar = thresholdBar(value: value, enter: Double(row.enter), exit: Double(row.exit), width: barWidth)
            let text = (flashing ? "*" : " ") + pad(String(row.event.prefix(nameWidth)), to: nameWidth)
                + String(format: " %4.2f [", value) + bar + "] "
                + String(format: "%4.2f/%4.2f ", Double(row.enter), Double(row.exit)) + status
            put(line, 0, text, flashing ? .flash : style)
            line += 1
        }

        // Coefficients and head pose on the left, the events on the right.
        guard line < rows else { return out }
        let eventsWidth = max(28, columns / 3)
        let left = max(0, columns - eventsWidth)
        put(line, 0, pad("coefficients (rows: | enter  : exit)", to: left), .bold)
        put(line, left, "events, newest first", .bold)
        line += 1
        let top = line
        let height = rows - top
        guard height > 0 else { return out }
        let names = BlendShape.allCases.map(\.rawValue) + poseNames
        let columnsNeeded = (names.count + height - 1) / height
        let columnWidth = left / max(1, columnsNeeded)
        for (i, name) in names.enumerated() {
            let column = i / height, row = top + i % height
            let pose = poseNames.contains(name)
            let value = state.coefficients[name]
            let label = pad(String(name.prefix(15)), to: 15)
            let number = value.map { String(format: pose ? "%5.1f" : "%5.2f", $0) } ?? "    -"
            let width = columnWidth - 15 - 1 - 5 - 1 - 2 - 1
            var text = label + " " + number
            if width >= 3 {
                text += " [" + (pose ? centredBar(degrees: value ?? 0, width: width)
                    : fillBar(value: value ?? 0, width: width)) + "]"
            }
            put(row, column * columnWidth, text, value == nil ? .dim : .plain)
        }
        for (i, e) in state.events.prefix(height).enumerated() {
            var text = String(format: "%7.3f ", e.time) + e.event
            if let phase = e.phase { text += " " + phase }
            if let d = e.duration { text += String(format: " %.2fs", d) }
            let fired = e.phase == "began" || e.phase == "occurred"
            put(top + i, left, String(text.prefix(eventsWidth)), fired ? .bold : .plain)
        }
        return out
    }

    /// A row's state as text (`pending 0.10/0.25s`, `suppressed by blink`...) and its style.
    static func describe(_ live: RowsLine.Row?, _ row: AnalyzerRow) -> (String, Style) {
        guard let live else { return ("-", .dim) }
        switch live.state {
        case "idle": return ("idle", .plain)
        case "pending":
            let held = live.held ?? 0
            return (row.kind == .held ? String(format: "pending %.2f/%.2fs", held, row.minDuration)
                        : String(format: "pending %.2fs", held), .pending)
        case "active": return (String(format: "active %.2fs", live.held ?? 0), .active)
        case "latched": return ("latched: wait < exit", .dim)
        case "cooling": return (String(format: "cooling %.2fs", live.remaining ?? 0), .dim)
        case "suppressed": return ("suppressed by \(live.by ?? "?")", .dim)
        case "gated": return ("gated: \(live.gate ?? "?")", .dim)
        default: return (live.state, .plain)
        }
    }

    /// `width` cells for a value in 0...1: `#` up to the value, `|` at `enter` and `:` at `exit`.
    static func thresholdBar(value: Double, enter: Double, exit: Double, width: Int) -> String {
        var cells = Array(fillBar(value: value, width: width))
        let e = cell(exit, width), n = cell(enter, width)
        cells[e] = ":"
        cells[n] = "|"
        return String(cells)
    }

    /// `width` cells filled with `#` in proportion to `value` (0...1).
    static func fillBar(value: Double, width: Int) -> String {
        let filled = Int((min(max(value, 0), 1) * Double(width)).rounded())
        return String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
    }

    /// `width` cells for an angle from -45 to 45 degrees: `|` in the middle, `#` from it towards the angle.
    static func centredBar(degrees: Double, width: Int) -> String {
        var cells = Array(repeating: Character(" "), count: width)
        let middle = width / 2
        let end = cell(0.5 + min(max(degrees, -45), 45) / 90, width)
        for i in min(middle, end)...max(middle, end) { cells[i] = "#" }
        cells[middle] = "|"
        return String(cells)
    }

    private static func cell(_ fraction: Double, _ width: Int) -> Int {
        min(width - 1, max(0, Int((fraction * Double(width)).rounded(.down))))
    }

    private static func pad(_ text: String, to width: Int) -> String {
        text.count >= width ? String(text.prefix(width)) : text + String(repeating: " ", count: width - text.count)
    }
}
