import Expressions
import Foundation
import Overlay
import Testing
import WinkCore
@testable import WinkDaemon
@testable import WinkctlCommands

struct AnalyzePlotTests {
    func event(_ name: String, _ phase: EventPhase, _ time: Double, duration: Double? = nil) -> ExpressionEvent {
        ExpressionEvent(event: name, phase: phase, frame: Int(time * 10), time: time, duration: duration)
    }

    @Test func collectsRowValuesCoefficientsEventsAndActiveSpans() throws {
        let rows = AnalyzerRow.defaultTable
        let recorder = AnalyzePlotRecorder(rows: rows)
        var c = BlendShapeCoefficients()
        c[.mouthSmileLeft] = 0.8
        c[.mouthSmileRight] = 0.4
        c[.eyeBlinkLeft] = 0.7
        recorder.add(time: 0.0, coefficients: c, events: [])
        recorder.add(time: 0.1, coefficients: c, events: [event("smile", .began, 0.1)])
        recorder.add(time: 0.2, coefficients: nil, events: [event("faceLost", .ended, 0.2)])
        recorder.add(time: 0.3, coefficients: c, events: [event("smile", .ended, 0.3, duration: 0.25),
                                                           event("blink", .occurred, 0.3, duration: 0.12),
                                                           event("mouthOpen", .began, 0.3)])
        let plot = recorder.plot(title: "clip.mp4")
        #expect(plot.title == "clip.mp4" && plot.times == [0, 0.1, 0.2, 0.3])
        #expect(plot.lanes.map(\.title) == rows.map(\.event) + ["eyeBlinkLeft", "eyeBlinkRight", "jawOpen",
                                                                 "mouthSmileLeft", "mouthSmileRight", "browInnerUp"])
        let smileLane = try #require(rows.firstIndex { $0.event == "smile" })
        let smile = plot.lanes[smileLane]
        #expect(abs(smile.values[0] - 0.6) < 1e-6, "the row's formula: (0.8 + 0.4) / 2")
        #expect(smile.values[2].isNaN, "no face")
        #expect(smile.enter == rows[smileLane].enter && smile.exit == rows[smileLane].exit)
        #expect(smile.active == [0.1...0.3])
        let winkLeft = try #require(plot.lanes.first { $0.title == "winkLeft" })
        #expect(abs(winkLeft.values[0] - 0.7) < 1e-6, "min(eyeBlinkLeft, 1 - eyeBlinkRight)")
        let blinkLane = try #require(rows.firstIndex { $0.event == "blink" })
        #expect(abs(plot.lanes[blinkLane].active[0].lowerBound - 0.18) < 1e-9)
        let mouthLane = try #require(rows.firstIndex { $0.event == "mouthOpen" })
        #expect(plot.lanes[mouthLane].active == [0.3...0.3], "still active at the end: shaded to the last frame")
        let coefficient = try #require(plot.lanes.first { $0.title == "mouthSmileLeft" })
        #expect(coefficient.values[0] == 0.8 && coefficient.values[2].isNaN && coefficient.enter == nil)
        #expect(plot.markers == [.init(lane: smileLane, time: 0.1, kind: .began), .init(lane: smileLane, time: 0.3, kind: .ended),
                                 .init(lane: blinkLane, time: 0.3, kind: .occurred),
                                 .init(lane: mouthLane, time: 0.3, kind: .began)])
    }
}
