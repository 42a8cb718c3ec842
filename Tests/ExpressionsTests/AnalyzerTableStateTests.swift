import Expressions
import Testing
import WinkCore

/// `AnalyzerTable.state(ofRow:)` and `values`: what `winkctl monitor` shows beside each row.
struct AnalyzerTableStateTests {
    @Test func aWinkGoesPendingActiveCoolingThenIdleAndTheBlinkSuppressesIt() throws {
        var s = Script(AnalyzerRow.defaultTable)
        let wink = try #require(s.table.rows.firstIndex { $0.event == "winkLeft" })
        #expect(s.table.state(ofRow: wink) == .idle)
        s.feed([(.eyeBlinkLeft, 0.9), (.eyeBlinkRight, 0.05)], times: 4)  // 0.1 s of a 0.25 s minimum
        #expect(s.table.values[wink] == 0.9)
        guard case .pending(let held) = s.table.state(ofRow: wink) else {
            Issue.record("expected pending, got \(s.table.state(ofRow: wink))")
            return
        }
        #expect(abs(held - 0.1) < 1e-9)
        s.feed([(.eyeBlinkLeft, 0.9), (.eyeBlinkRight, 0.05)], times: 6)
        guard case .active = s.table.state(ofRow: wink) else {
            Issue.record("expected active, got \(s.table.state(ofRow: wink))")
            return
        }
        s.feed([(.eyeBlinkLeft, 0.05), (.eyeBlinkRight, 0.05)], times: 4)  // 0.1 s below exit: still on
        guard case .active = s.table.state(ofRow: wink) else {
            Issue.record("a begun wink ends after its endDelay, 0.15 s: got \(s.table.state(ofRow: wink))")
            return
        }
        s.feed([(.eyeBlinkLeft, 0.05), (.eyeBlinkRight, 0.05)], times: 2)  // released (after 0.15 s)
        guard case .coolingDown(let remaining) = s.table.state(ofRow: wink) else {
            Issue.record("expected cooling down, got \(s.table.state(ofRow: wink))")
            return
        }
        #expect(remaining > 0 && remaining <= 0.5)
        s.feed([(.eyeBlinkLeft, 0.05), (.eyeBlinkRight, 0.05)], times: 16)
        #expect(s.table.state(ofRow: wink) == .idle)
        // Both eyes closing: the blink row is pending, and the wink rows say who holds them back.
        s.feed([(.eyeBlinkLeft, 0.9), (.eyeBlinkRight, 0.9)])
        #expect(s.table.state(ofRow: wink) == .suppressed(by: "blink"))
    }

    @Test func aClosedGateIsShownAndAResetReturnsEveryRowToIdleAtZero() throws {
        var s = Script(AnalyzerRow.defaultTable)
        let smile = try #require(s.table.rows.firstIndex { $0.event == "smile" })
        s.feed([(.mouthSmileLeft, 0.2)], gates: AnalyzerTable.Gates(eyes: true, mouth: false))
        #expect(s.table.state(ofRow: smile) == .gated(.mouth))
        s.feed([(.mouthSmileLeft, 0.9), (.mouthSmileRight, 0.9)], times: 10)
        s.table.reset(frame: FrameInfo(index: 99, time: 5, monotonicNanoseconds: 0), into: &s.events)
        #expect(s.table.values.allSatisfy { $0 == 0 })
        #expect(s.table.rows.indices.allSatisfy { s.table.state(ofRow: $0) == .idle })
    }
}
