import EventServer
import Foundation
import Testing
import WinkCore

@testable import WinkDaemon
@testable import WinkctlCommands

struct BenchStatsTests {
    @Test func daemonBenchReadsTheCaptureStampWithoutDecodingJSON() {
        let scan = BenchCommand.LatencyReader.captureNanoseconds(in:)
        #expect(scan(#"{"type":"coefficients","t_mono_ns":123456789012,"frame":3}"#) == 123_456_789_012)
        #expect(scan(#"{"event":"blink","frame":30,"t_mono_ns":7,"time":1}"#) == 7)
        #expect(scan(#"{"type":"status","state":"source_opened"}"#) == nil)
        #expect(scan(#"{"t_mono_ns":"x"}"#) == nil)
        #expect(scan("") == nil)
        #expect(scan(#""t_mono_ns":"#) == nil)
        // What the server writes for a line, read back the same as through JSONDecoder.
        let line = #"{"event":"smile","frame":23,"phase":"began","t_mono_ns":18446744073709551615,"time":0.767}"#
        #expect(scan(line) == LatencyRecorder.captureNanoseconds(in: line))
        #expect(scan(#"{"t_mono_ns":18446744073709551616}"#) == nil)  // one past UInt64.max
    }

    @Test func processorSecondsReadsUtimeAndStimeAfterTheCommandName() throws {
        let own = try BenchCommand.processorSeconds(pid: getpid())
        #expect(own > 0 && own < 100_000)
        let memory = try BenchCommand.memoryMB(pid: getpid())
        #expect(memory.peak >= memory.current && memory.current > 1)
    }

    @Test func meanPercentilesAndMaximumByNearestRank() {
        var stats = SampleStats()
        for v in [5.0, 1, 4, 2, 3, 10, 6, 7, 9, 8] { stats.add(v) }
        #expect(stats.count == 10)
        #expect(stats.mean == 5.5)
        #expect(stats.total == 55)
        #expect(stats.maximum == 10)
        #expect(stats.percentile(50) == 5)  // rank ceil(5) = 5
        #expect(stats.percentile(99) == 10)  // rank ceil(9.9) = 10
        #expect(stats.percentile(10) == 1)
        #expect(stats.percentile(11) == 2)  // rank ceil(1.1) = 2
        stats.add(0.5)  // after sorting, a new sample still counts
        #expect(stats.percentile(1) == 0.5)
    }

    @Test func p99OfAHundredSamplesIgnoresOnlyTheWorst() {
        var stats = SampleStats()
        for i in 1...100 { stats.add(Double(i)) }
        #expect(stats.percentile(99) == 99)
        #expect(stats.percentile(100) == 100)
    }

    @Test func emptyAndResetGiveZeros() {
        var stats = SampleStats(capacity: 8)
        #expect(stats.mean == 0 && stats.maximum == 0 && stats.percentile(99) == 0)
        stats.add(3)
        stats.reset()
        #expect(stats.count == 0 && stats.mean == 0 && stats.percentile(50) == 0)
        stats.add(2)
        #expect(stats.mean == 2 && stats.percentile(50) == 2)
    }
}

/// `winkctl events --latency` against an in-process server publishing lines captured a known time ago.
@Suite(.serialized)
struct BenchLatencyTests {
    @Test func extractsTheCaptureTime() {
        #expect(
            LatencyRecorder.captureNanoseconds(in: #"{"type":"event","t_mono_ns":123456789012}"#) == 123_456_789_012)
        #expect(LatencyRecorder.captureNanoseconds(in: #"{"type":"heartbeat"}"#) == nil)
        #expect(LatencyRecorder.captureNanoseconds(in: "not json") == nil)
    }

    @Test func latencyOfLinesCapturedFortyMillisecondsBeforePublishing() throws {
        var template = Array("/tmp/wlat-XXXXXX".utf8CString)
        let directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/events.sock"
        let server = try EventServer(path: path, eventNames: ["blink"])
        server.start()
        defer { server.stop() }
        let client = try EventClient(path: path)
        try client.subscribe(events: ["blink"], coefficients: true)

        let clock = SystemClock()
        for frame in 0..<10 {
            let captured = clock.nanoseconds() - 40_000_000
            // As winkd sends them: a frame's coefficients, then its events.
            server.publish(
                coefficients: CoefficientsLine(frame: frame, time: 0, values: ["jawOpen": 0.1], tMonoNs: captured))
            server.publish(
                event: ExpressionEvent(
                    event: "blink", phase: .began, frame: frame, time: 0, value: 1,
                    tMonoNs: captured))
        }
        let recorder = LatencyRecorder()
        var written: [String] = []
        let code = try EventsCommand.relay(client, socket: path, limit: 10, latency: recorder) {
            written.append($0)
            return true
        }
        #expect(code == .ok)
        #expect(written.count == 1 + 20)  // hello, then 10 events and 10 coefficient lines
        let summary = recorder.summary()
        #expect(summary.hasPrefix("latency: lines=20 "), "\(summary)")
        let figures = summary.split(separator: " ").compactMap { part -> Double? in
            guard let eq = part.firstIndex(of: "="), part.hasPrefix("p") || part.hasPrefix("max") else { return nil }
            return Double(part[part.index(after: eq)...])
        }
        #expect(figures.count == 3)
        // p50, p99, max: at least the 40 ms between capture and publishing, and not seconds.
        #expect(figures.allSatisfy { $0 >= 40 && $0 < 1000 }, "\(summary)")
        #expect(figures[0] <= figures[1] && figures[1] <= figures[2])
    }
}
