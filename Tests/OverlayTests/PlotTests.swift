import Foundation
import Overlay
import Testing

private func rgba(_ rgb: UInt32) -> SIMD4<UInt8> {
    SIMD4(UInt8(rgb >> 16 & 0xFF), UInt8(rgb >> 8 & 0xFF), UInt8(rgb & 0xFF), 255)
}

struct PlotLayoutTests {
    @Test func mapsTimeAndValueToPixels() {
        let l = PlotLayout(width: 800, laneHeight: 60, lanes: 3, start: 0, end: 4)
        #expect(l.height == 48 + 3 * 60 + 36)
        #expect(l.x(0) == l.left && l.x(4) == l.plotRight && l.x(-1) == l.left && l.x(9) == l.plotRight)
        #expect(l.x(2) == l.left + Int((Double(l.plotRight - l.left) / 2).rounded()))
        #expect(l.y(lane: 1, value: 0) == 48 + 60 + 60 - l.padding)
        #expect(l.y(lane: 1, value: 1) == 48 + 60 + l.padding)
        #expect(l.y(lane: 0, value: 2) == l.y(lane: 0, value: 1))
    }

    @Test func ticksFollowOneTwoFive() {
        #expect(PlotLayout(lanes: 1, start: 0, end: 2.4).ticks == [0, 0.5, 1, 1.5, 2])
        #expect(PlotLayout(lanes: 1, start: 0, end: 60).ticks == stride(from: 0.0, through: 60, by: 10).map { $0 })
        let fine = PlotLayout(lanes: 1, start: 0, end: 1).ticks
        #expect(fine.count == 11 && abs(fine[3] - 0.3) < 1e-9)
    }
}

struct PlotTests {
    /// Two lanes over 0...4 s at 20 fps: lane 0 at 0.1 with thresholds, active 0.5-1.5 s, no face 2.0-2.5 s;
    /// lane 1 at 0.9 with a one-shot event at 3.0 s.
    func synthetic() -> TimelinePlot {
        let times = (0...80).map { Double($0) * 0.05 }
        var plot = TimelinePlot(title: "synthetic", times: times)
        let values0: [Float] = times.map { $0 > 2.02 && $0 < 2.48 ? .nan : 0.1 }
        plot.lanes = [
            .init(title: "smile", subtitle: "a formula\nenter 0.6 exit 0.3", values: values0, enter: 0.6, exit: 0.3,
                  active: [0.5...1.5]),
            .init(title: "blink", values: times.map { _ in 0.9 }),
        ]
        plot.markers = [.init(lane: 0, time: 0.5, kind: .began), .init(lane: 0, time: 1.5, kind: .ended),
                        .init(lane: 1, time: 3.0, kind: .occurred)]
        return plot
    }

    @Test func drawsThresholdsSpansMarkersAndValuesWhereTheLayoutSays() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("plot.png").path
        let plot = synthetic()
        let l = plot.layout(width: 800, laneHeight: 60)
        try plot.write(to: path, layout: l)
        let image = try OverlayImage.decode(path: path)
        #expect(image.width == 800 && image.height == l.height)
        typealias C = TimelinePlot.Colour
        let mid = l.y(lane: 0, value: 0.45)
        // The enter threshold: solid, at its row; the exit threshold: dashed (6 on, 4 off from the left).
        #expect(image[l.x(3.3), l.y(lane: 0, value: 0.6)] == rgba(C.enter))
        #expect(image[l.x(3.3), l.y(lane: 0, value: 0.6) - 2] == rgba(C.lane))
        #expect(image[l.left + 2, l.y(lane: 0, value: 0.3)] == rgba(C.exit))
        #expect(image[l.left + 7, l.y(lane: 0, value: 0.3)] == rgba(C.lane))
        // Event markers one pixel wide at their times; the active span shaded between them.
        #expect(image[l.x(0.5), mid] == rgba(C.began))
        #expect(image[l.x(1.5), mid] == rgba(C.ended))
        #expect(image[l.x(0.5) + 3, mid] == rgba(C.active))
        #expect(image[l.x(1.2), mid] == rgba(C.active))
        #expect(image[l.x(1.5) + 3, mid] == rgba(C.lane))
        #expect(image[l.x(3.0), l.y(lane: 1, value: 0.2)] == rgba(C.occurred))
        #expect(image[l.x(3.0), mid] != rgba(C.occurred), "a marker stays in its own lane")
        // No face: shaded grey, and no value line through it.
        #expect(image[l.x(2.25), l.y(lane: 0, value: 0.1)] == rgba(C.noFace))
        // The value line, antialiased, at its row.
        let value = image[l.x(3.3), l.y(lane: 0, value: 0.1)]
        #expect(value.x < 100 && value.y < 100 && value.z < 100, "\(value)")
        #expect(image[l.x(3.3), l.y(lane: 1, value: 0.9)].x < 100)
        // A grid line at each tick, below the thresholds.
        #expect(image[l.x(3.5), l.y(lane: 0, value: 0.8)] == rgba(C.grid))
        #expect(image[l.x(3.5), l.y(lane: 0, value: 0.6)] == rgba(C.enter))
        // The time axis runs along the bottom of the last lane.
        #expect(image[l.x(1.7), l.top + 2 * l.laneHeight] == rgba(C.text))
    }

    @Test func anUnwritablePathIsAnOutputError() {
        #expect {
            try synthetic().write(to: "/nonexistent-dir/plot.png")
        } throws: { error in
            guard let e = error as? OverlayError else { return false }
            return e.code == .output && e.exitCode == .cannotCreate && e.subject == "/nonexistent-dir/plot.png"
                && e.reason == "no such directory /nonexistent-dir"
        }
    }
}
