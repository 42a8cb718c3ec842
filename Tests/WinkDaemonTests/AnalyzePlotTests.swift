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
        recorder.add(
            time: 0.3, coefficients: c,
            events: [
                event("smile", .ended, 0.3, duration: 0.25),
                event("blink", .occurred, 0.3, duration: 0.12),
                event("mouthOpen", .began, 0.3),
            ])
        let plot = recorder.plot(title: "clip.mp4")
        #expect(plot.title == "clip.mp4" && plot.times == [0, 0.1, 0.2, 0.3])
        #expect(
            plot.lanes.map(\.title) == rows.map(\.event) + [
                "eyeBlinkLeft", "eyeBlinkRight", "jawOpen",
                "mouthSmileLeft", "mouthSmileRight", "browInnerUp",
            ])
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
        #expect(
            plot.markers == [
                .init(lane: smileLane, time: 0.1, kind: .began), .init(lane: smileLane, time: 0.3, kind: .ended),
                .init(lane: blinkLane, time: 0.3, kind: .occurred),
                .init(lane: mouthLane, time: 0.3, kind: .began),
            ])
    }

    /// The default table fed a blink whose eyes reopen one after the other, the left eye then held shut:
    /// the wink is suppressed by the blink for the wink's cooldown, then held for its minDuration, begins,
    /// is released after its releaseDelay and cools down.
    func blinkThenWink() -> (recorder: AnalyzePlotRecorder, events: [ExpressionEvent]) {
        let rows = AnalyzerRow.defaultTable
        let table = AnalyzerTable(rows: rows)
        let recorder = AnalyzePlotRecorder(rows: rows)
        var all: [ExpressionEvent] = []
        for k in 0..<75 {
            let time = Double(k) / 30
            var c = BlendShapeCoefficients()
            switch k {
            case 6...10: (c[.eyeBlinkLeft], c[.eyeBlinkRight]) = (0.9, 0.9)  // both closed: a blink pending
            case 11...40: c[.eyeBlinkLeft] = 0.9  // the right eye reopens first; the left stays shut
            default: break
            }
            var events: [ExpressionEvent] = []
            if k == 0 { events.append(ExpressionEvent(event: EventName.faceFound, phase: nil, frame: 0, time: 0)) }
            table.step(frame: FrameInfo(index: k, time: time, monotonicNanoseconds: 0), coefficients: c, into: &events)
            recorder.add(time: time, coefficients: c, events: events, traces: table.traces)
            all += events
        }
        var lost: [ExpressionEvent] = []
        table.reset(frame: FrameInfo(index: 75, time: 2.5, monotonicNanoseconds: 0), into: &lost)
        lost.append(ExpressionEvent(event: EventName.faceLost, phase: nil, frame: 75, time: 2.5))
        recorder.add(time: 2.5, coefficients: nil, events: lost, traces: table.traces)
        return (recorder, all + lost)
    }

    @Test func explainsMinDurationReleaseDelayCooldownAndSuppression() throws {
        let (recorder, events) = blinkThenWink()
        let plot = recorder.plot(title: "blink then wink")
        func lane(_ name: String) throws -> TimelinePlot.Lane { try #require(plot.lanes.first { $0.title == name }) }
        func close(_ a: Double?, _ b: Double?) -> Bool { a != nil && b != nil && abs(a! - b!) < 1e-3 }
        let began = try #require(events.first { $0.event == "winkLeft" && $0.phase == .began })
        let ended = try #require(events.first { $0.event == "winkLeft" && $0.phase == .ended })
        let blink = try #require(events.first { $0.event == "blink" })
        #expect(blink.phase == .occurred && close(blink.time, 11.0 / 30))
        let wink = try lane("winkLeft")
        let cooldown = try #require(AnalyzerRow.defaultTable.first { $0.event == "winkLeft" }).cooldown
        #expect(cooldown > 0.1)
        // Suppressed from the blink's end for the wink's cooldown, then held 0.25 s before it began.
        let note = try #require(wink.blocked.first)
        #expect(wink.blocked.count == 1 && note.text == "suppressed by blink")
        #expect(close(note.span.lowerBound, blink.time) && close(note.span.upperBound - note.span.lowerBound, cooldown))
        #expect(wink.pending.count == 1 && close(wink.pending.first?.lowerBound, note.span.upperBound))
        #expect(close(wink.pending.first?.upperBound, began.time))
        #expect(
            close((wink.pending.first?.upperBound ?? 0) - (wink.pending.first?.lowerBound ?? 0), 0.25)
                || close((wink.pending.first?.upperBound ?? 0) - (wink.pending.first?.lowerBound ?? 0), 0.267))
        // Released at the first frame below exit (41), ended once that held for the wink's endDelay (0.15 s).
        #expect(wink.release.count == 1 && close(wink.release.first?.lowerBound, 41.0 / 30))
        #expect(close(wink.release.first?.upperBound, ended.time))
        #expect(wink.cooldown.count == 1 && close(wink.cooldown.first?.lowerBound, ended.time))
        #expect(close(wink.cooldown.first?.upperBound, ended.time + cooldown))
        #expect(wink.active.count == 1)
        // The blink was pending while both eyes were shut; eyesClosed too, but never for its 0.5 s.
        #expect(try lane("blink").pending.count == 1 && close(try lane("blink").pending.first?.upperBound, blink.time))
        let eyesClosed = try lane("eyesClosed")
        #expect(eyesClosed.pending.count == 1 && eyesClosed.active.isEmpty)
        #expect(!events.contains { $0.event == "eyesClosed" })
        // Nothing else was blocked or pending; face markers at faceFound and faceLost.
        #expect(try lane("winkRight").pending.isEmpty && (try lane("winkRight").blocked.isEmpty))
        #expect(plot.faceMarkers == [.init(time: 0, found: true), .init(time: 2.5, found: false)])
        // Each row's timing under its title.
        #expect(
            wink.subtitle.split(separator: "\n").map(String.init) == [
                "min(eyeBlinkLeft, (1.0 - (1.5 * eyeBlinkRight)))", "enter 0.7  exit 0.5  min 0.25 s",
                "releaseDelay 0.03 s  endDelay 0.15 s  cooldown 0.2 s", "suppressedBy blink, eyesClosed",
            ])
        #expect(
            try lane("blink").subtitle.split(separator: "\n").dropFirst().map(String.init) == [
                "enter 0.8  exit 0.65  oneShot 0.03...0.5 s", "releaseDelay 0 s  cooldown 0.05 s",
            ])
        let legend = TimelinePlot.legend.flatMap { $0.map(\.name) }
        for name in [
            "pending (minDuration)", "release delay", "cooldown", "blocked (suppressedBy, cooldown, gate)",
            "faceFound", "faceLost", "no face",
        ] {
            #expect(legend.contains(name))
        }
    }

    @Test func aRowInItsOwnCooldownOrBehindAClosedGateIsBlockedForThatReason() throws {
        let row = AnalyzerRow(
            event: "smile", value: try Formula(parsing: "mouthSmileLeft"), enter: 0.5, exit: 0.3,
            cooldown: 0.5, gate: .mouth)
        let table = AnalyzerTable(rows: [row])
        let recorder = AnalyzePlotRecorder(rows: [row])
        for k in 0..<30 {
            var c = BlendShapeCoefficients()
            c[.mouthSmileLeft] = k < 5 || (8..<20).contains(k) ? 0.9 : 0
            var events: [ExpressionEvent] = []
            let gates = AnalyzerTable.Gates(eyes: true, mouth: !(10..<13).contains(k))
            table.step(
                frame: FrameInfo(index: k, time: Double(k) / 10, monotonicNanoseconds: 0), coefficients: c,
                gates: gates, into: &events)
            recorder.add(time: Double(k) / 10, coefficients: c, events: events, traces: table.traces)
        }
        let lane = recorder.plot(title: "").lanes[0]
        // Ended at 0.5 s; smiling again from 0.8 s: blocked by the cooldown until 1.0 s, then by the closed
        // mouth gate until 1.3 s, active from then.
        #expect(lane.blocked.map(\.text) == ["cooldown", "gate closed"], "\(lane.blocked)")
        #expect(
            lane.blocked.map(\.span.lowerBound) == [0.8, 1.0] && lane.blocked.map(\.span.upperBound) == [1.0, 1.3])
        #expect(lane.active.first?.lowerBound == 0 && lane.active.last?.lowerBound == 1.3)
    }

    /// The rendered plot: the spans shaded in their lane, the blocked strip under it, the legend's swatches
    /// above the lanes.
    @Test func theRenderedPlotShowsTheExplanations() throws {
        let plot = blinkThenWink().recorder.plot(title: "blink then wink")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("plot-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("plot.png").path
        let l = plot.layout()
        try plot.write(to: path, layout: l)
        let image = try OverlayImage.decode(path: path)
        func rgb(_ x: Int, _ y: Int) -> UInt32 {
            let p = image[x, y]
            return UInt32(p.x) << 16 | UInt32(p.y) << 8 | UInt32(p.z)
        }
        typealias C = TimelinePlot.Colour
        let wink = try #require(plot.lanes.firstIndex { $0.title == "winkLeft" })
        let lane = plot.lanes[wink]
        let cooldown = try #require(lane.cooldown.first)
        let note = try #require(lane.blocked.first)
        let pending = try #require(lane.pending.first)
        let release = try #require(lane.release.first)
        let high = l.y(lane: wink, value: 0.95)
        #expect(rgb(l.x((cooldown.lowerBound + cooldown.upperBound) / 2) + 1, high) == C.cooldown)
        #expect(rgb(l.x((pending.lowerBound + pending.upperBound) / 2) + 1, high) == C.pending)
        #expect(rgb(l.x(release.lowerBound) + 1, high) == C.release)
        #expect(rgb(l.x((note.span.lowerBound + note.span.upperBound) / 2), l.y(lane: wink, value: 0) + 3) == C.blocked)
        #expect(rgb(l.x(2.5), l.y(lane: wink, value: 0.7)) == C.faceLost, "faceLost drawn through the lanes")
        // Every legend swatch is in the legend strip, at the top right.
        for entry in TimelinePlot.legend.joined() {
            let found = (4..<l.top).contains { y in (l.left..<l.width).contains { x in rgb(x, y) == entry.colour } }
            #expect(found, "\(entry.name) \(String(entry.colour, radix: 16))")
        }
    }
}
