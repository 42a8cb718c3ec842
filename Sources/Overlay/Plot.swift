/// Coefficients and analyzer values over time, drawn as a PNG for tuning thresholds (`winkctl analyze --plot`).
///
/// One lane per series: the value over time (a dark line, broken where there was no face, on a grey band), the
/// series' `enter` threshold as a solid orange line and its `exit` threshold as a dashed blue line, shaded spans
/// where the expression was active, and a vertical marker at each event (green `began`, red `ended`, purple
/// `occurred`). What explains an event that fired or did not is shaded too: the time the value was held before it
/// counted (`minDuration`, amber), the release delay before an end (`releaseDelay`, or `endDelay` once begun;
/// blue), the `cooldown` after an end (lavender), and spans where the row was blocked (a red strip under the lane,
/// labelled with the cause: "suppressed by blink", "cooldown", "gate closed"). `faceFound` and `faceLost` are
/// vertical lines through every lane. Time runs left to right in seconds along a labelled axis; the legend
/// (`legend`) names every colour.
public struct TimelinePlot: Sendable {
    /// A span of a lane in which the row could not start (or its pending start was cancelled), and why.
    public struct Note: Sendable, Equatable {
        /// Seconds.
        public var span: ClosedRange<Double>
        /// The cause, written under the span: "suppressed by blink", "cooldown", "gate closed".
        public var text: String
        /// A note over `span` (seconds) saying `text`.
        public init(span: ClosedRange<Double>, text: String) {
            self.span = span
            self.text = text
        }
    }

    /// One series.
    public struct Lane: Sendable {
        /// The lane's title (the row's event or the coefficient's name).
        public var title: String
        /// Smaller lines under the title, separated by "\n" (a formula, the thresholds, the timing), each
        /// shrunk to fit.
        public var subtitle: String
        /// One value (0...1) per entry of `TimelinePlot.times`; NaN where nothing was measured (no face).
        public var values: [Float]
        /// The `enter` threshold (0...1) drawn as a solid line; nil: none.
        public var enter: Float?
        /// The `exit` threshold (0...1) drawn as a dashed line; nil: none.
        public var exit: Float?
        /// Time spans (seconds) in which the expression was active.
        public var active: [ClosedRange<Double>]
        /// Time spans (seconds) in which the value had crossed `enter` but the expression did not count yet:
        /// held rows waiting out `minDuration`, one-shot rows until release. A span not followed by an event
        /// is a start that never counted (too short, cancelled, too long).
        public var pending: [ClosedRange<Double>] = []
        /// Time spans (seconds) from the first frame below `exit` to the end the release delay allows.
        public var release: [ClosedRange<Double>] = []
        /// Time spans (seconds) after an end in which the row cannot start again (`cooldown`).
        public var cooldown: [ClosedRange<Double>] = []
        /// Spans in which the row was blocked, with the cause.
        public var blocked: [Note] = []

        /// A lane; `values` in 0...1 (NaN: no face), spans in seconds.
        public init(
            title: String, subtitle: String = "", values: [Float], enter: Float? = nil, exit: Float? = nil,
            active: [ClosedRange<Double>] = [], pending: [ClosedRange<Double>] = [],
            release: [ClosedRange<Double>] = [], cooldown: [ClosedRange<Double>] = [], blocked: [Note] = []
        ) {
            self.title = title
            self.subtitle = subtitle
            self.values = values
            self.enter = enter
            self.exit = exit
            self.active = active
            self.pending = pending
            self.release = release
            self.cooldown = cooldown
            self.blocked = blocked
        }
    }

    /// A `faceFound` (`found`) or `faceLost` event at `time` seconds, drawn through every lane.
    public struct FaceMarker: Sendable, Equatable {
        /// Seconds.
        public var time: Double
        /// True for `faceFound`, false for `faceLost`.
        public var found: Bool
        /// A marker at `time` seconds.
        public init(time: Double, found: Bool) {
            self.time = time
            self.found = found
        }
    }

    /// One entry of the legend: a swatch of `colour` (0xRRGGBB) and its name.
    public struct LegendEntry: Sendable, Equatable {
        /// What the colour stands for.
        public var name: String
        /// 0xRRGGBB.
        public var colour: UInt32
    }

    /// The phase of an event marker.
    /// `began` (green), `ended` (red) or `occurred` (purple).
    public enum MarkerKind: Sendable, Equatable { case began, ended, occurred }

    /// An event drawn in lane `lane` at `time` seconds.
    public struct Marker: Sendable, Equatable {
        /// 0-based index into `TimelinePlot.lanes`.
        public var lane: Int
        /// Seconds.
        public var time: Double
        /// The event's phase.
        public var kind: MarkerKind
        /// A marker in `lane` at `time` seconds.
        public init(lane: Int, time: Double, kind: MarkerKind) {
            self.lane = lane
            self.time = time
            self.kind = kind
        }
    }

