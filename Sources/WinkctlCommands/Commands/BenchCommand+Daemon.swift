import EventServer
import Foundation
import WinkCore
import WinkDaemon

/// `winkctl bench FILE --daemon WINKD`: the daemon itself, as its clients see it.
///
/// Starts `WINKD --source FILE --pace realtime --loop` on a temporary socket (plus `--config` and
/// `--model` when given), then measures:
/// - **start-up**: milliseconds from `exec` until the socket accepts a connection, and from that first
///   connection (subscribed to coefficients) until the first frame's line arrives;
/// - **latency**: for every event and coefficient line any of `--clients N` subscribed clients receives
///   during the window, receipt time minus the line's `t_mono_ns` (both `CLOCK_MONOTONIC`), p50/p99/max;
/// - **CPU**: the daemon's user+system time over the window (`/proc/PID/stat`, utime+stime) as a
///   percentage of one core, with the frame rate the first client saw;
/// - **memory**: `VmHWM` (peak RSS) and `VmRSS` from `/proc/PID/status` at the end of the window.
/// The window opens 2 s after the last client connected and lasts `--seconds S` (default 20).
/// Linux only (procfs). Each client reads on its own thread, so 64 clients cost the bench 64 threads.
extension BenchCommand {
    /// What `--daemon` measured; `bench --daemon --json` prints it as `daemon`.
    struct DaemonReport: Encodable {
        var clients: Int
        var seconds: Double
        var acceptMs: Double
        var firstLineMs: Double
        var framesPerSecond: Double
        var latencyLines: Int
        var latencyP50Ms: Double
        var latencyP99Ms: Double
        var latencyMaxMs: Double
        var cpuPercent: Double
        var peakRssMB: Double
        var rssMB: Double
        var linesPerClient: [Int]

        /// The report as `bench --daemon` prints it.
        var text: String {
            var text = String(
                format:
                    "daemon start-up: socket accepting %.0f ms after exec; first frame line %.0f ms after the first "
                    + "connection\n",
                acceptMs, firstLineMs)
            text += String(
                format: "daemon window: %.0f s, %d client(s), %.1f frames/s seen by client 1\n", seconds, clients,
                framesPerSecond)
            text += String(
                format: "daemon latency (capture to line received): lines=%d p50=%.2f ms p99=%.2f ms max=%.2f ms\n",
                latencyLines, latencyP50Ms, latencyP99Ms, latencyMaxMs)
            text += String(format: "daemon CPU: %.1f%% of one core\n", cpuPercent)
            text += String(
                format: "daemon memory: peak RSS (VmHWM) %.1f MB, RSS at the end %.1f MB\n", peakRssMB, rssMB)
            let low = linesPerClient.min() ?? 0, high = linesPerClient.max() ?? 0
            text += "daemon lines per client in the window: \(low)...\(high)\n"
            return text
        }
    }

