import CWinkOverlay
import WinkCore

/// A white image drawn with OpenCV primitives (see CWinkOverlay.h "Plot canvas"). Pixels, origin top-left;
/// colours 0xRRGGBB. Not thread-safe.
final class PlotCanvas {
    let width: Int
    let height: Int
    private let handle: OpaquePointer

    /// - Throws: `OverlayError.internal` for a size outside 1...16384 or when OpenCV cannot allocate it.
    init(width: Int, height: Int) throws {
        var out: OpaquePointer?
        let status = wo_canvas_create(Int32(clamping: width), Int32(clamping: height), &out)
        guard status == WO_OK, let out else {
            throw OverlayError(.internal, subject: "plot", reason: "cannot create a \(width)x\(height) plot image")
        }
        self.width = width
        self.height = height
        handle = out
    }

    deinit { wo_canvas_destroy(handle) }

    /// Fills the rectangle with inclusive corners (x0, y0), (x1, y1).
    func fill(_ x0: Int, _ y0: Int, _ x1: Int, _ y1: Int, _ rgb: UInt32) {
        wo_canvas_fill_rect(
            handle, Int32(clamping: x0), Int32(clamping: y0), Int32(clamping: x1), Int32(clamping: y1), rgb)
    }

    /// An exact (8-connected) line, or an antialiased one.
    func line(_ x0: Int, _ y0: Int, _ x1: Int, _ y1: Int, _ rgb: UInt32, thickness: Int = 1, antialiased: Bool = false)
    {
        wo_canvas_line(
            handle, Int32(clamping: x0), Int32(clamping: y0), Int32(clamping: x1), Int32(clamping: y1), rgb,
            Int32(thickness), antialiased ? 1 : 0)
    }

    /// A horizontal dashed line from x0 to x1 at y.
    func dashedLine(_ x0: Int, _ x1: Int, y: Int, _ rgb: UInt32, dash: Int = 6, gap: Int = 4) {
        var x = x0
        while x <= x1 {
            line(x, y, min(x + dash - 1, x1), y, rgb)
            x += dash + gap
        }
    }

    /// An antialiased open polyline through `points`.
    func polyline(_ points: [(x: Int, y: Int)], _ rgb: UInt32, thickness: Int = 1) {
        guard !points.isEmpty else { return }
        var xy = [Int32]()
        xy.reserveCapacity(points.count * 2)
        for p in points {
            xy.append(Int32(clamping: p.x))
            xy.append(Int32(clamping: p.y))
        }
        wo_canvas_polyline(handle, xy, Int32(points.count), rgb, Int32(thickness))
    }

    /// Text with its baseline at `y`, starting at `x`.
    func text(_ s: String, x: Int, y: Int, scale: Double = 0.4, _ rgb: UInt32 = 0x202020) {
        wo_canvas_text(handle, s, Int32(clamping: x), Int32(clamping: y), scale, rgb)
    }

    static func textWidth(_ s: String, scale: Double = 0.4) -> Int { Int(wo_canvas_text_width(s, scale)) }

    /// Writes the canvas under a temporary name renamed over `path` once written (`PendingOutput`): a
    /// failed write leaves what was at `path` as it was.
    /// - Throws: `OverlayError.output` (73) when the file cannot be written or the extension is not
    ///   `.png`/`.jpg`/`.jpeg`, `.writeFailed` (74) on a full disk, `.internal` (70) when the codec plugin
    ///   cannot be loaded.
    func write(to path: String) throws {
        let pending = try PendingOutput.forOverlay(path, deferringSignals: true)
        var message = [CChar](repeating: 0, count: 256)
        let status = wo_canvas_write(handle, pending.temporary, &message, message.count)
        guard status == WO_OK else {
            pending.discard()
            throw OverlayError.writing(status, path: path, message: message, fallback: "cannot write the plot",
                                       temporary: pending.temporary)
        }
        try pending.commitForOverlay()
    }
}