    /// The colours used, 0xRRGGBB.
    public enum Colour {
        /// The image behind everything (white).
        public static let background: UInt32 = 0xFFFFFF
        /// A lane's band (light grey).
        public static let lane: UInt32 = 0xF6F6F6
        /// A lane's band where there was no face (grey).
        public static let noFace: UInt32 = 0xDCDCDC
        /// Spans where the expression was active (light green).
        public static let active: UInt32 = 0xCFEFD4
        /// Grid lines.
        public static let grid: UInt32 = 0xE2E2E2
        /// The value line (near black).
        public static let value: UInt32 = 0x202020
        /// The `enter` threshold (orange).
        public static let enter: UInt32 = 0xE07000
        /// The `exit` threshold (blue).
        public static let exit: UInt32 = 0x3060C0
        /// `began` markers (green).
        public static let began: UInt32 = 0x1E9E3E
        /// `ended` markers (red).
        public static let ended: UInt32 = 0xD02020
        /// `occurred` markers (purple).
        public static let occurred: UInt32 = 0x8030C0
        /// Titles and labels.
        public static let text: UInt32 = 0x202020
        /// Pending spans, waiting out `minDuration` (amber).
        public static let pending: UInt32 = 0xFBE3A0
        /// Release-delay spans (light blue).
        public static let release: UInt32 = 0xC4D8F2
        /// Cooldown spans (lavender).
        public static let cooldown: UInt32 = 0xE6D8F2
        /// Blocked strips (red).
        public static let blocked: UInt32 = 0xD03030
        /// `faceFound` lines (teal).
        public static let faceFound: UInt32 = 0x00897B
        /// `faceLost` lines (brown).
        public static let faceLost: UInt32 = 0x8D5A2B

        /// The marker colour for `kind`.
        public static func marker(_ kind: MarkerKind) -> UInt32 {
            switch kind {
            case .began: began
            case .ended: ended
            case .occurred: occurred
            }
        }
    }

    /// The plot's title, at the top.
    public var title: String
    /// Frame times in seconds, ascending.
    public var times: [Double]
    /// The series, top to bottom.
    public var lanes: [Lane] = []
    /// Event markers.
    public var markers: [Marker] = []
    /// `faceFound`/`faceLost` lines.
    public var faceMarkers: [FaceMarker] = []

    /// The legend, in two rows: what the lanes draw, then what explains an event (and the face markers).
    public static let legend: [[LegendEntry]] = [
        [
            .init(name: "value", colour: Colour.value), .init(name: "enter", colour: Colour.enter),
            .init(name: "exit", colour: Colour.exit), .init(name: "began", colour: Colour.began),
            .init(name: "ended", colour: Colour.ended), .init(name: "occurred", colour: Colour.occurred),
            .init(name: "active", colour: Colour.active),
        ],
        [
            .init(name: "pending (minDuration)", colour: Colour.pending),
            .init(name: "release delay", colour: Colour.release), .init(name: "cooldown", colour: Colour.cooldown),
            .init(name: "blocked (suppressedBy, cooldown, gate)", colour: Colour.blocked),
            .init(name: "faceFound", colour: Colour.faceFound), .init(name: "faceLost", colour: Colour.faceLost),
            .init(name: "no face", colour: Colour.noFace),
        ],
    ]

    /// An empty plot over the frame `times` (seconds, ascending).
    public init(title: String, times: [Double]) {
        self.title = title
        self.times = times
    }

    /// The layout for this plot at `width` pixels and `laneHeight` pixels a lane, over the frames' time range.
    public func layout(width: Int = 1200, laneHeight: Int = 80) -> PlotLayout {
        PlotLayout(
            width: width, laneHeight: laneHeight, lanes: lanes.count, start: min(0, times.first ?? 0),
            end: times.last ?? 1)
    }

    /// Draws the plot and writes it to `path` (PNG, or JPEG by extension).
    /// - Throws: `OverlayError.output` (73) when the file cannot be written; `.internal` (70) when the
    ///   image cannot be allocated.
    public func write(to path: String, layout: PlotLayout? = nil) throws {
        let layout = layout ?? self.layout()
        let canvas = try PlotCanvas(width: layout.width, height: layout.height)
        draw(on: canvas, layout: layout)
        try canvas.write(to: path)
    }

