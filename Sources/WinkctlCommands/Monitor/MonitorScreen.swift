import EventServer
import Expressions
import Foundation
import WinkCore

/// Lays out `winkctl monitor`'s screen from a `MonitorState`: pure text placement, drawn by `Terminal`. All
/// of it is ASCII but the source's name in the title, which is drawn as the terminal's locale allows
/// (`cells(_:unicode:)`) and measured in terminal cells. Works from 80x24 up; a smaller screen shows what
/// fits.
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
    /// `room` and the result are in terminal cells (`width(_:)`); `unicode`: the terminal's locale is UTF-8
    /// (else the name is drawn in ASCII, shortened with "~").
    static func title(_ state: MonitorState, room: Int, unicode: Bool = true) -> String {
        let source = cells(state.source.map { ($0 as NSString).lastPathComponent } ?? state.socket, unicode: unicode)
        let states = (state.sourceState ?? "") + (state.otherState.map { "  \($0)" } ?? "")
        let ellipsis: Character = unicode ? "…" : "~"
        func shortened(_ name: String, to room: Int) -> String {
            guard width(name) > room else { return name }
            guard room > 0 else { return "" }
            var kept = "", used = 0
            for c in name {
                let w = width(c)
                if used + w > room - 1 { break }
                kept.append(c)
                used += w
            }
            return kept + String(ellipsis)
        }
        let prefix = "winkd monitor  "
        let spare = room - prefix.count - 2 - states.count
        if spare >= min(width(source), 8) { return prefix + shortened(source, to: spare) + "  " + states }
        return shortened(source, to: max(0, room - 2 - states.count)) + "  " + states
    }

    /// `text` as the terminal can draw it, each character in one or two cells: composed (NFC, so "e" and a
    /// combining accent are one "é"), a control character (a tab or newline in a file name) as "?", and,
    /// unless `unicode`, every other non-ASCII character as "?" ("…" as "~"). In a UTF-8 locale a character
    /// that still takes more than one scalar (an emoji sequence, a decomposed letter without a composed form)
    /// is "?" too, as its width cannot be told.
    static func cells(_ text: String, unicode: Bool) -> String {
        String(text.precomposedStringWithCanonicalMapping.map { c -> Character in
            guard let scalar = c.unicodeScalars.first, c.unicodeScalars.count == 1 else { return "?" }
            if scalar.value < 0x20 || (0x7F..<0xA0).contains(scalar.value) { return "?" }
            if c.isASCII { return c }
            if !unicode { return c == "…" ? "~" : "?" }
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned,
                .nonspacingMark, .enclosingMark, .spacingMark:
                return "?"
            default:
                return c
            }
        })
    }

    /// The terminal cells `text` takes once made drawable by `cells(_:unicode:)`: 2 for each East Asian wide
    /// or fullwidth character and each emoji drawn as a picture, 1 for any other (Markus Kuhn's wcwidth
    /// ranges, as glibc's `wcwidth` has them for these blocks).
    static func width(_ text: String) -> Int { text.reduce(0) { $0 + width($1) } }

    static func width(_ c: Character) -> Int {
        guard let scalar = c.unicodeScalars.first, !c.isASCII else { return 1 }
        if scalar.properties.isEmojiPresentation { return 2 }
        switch scalar.value {
        case 0x1100...0x115F, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF,
            0x4E00...0x9FFF, 0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19,
            0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF,
            0x20000...0x2FFFD, 0x30000...0x3FFFD:
            return 2
        default:
            return 1
        }
    }

    /// `unicode`: the terminal's locale is UTF-8 (`Terminal.unicode`).
    static func layout(_ state: MonitorState, rows: Int, columns: Int, now: Double, paused: Bool,
                       unicode: Bool = true) -> [Text] {
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
        let room = max(0, columns - keys.count - 1)
        let heading = title(state, room: room, unicode: unicode)
        // Padded by cells: a wide character takes two; `put` clips by characters, which this never exceeds.
        put(0, 0, heading + String(repeating: " ", count: max(0, room - width(heading))) + " " + keys, .header)
        var numbers = String(format: "%.1f fps  ", state.framesPerSecond(now: now))
        numbers += state.latencyMilliseconds.map { String(format: "latency %.1f ms  ", $0) } ?? "latency -  "
        numbers += "clients \(state.clients.map(String.init) ?? "-")  "
        numbers += state.face == nil ? "face -" : state.face! ? "face found" : "no face"
        if let frame = state.frame, let t = state.time { numbers += String(format: "  frame %d  t %.3f s", frame, t) }
        put(1, 0, numbers)

        // One bar per analyzer row.
        var line = 2
        if let omitted = state.tableOmitted {
            put(line, 0, "winkd's analyzer table (\(omitted.rowCount) rows) is too large to show here: "
                + "\(omitted.omitted); events still come", .dim)
            line += 1
        } else if state.table.isEmpty {
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
