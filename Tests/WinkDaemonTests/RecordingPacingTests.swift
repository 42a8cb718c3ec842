import Capture
import CaptureTestSupport
import EventServer
import Foundation
import Glibc
import TestSupport
import Testing
import WinkCore

@testable import WinkDaemon

/// Issue 13, fault 9: a recording with a 5 s gap in its timestamps, paced in real time. Afterwards frames
/// came one a second, with `t_mono_ns` up to 4 s in the future (a client measured -4021 ms of latency).
@Suite(.serialized)
struct RecordingPacingTests {
    /// The face photo as a recording at 30 frames/s whose timestamps jump by `gap` s after `before` frames.
    final class GappedRecording: FrameSource, @unchecked Sendable {
        let name: String
        let isLive = false
        let nominalFrameRate: Double? = 30
        let times: [Double]
        private var index = 0

        init(name: String, before: Int, gap: Double, after: Int) {
            self.name = name
            times =
                (0..<before).map { Double($0) / 30 }
                + (0..<after).map { Double(before - 1) / 30 + gap + Double($0) / 30 }
        }

        func read(into buffer: PixelBuffer) throws -> FrameInfo? {
            guard index < times.count else { return nil }
            buffer.copy(from: DaemonHarness.face)
            defer { index += 1 }
            return FrameInfo(index: index, time: times[index], monotonicNanoseconds: SystemClock().nanoseconds())
        }

        func close() {}
    }

    @Test func framesAfterAFiveSecondGapComeAtTheirOwnRateAndNeverFromTheFuture() throws {
        let dir = try Scratch.directory("winkd-pace")
        let clip = Fixtures.video("single_face.mp4")  // checked at start-up; the frames come from the fake
        let options = DaemonOptions(source: clip, socketPath: dir.appendingPathComponent("s.sock").path)
        let recording = GappedRecording(name: clip, before: 15, gap: 5, after: 30)
        let daemon = try Daemon(
            options: options, predictor: DaemonHarness.predictor,
            environment: DaemonHarness.environment(FakeV4L2Device(picture: DaemonHarness.face))
        ) { _, _ in }
        daemon.openRecording = { _ in recording }
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = daemon.run()
            done.signal()
        }
        let client = try EventClient(path: options.socketPath, timeout: Wait.generous)
        try client.subscribe(events: [], coefficients: true, timeout: Wait.generous)
        // (received, t_mono_ns, time) of every coefficients line, until the recording's bye.
        var lines: [(received: UInt64, sent: UInt64, time: Double)] = []
        while let line = try client.nextLine(timeout: Wait.generous) {
            let received = SystemClock().nanoseconds()
            guard EventClient.type(of: line) == "coefficients",
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let t = (object["t_mono_ns"] as? NSNumber)?.uint64Value, let time = object["time"] as? Double
            else { continue }
            lines.append((received, t, time))
        }
        #expect(done.wait(timeout: .now() + Wait.generous) == .success)
        #expect(lines.count == 45, "one coefficients line a frame: \(lines.count)")
        for line in lines {
            #expect(
                line.sent <= line.received,
                "t_mono_ns \(Double(Int64(line.sent) - Int64(line.received)) / 1e6) ms ahead at \(line.time)"
            )
        }
        let after = lines.filter { $0.time > 5 }
        #expect(after.count == 30)
        if let first = after.first, let last = after.last, let before = lines.last(where: { $0.time < 1 }) {
            let span = Double(last.sent - first.sent) / 1e9
            #expect(span > 0.9 && span < 1.5, "29 frame intervals at 30 frames/s take about 0.97 s, not \(span) s")
            let pause = Double(first.sent - before.sent) / 1e9
            #expect(pause > 0.9 && pause < 2, "the 5 s gap is waited out for 1 s, not \(pause) s")
        }
    }

    @Test func thePacerShortensAGapAndKeepsTheSpacingAfterIt() {
        var pacer = RecordingPacer()
        let start: UInt64 = 1_000_000_000_000
        #expect(pacer.due(time: 0, now: start) == start)
        #expect(pacer.due(time: 0.5, now: start + 10) == start + 500_000_000)
        // 5 s later in the recording: due 1 s after the previous frame, not 5.
        #expect(pacer.due(time: 5.5, now: start + 500_000_000) == start + 1_500_000_000)
        #expect(pacer.due(time: 5.6, now: start + 1_500_000_000) == start + 1_600_000_000)
        // Time going back: due with the previous frame, then on from there.
        #expect(pacer.due(time: 2, now: start + 1_600_000_000) == start + 1_600_000_000)
        #expect(pacer.due(time: 2.25, now: start + 1_600_000_000) == start + 1_850_000_000)
        // Released 3 s late (a stalled machine): anchored again at now, no burst afterwards.
        let late = start + 4_850_000_000
        #expect(pacer.due(time: 2.5, now: late) == late)
        #expect(pacer.due(time: 2.6, now: late) == late + 100_000_000)
        // A small lag is caught up (the frames keep their schedule).
        #expect(pacer.due(time: 2.7, now: late + 300_000_000) == late + 200_000_000)
    }
}
