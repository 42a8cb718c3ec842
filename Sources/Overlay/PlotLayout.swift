/// Where things go in a `TimelinePlot` image. Pixels, origin top-left, y down.
///
/// The image has a title and legend strip of `top` pixels, then one lane of `laneHeight` pixels per plotted series,
/// then
/// the time axis (`bottom` pixels). In each lane, the plot area spans x from `left` to `width - right - 1`
/// and y from `laneTop(i) + padding` (value 1) to `laneTop(i) + laneHeight - padding` (value 0).
public struct PlotLayout: Sendable, Equatable {
    /// Image width in pixels (at least 400).
    public var width: Int
    /// Height of one lane in pixels (at least 30).
    public var laneHeight: Int
    /// Number of lanes (at least 1).
    public var lanes: Int
    /// Pixels left of the plot area (lane titles).
    public var left = 230
    /// Pixels right of the plot area.
    public var right = 20
    /// Pixels of the title and legend strip.
    public var top = 48
    /// Pixels of the time axis at the bottom.
    public var bottom = 36
    /// Space above value 1 and below value 0 inside each lane.
    public var padding = 8
    /// Seconds at the left and right edges of the plot area.
    public var start: Double
    /// Seconds at the right edge of the plot area (at least `start + 0.1`).
    public var end: Double

    /// - Parameters: `start`/`end` are the time range in seconds (widened to at least 0.1 s); `width` is raised
    ///   to at least 400 pixels, `laneHeight` to 30, `lanes` to 1.
    public init(width: Int = 1200, laneHeight: Int = 80, lanes: Int, start: Double, end: Double) {
        self.width = max(width, 400)
        self.laneHeight = max(laneHeight, 30)
        self.lanes = max(lanes, 1)
        self.start = start
        self.end = max(end, start + 0.1)
    }

    /// Total image height in pixels.
    public var height: Int { top + lanes * laneHeight + bottom }

    /// The last x of the plot area.
    public var plotRight: Int { width - right - 1 }

    /// The column of time `t` (seconds), clamped to the plot area.
    public func x(_ t: Double) -> Int {
        let f = (t - start) / (end - start)
        return left + Int((min(1, max(0, f)) * Double(plotRight - left)).rounded())
    }

    /// The first row of lane `i`.
    public func laneTop(_ i: Int) -> Int { top + i * laneHeight }

    /// The row of `value` (0...1, clamped) in lane `i`.
    public func y(lane i: Int, value: Float) -> Int {
        let v = Double(min(1, max(0, value)))
        let y0 = laneTop(i) + laneHeight - padding
        let y1 = laneTop(i) + padding
        return y0 - Int((v * Double(y0 - y1)).rounded())
    }

    /// Time-axis ticks: a 1-2-5 step giving about 10 ticks over the range, starting at a multiple of it.
    public var ticks: [Double] {
        let raw = (end - start) / 10
        let magnitude = pow(10, floor(log10(raw)))
        let step = [1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= raw * (1 - 1e-9) } ?? 10 * magnitude
        let first = Int((start / step - 1e-9).rounded(.up))
        let last = Int((end / step + 1e-9).rounded(.down))
        guard first <= last else { return [] }
        // k x step, rounded to 1e-9 s so 3 x 0.1 is 0.3.
        return (first...last).map { (Double($0) * step * 1e9).rounded() / 1e9 }
    }
}

#if canImport(Glibc)
    import Glibc
#endif