    func draw(on canvas: PlotCanvas, layout: PlotLayout) {
        let l = layout
        canvas.text(title, x: 8, y: 20, scale: 0.5, Colour.text)
        for (row, entries) in Self.legend.enumerated() {
            let y = 20 + 16 * row
            var lx = l.plotRight - entries.reduce(0) { $0 + PlotCanvas.textWidth($1.name) + 24 } + 16
            for entry in entries {
                canvas.fill(lx, y - 8, lx + 8, y, entry.colour)
                canvas.text(entry.name, x: lx + 12, y: y, scale: 0.4, Colour.text)
                lx += PlotCanvas.textWidth(entry.name) + 24
            }
        }
        for (i, lane) in lanes.enumerated() {
            let top = l.y(lane: i, value: 1)
            let bottom = l.y(lane: i, value: 0)
            canvas.fill(l.left, top, l.plotRight, bottom, Colour.lane)
            func shade(_ spans: [ClosedRange<Double>], _ colour: UInt32) {
                for span in spans { canvas.fill(l.x(span.lowerBound), top, l.x(span.upperBound), bottom, colour) }
            }
            shade(noFaceSpans(lane), Colour.noFace)
            shade(lane.cooldown, Colour.cooldown)
            shade(lane.pending, Colour.pending)
            shade(lane.active, Colour.active)
            shade(lane.release, Colour.release)
            // Blocked: a strip in the padding under the lane's 0, its cause written once at its start.
            var labelledUpTo = Int.min
            for note in lane.blocked {
                let x0 = l.x(note.span.lowerBound)
                let x1 = max(l.x(note.span.upperBound), x0 + 1)
                canvas.fill(x0, bottom + 2, x1, bottom + 5, Colour.blocked)
                if x0 > labelledUpTo {
                    canvas.text(note.text, x: x0 + 2, y: bottom - 3, scale: 0.33, Colour.blocked)
                    labelledUpTo = x0 + PlotCanvas.textWidth(note.text, scale: 0.33) + 6
                }
            }
            for t in l.ticks { canvas.line(l.x(t), top, l.x(t), bottom, Colour.grid) }
            if let e = lane.exit { canvas.dashedLine(l.left, l.plotRight, y: l.y(lane: i, value: e), Colour.exit) }
            if let e = lane.enter {
                canvas.line(l.left, l.y(lane: i, value: e), l.plotRight, l.y(lane: i, value: e), Colour.enter)
            }
            var run: [(x: Int, y: Int)] = []
            for (t, v) in zip(times, lane.values) {
                if v.isNaN {
                    canvas.polyline(run, Colour.value)
                    run.removeAll(keepingCapacity: true)
                } else {
                    run.append((l.x(t), l.y(lane: i, value: v)))
                }
            }
            canvas.polyline(run, Colour.value)
            // The title and up to four subtitle lines, the block moved up as it grows.
            let lines = lane.subtitle.split(separator: "\n")
            let titleY = l.laneTop(i) + l.laneHeight / 2 - 2 - 6 * max(0, lines.count - 2)
            canvas.text(lane.title, x: 8, y: titleY, scale: 0.45, Colour.text)
            for (k, line) in lines.enumerated() {
                // Shrunk to fit left of the plot area (a long formula).
                let fit = 0.33 * Double(l.left - 24) / Double(max(1, PlotCanvas.textWidth(String(line), scale: 0.33)))
                canvas.text(String(line), x: 8, y: titleY + 13 + 12 * k, scale: min(0.33, fit), 0x606060)
            }
            canvas.text("1", x: l.left - 12, y: top + 4, scale: 0.33, 0x606060)
            canvas.text("0", x: l.left - 12, y: bottom + 4, scale: 0.33, 0x606060)
        }
        for m in markers where lanes.indices.contains(m.lane) {
            let x = l.x(m.time)
            let top = l.y(lane: m.lane, value: 1)
            let bottom = l.y(lane: m.lane, value: 0)
            let colour = Colour.marker(m.kind)
            canvas.line(x, top, x, bottom, colour)
            canvas.fill(x - 3, top - 6, x + 3, top - 1, colour)
        }
        let axis = l.top + l.lanes * l.laneHeight
        for face in faceMarkers {
            let x = l.x(face.time)
            let colour = face.found ? Colour.faceFound : Colour.faceLost
            canvas.line(x, l.top, x, axis, colour)
            canvas.fill(x - 2, axis - 5, x + 2, axis - 1, colour)
        }
        canvas.line(l.left, axis, l.plotRight, axis, Colour.text)
        for t in l.ticks {
            canvas.line(l.x(t), axis, l.x(t), axis + 4, Colour.text)
            let label = formatTick(t)
            canvas.text(label, x: l.x(t) - PlotCanvas.textWidth(label) / 2, y: axis + 18, scale: 0.4, Colour.text)
        }
        canvas.text("time (s)", x: l.left, y: axis + 32, scale: 0.4, 0x606060)
    }

    /// Time spans where the lane has no value, from the frame before the gap's first frame to its last frame.
    func noFaceSpans(_ lane: Lane) -> [ClosedRange<Double>] {
        var spans: [ClosedRange<Double>] = []
        var begin: Double?
        for (i, (t, v)) in zip(times, lane.values).enumerated() {
            if v.isNaN {
                if begin == nil { begin = i > 0 ? times[i - 1] : t }
            } else if let b = begin {
                spans.append(b...t)
                begin = nil
            }
        }
        if let b = begin, let last = times.last { spans.append(b...last) }
        return spans
    }

    private func formatTick(_ t: Double) -> String {
        let r = (t * 100).rounded() / 100
        return r == r.rounded() ? String(Int(r)) : String(r)
    }
}