    static func runDaemon(
        _ winkd: String, file: String, clients: Int, seconds: Double, config: String?,
        model: String?
    ) throws -> DaemonReport {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socket = directory + "/events.sock"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: winkd)
        var arguments = ["--source", file, "--socket", socket, "--pace", "realtime", "--loop"]
        if let config { arguments += ["--config", config] }
        if let model { arguments += ["--model", model] }
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice  // its connect/disconnect log lines, one per client
        let clock = SystemClock()
        let started = clock.nanoseconds()
        do { try process.run() } catch {
            throw UsageError("bench: cannot run \(winkd): \(error.localizedDescription)")
        }
        defer {
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
            }
        }

        // Start-up: the socket, then the first frame's line.
        var first: EventClient?
        while first == nil {
            first = try? EventClient(path: socket, timeout: 2)
            if first == nil {
                guard process.isRunning else {
                    throw BenchError(
                        description: "\(winkd) exited \(process.terminationStatus) before accepting on its socket")
                }
                guard Double(clock.nanoseconds() - started) / 1e9 < 10 else {
                    throw BenchError(description: "\(winkd) did not accept on \(socket) within 10 s")
                }
                usleep(2000)
            }
        }
        let accepted = clock.nanoseconds()
        let firstClient = first!
        try firstClient.subscribe(events: firstClient.hello.events, coefficients: true)
        var firstLine: UInt64?
        while firstLine == nil, let line = try firstClient.nextLine(timeout: 10) {
            let type = EventClient.type(of: line)
            if type == "event" || type == "coefficients" { firstLine = clock.nanoseconds() }
            if type == "bye" { break }
        }
        guard let firstLine else { throw BenchError(description: "\(winkd) sent no frame line within 10 s") }

        // Fan-out: every client reads on its own thread and records latencies inside the window.
        var connections = [firstClient]
        for _ in 1..<max(1, clients) {
            let client = try EventClient(path: socket)
            try client.subscribe(events: client.hello.events, coefficients: true)
            connections.append(client)
        }
        let windowStart = clock.nanoseconds() + 2_000_000_000
        let windowEnd = windowStart + UInt64(seconds * 1e9)
        let readers = connections.map { LatencyReader(client: $0, window: windowStart...windowEnd) }

        usleep(useconds_t(max(0, Int64(windowStart) - Int64(clock.nanoseconds())) / 1000))
        let cpuStart = try processorSeconds(pid: process.processIdentifier)
        usleep(useconds_t(max(0, Int64(windowEnd) - Int64(clock.nanoseconds())) / 1000))
        let cpuEnd = try processorSeconds(pid: process.processIdentifier)
        let memory = try memoryMB(pid: process.processIdentifier)
        process.terminate()
        process.waitUntilExit()

        var latency = SampleStats(capacity: 65536)
        var delivered: [Int] = []
        var firstFrames = 0
        for (index, reader) in readers.enumerated() {
            let result = reader.finish()
            for value in result.latencies { latency.add(value) }
            delivered.append(result.lines)
            if index == 0 { firstFrames = result.coefficientLines }
        }
        return DaemonReport(
            clients: clients, seconds: seconds, acceptMs: Double(accepted - started) / 1e6,
            firstLineMs: Double(firstLine - accepted) / 1e6, framesPerSecond: Double(firstFrames) / seconds,
            latencyLines: latency.count, latencyP50Ms: latency.percentile(50), latencyP99Ms: latency.percentile(99),
            latencyMaxMs: latency.maximum, cpuPercent: (cpuEnd - cpuStart) / seconds * 100, peakRssMB: memory.peak,
            rssMB: memory.current, linesPerClient: delivered)
    }

    /// utime + stime of `pid` in seconds (`/proc/PID/stat` fields 14 and 15, proc(5)).
    static func processorSeconds(pid: Int32) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // The command name (field 2) may hold spaces and parentheses: count fields after the last ')'.
        guard let close = stat.lastIndex(of: ")") else {
            throw BenchError(description: "/proc/\(pid)/stat: unexpected format")
        }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state), so utime (14) and stime (15) are fields[11] and fields[12].
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
            throw BenchError(description: "/proc/\(pid)/stat: unexpected format")
        }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// VmHWM and VmRSS of `pid` in MB (`/proc/PID/status`, kB values).
    static func memoryMB(pid: Int32) throws -> (peak: Double, current: Double) {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        func value(_ key: String) -> Double {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(key + ":") }) else { return 0 }
            return Double(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
        }
        return (value("VmHWM") / 1024, value("VmRSS") / 1024)
    }

    /// Reads one client's lines on its own thread until the connection ends, keeping the latency of each
    /// event and coefficient line received inside `window` (monotonic nanoseconds).
    final class LatencyReader: @unchecked Sendable {
        struct Result {
            var latencies: [Double]
            var lines: Int
            var coefficientLines: Int
        }
        private let done = DispatchSemaphore(value: 0)
        private var result = Result(latencies: [], lines: 0, coefficientLines: 0)

        init(client: EventClient, window: ClosedRange<UInt64>) {
            result.latencies.reserveCapacity(4096)
            Thread.detachNewThread { [self] in
                let clock = SystemClock()
                while let line = try? client.nextLine(timeout: 15) {
                    let now = clock.nanoseconds()
                    guard window.contains(now) else {
                        if now > window.upperBound { break }
                        continue
                    }
                    let type = EventClient.type(of: line)
                    guard type == "event" || type == "coefficients",
                        let captured = Self.captureNanoseconds(in: line)
                    else { continue }
                    result.latencies.append((Double(now) - Double(captured)) / 1e6)
                    result.lines += 1
                    if type == "coefficients" { result.coefficientLines += 1 }
                }
                client.close()
                done.signal()
            }
        }

        /// The digits after `"t_mono_ns":` in a line winkd wrote (a plain scan: decoding JSON for each of
        /// 64 clients' lines would take the bench's CPU from the daemon it measures).
        static func captureNanoseconds(in line: String) -> UInt64? {
            let key = Array("\"t_mono_ns\":".utf8)
            var utf8 = Array(line.utf8)
            return utf8.withUnsafeMutableBufferPointer { bytes -> UInt64? in
                guard bytes.count > key.count else { return nil }
                var i = 0
                while i + key.count < bytes.count {
                    if bytes[i] == key[0] && Array(bytes[i..<(i + key.count)]) == key {
                        var j = i + key.count
                        var value: UInt64 = 0
                        var digits = 0
                        while j < bytes.count, bytes[j] >= 48, bytes[j] <= 57 {
                            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
                            let (sum, o2) = times10.addingReportingOverflow(UInt64(bytes[j] - 48))
                            if o1 || o2 { return nil }
                            value = sum
                            j += 1
                            digits += 1
                        }
                        return digits > 0 ? value : nil
                    }
                    i += 1
                }
                return nil
            }
        }

        func finish() -> Result {
            done.wait()
            return result
        }
    }
}
