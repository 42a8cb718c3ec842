import Capture
import EventServer
import FaceTracking
import Foundation
import WinkCore
import WinkDaemon

/// `winkctl bench FILE`: the daemon's per-frame work on a recording, timed per stage.
///
/// Each of `--repeat N` passes decodes the file and runs every frame through the pipeline, then
/// publishes its event and coefficient lines to an in-process `EventServer` on a temporary socket with
/// `--clients N` connected clients (subscribed to everything, each read by its own thread). Prints to
/// stdout: the model load (seconds, from the cache or the file), frames/s for decode+process and for
/// process only (tracking + expressions + socket), mean and p99 ms per stage, detector calls per 100
/// frames, peak RSS (getrusage `ru_maxrss`, KiB on Linux), and lines delivered to the clients.
/// `--reference BIN` runs `BIN FILE --repeat N` (../shared/tools/dlib_ref.cpp) after each of `--rounds R`
/// runs of ours and prints both ratios (ours over its `fps_total`, decode+process, and over its
/// `fps_process`, process only), then their medians over the rounds: alternating keeps a busy machine's
/// drift out of the comparison. `--daemon WINKD` measures the daemon process instead (see
/// `runDaemon`). Debug builds print a warning banner: their figures mean nothing.
enum BenchCommand {
    static let command = WinkctlMain.Command(
        spec: CommandSpec(
            name: "bench",
            summary: "measure the pipeline's speed and memory on a recording (or a running daemon's, with --daemon)",
            operands: [("FILE", "a video file")],
            options: [
                OptionSpec("--repeat", .text("N"), "passes over the file per round, 1...1000", default: "1"),
                OptionSpec("--rounds", .text("N"), "rounds, alternating with --reference, 1...50", default: "1"),
                OptionSpec("--clients", .text("N"), "socket clients receiving the lines, 0...64", default: "1"),
                OptionSpec(
                    "--reference", .file("BIN"), "the raw dlib pipeline to compare with (dlib_ref.cpp)"),
                OptionSpec(
                    "--daemon", .file("WINKD"),
                    "measure this winkd binary as a process instead (start-up, latency, CPU, RSS)"),
                OptionSpec("--seconds", .text("S"), "how long --daemon measures, 1...3600", default: "20"),
                OptionSpec(
                    "--model-cache", .directory("DIR"), "the model cache directory", default: "$XDG_CACHE_HOME/winkd"),
                OptionSpec("--no-model-cache", "load the model with dlib's own loader"),
                OptionSpec("--json", "print one JSON document (BenchCommand.Report) instead of the text report"),
                .quiet,
            ] + CommonOptions.specs),
        run: run)

    /// Per-stage samples (milliseconds per frame).
    struct Stages {
        var decode = SampleStats(capacity: 4096)
        var tracking = SampleStats(capacity: 4096)
        var detection = SampleStats(capacity: 4096)
        var landmarks = SampleStats(capacity: 4096)
        var measures = SampleStats(capacity: 4096)
        var expressions = SampleStats(capacity: 4096)
        var socket = SampleStats(capacity: 4096)
    }

    static func run(_ args: inout Arguments) throws -> ExitCode {
        let options = try CommonOptions(&args)
        let repeats = try args.number("--repeat", in: 1...1000) ?? 1
        let clientCount = try args.number("--clients", in: 0...64) ?? 1
        let reference = try args.option("--reference")
        if let reference, !FileManager.default.isExecutableFile(atPath: reference) {
            // Before the run, not after minutes of benchmarking.
            throw UsageError(
                "bench: --reference \(reference): not an executable file (build it: see ../shared/tools/README.md)")
        }
        let rounds = try args.number("--rounds", in: 1...50) ?? 1
        let daemon = try args.option("--daemon")
        let seconds = try args.number("--seconds", in: 1...3600) ?? 20
        if let daemon, !FileManager.default.isExecutableFile(atPath: daemon) {
            throw UsageError(
                "bench: --daemon \(daemon): not an executable file (swift build -c release; .build/release/winkd)")
        }
        let cacheDirectory = try args.option("--model-cache")
        let noCache = args.flag("--no-model-cache")
        let json = args.flag("--json")
        let quiet = args.flag("--quiet")
        guard let file = args.positional() else { throw UsageError("bench: which file? \(command.usage)") }
        try args.finish()

        #if DEBUG
            let banner = String(repeating: "!", count: 72)
            writeAll(
                "\(banner)\n!! DEBUG BUILD: these figures are meaningless. Use swift build -c release.\n\(banner)\n",
                to: STDERR_FILENO)
        #endif

        // A file that is missing or not a video is one line (66, 65) before anything else: not after the model
        // has loaded and "model load: ..." has been printed as if a report had begun.
        try openMediaFile(path: file).close()

        if let daemon {
            let report = try runDaemon(
                daemon, file: file, clients: clientCount, seconds: Double(seconds),
                config: options.configPath, model: options.modelPath)
            if json {
                try printJSON(
                    Report(
                        file: file, build: BenchReport.build,
                        daemon: report))
            } else {
                print("bench \(file) through \(daemon), paced in real time, looped:")
                print(report.text, terminator: "")
            }
            return .ok
        }

        let cache = noCache ? nil : cacheDirectory.map(ModelCache.init(directory:)) ?? ModelCache.standard()
        let loadStart = SystemClock().nanoseconds()
        let (predictor, outcome) = try ShapePredictor.load(path: options.modelPath, cache: cache)
        let loadSeconds = Double(SystemClock().nanoseconds() - loadStart) / 1e9
        let pipeline = FramePipeline(configuration: options.configuration, predictor: predictor)
        var report = Report(file: file, build: BenchReport.build)
        report.modelLoadSeconds = loadSeconds
        report.modelCache = describe(outcome)
        let say: (String) -> Void = { if !json { print($0) } }
        say(String(format: "model load: %.3f s (%@)", loadSeconds, describe(outcome)))
        let progress = RunProgress(command: "bench", quiet: quiet || json)

        // Rounds: ours then the reference's, one after the other, so both meet the same machine load.
        var ratios: [(total: Double, process: Double)] = []
        for round in 1...rounds {
            var figures = try measure(
                pipeline: pipeline, file: file, repeats: repeats, clients: clientCount,
                eventNames: [EventName.faceFound, EventName.faceLost] + options.configuration.analyzers.map(\.event),
                progress: progress, sayDamage: round == 1)
            progress.clear()
            if rounds > 1 { say("round \(round):") }
            if !json { print(figures.text(file: file), terminator: "") }
            if let reference {
                let ref = try runReference(reference, file: file, repeats: repeats, modelPath: options.modelPath)
                say("reference: \(ref.line)")
                if let refTotal = ref.fpsTotal, let refProcess = ref.fpsProcess {
                    let ratio = Ratio(total: figures.fps.total / refTotal, process: figures.fps.process / refProcess)
                    ratios.append((ratio.total, ratio.process))
                    figures.reference = Ratio(total: refTotal, process: refProcess)
                    figures.ratio = ratio
                    say(
                        String(
                            format: "ratio winkd/dlib_ref: decode+process %.2f, process only %.2f",
                            ratio.total, ratio.process))
                }
            }
            report.rounds.append(figures)
        }
        if ratios.count > 1 {
            func median(_ values: [Double]) -> Double {
                let v = values.sorted()
                return v.count % 2 == 1 ? v[v.count / 2] : (v[v.count / 2 - 1] + v[v.count / 2]) / 2
            }
            report.medianRatio = Ratio(total: median(ratios.map(\.total)), process: median(ratios.map(\.process)))
            say(
                String(
                    format:
                        "median ratio over %d rounds: decode+process %.2f (%.2f-%.2f), process only %.2f (%.2f-%.2f)",
                    ratios.count, median(ratios.map(\.total)), ratios.map(\.total).min()!, ratios.map(\.total).max()!,
                    median(ratios.map(\.process)), ratios.map(\.process).min()!, ratios.map(\.process).max()!))
        }
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        report.peakRssMB = Double(usage.ru_maxrss) / 1024
        say(String(format: "peak RSS: %.1f MB", Double(usage.ru_maxrss) / 1024))
        if json { try printJSON(report) }
        progress.finish()
        return .ok
    }

    /// `bench --json`'s document: the file and build, then either the in-process rounds (model load, each
    /// round's figures, the reference's and the ratios) or `daemon` (with `--daemon`). Rates in frames per
    /// second, times in milliseconds unless named seconds, memory in MB.
    struct Report: Encodable {
        var file: String
        var build: String
        var modelLoadSeconds: Double?
        var modelCache: String?
        var rounds: [RoundJSON] = []
        var medianRatio: Ratio?
        var peakRssMB: Double?
        var daemon: DaemonReport?
    }

    /// Decode+process and process-only figures (frames per second, or ours over the reference's).
    struct Ratio: Encodable {
        var total: Double
        var process: Double
    }

    /// One round of `bench --json`.
    struct RoundJSON: Encodable {
        struct Stage: Encodable {
            var name: String
            var meanMs: Double
            var p99Ms: Double
        }
        var frames: Int
        var repeats: Int
        var clients: Int
        var fps: Ratio
        var stages: [Stage]
        var detectionsPer100Frames: Double
        var linesPublished: Int
        var receivedPerClient: [Int]
        var reference: Ratio?
        var ratio: Ratio?

        /// The parts of `tracking`, indented under it in the text report.
        static let trackingParts: Set<String> = ["detection", "landmarks", "eye/pose"]

        /// The round as `bench` prints it (the reference's line and the ratio follow it).
        func text(file: String) -> String {
            var text = BenchReport(file: file, frames: frames, repeats: repeats, clients: clients).header
            text += String(format: "fps: decode+process %.1f, process only %.1f\n", fps.total, fps.process)
            text += "stage            mean ms   p99 ms\n"
            for stage in stages {
                let name = (Self.trackingParts.contains(stage.name) ? "  " : "") + stage.name
                text +=
                    name.padding(toLength: 14, withPad: " ", startingAt: 0)
                    + String(format: " %9.3f %8.3f\n", stage.meanMs, stage.p99Ms)
            }
            text += String(format: "detections per 100 frames: %.1f\n", detectionsPer100Frames)
            text += "lines published: \(linesPublished); "
                + (receivedPerClient.isEmpty
                    ? "no client (--clients 0)"
                    : "received per client: " + receivedPerClient.map(String.init).joined(separator: ","))
                + "\n"
            return text
        }
    }

    static func printJSON(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// One timed run of `repeats` passes over `file` through `pipeline`, publishing to `clients` readers:
    /// the round's figures (without the reference's, which the caller adds). With `sayDamage`, a damaged
    /// recording is said on stderr after the first pass (`RunProgress.warnIfDamaged`).
    static func measure(
        pipeline: FramePipeline, file: String, repeats: Int, clients clientCount: Int,
        eventNames: [String], progress: RunProgress? = nil, sayDamage: Bool = true
    ) throws -> RoundJSON {
        // The fan-out: an in-process server on a temporary socket with N reading clients.
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try EventServer(
            path: directory + "/events.sock", eventNames: eventNames,
            options: EventServer.Options(maximumClients: 64, queueCapacity: 4096))
        server.start()
        let readers = try (0..<clientCount).map { _ in try Reader(path: directory + "/events.sock") }

        var stages = Stages()
        let clock = SystemClock()
        var frames = 0
        var lines = 0
        let detectionsBefore = pipeline.tracker.detections
        for pass in 0..<repeats {
            let source = try openMediaFile(path: file)
            progress?.begin("\(file) pass \(pass + 1)/\(repeats)", expectedFrames: source.expectedFrameCount)
            let buffer = PixelBuffer()
            pipeline.tracker.reset()
            while true {
                let t0 = clock.nanoseconds()
                guard let info = try source.read(into: buffer) else { break }
                let t1 = clock.nanoseconds()
                let face = try pipeline.tracker.process(buffer)
                let t2 = clock.nanoseconds()
                pipeline.engine.process(frame: info, face: face, instant: false)
                let t3 = clock.nanoseconds()
                if let line = pipeline.coefficientsLine(info: info) {
                    server.publish(coefficients: line)
                    lines += 1
                }
                for event in pipeline.engine.events {
                    server.publish(event: event)
                    lines += 1
                }
                let t4 = clock.nanoseconds()
                try pipeline.tracker.completeFrame()  // as the daemon does once the lines are out
                let t5 = clock.nanoseconds()
                stages.decode.add(Double(t1 - t0) / 1e6)
                stages.tracking.add(Double(t2 - t1 + t5 - t4) / 1e6)
                let split = pipeline.tracker.timings
                stages.detection.add(split.detection * 1e3)
                stages.landmarks.add(split.landmarks * 1e3)
                stages.measures.add(split.measures * 1e3)
                stages.expressions.add(Double(t3 - t2) / 1e6)
                stages.socket.add(Double(t4 - t3) / 1e6)
                frames += 1
                progress?.frame(face: face != nil, events: pipeline.engine.events.filter(\.isOccurrence).count)
            }
            // A damaged recording is said once, as analyze says it; its decoded frames are still timed.
            if pass == 0 && sayDamage { progress?.warnIfDamaged(source) }
        }
        let detections = pipeline.tracker.detections - detectionsBefore
        server.stop(reason: "bench finished")
        let delivered = readers.map { $0.finish() }

        let processMs = stages.tracking.total + stages.expressions.total + stages.socket.total
        let totalMs = processMs + stages.decode.total
        var stageFigures: [RoundJSON.Stage] = []
        for (name, var s) in [
            ("decode", stages.decode), ("tracking", stages.tracking), ("detection", stages.detection),
            ("landmarks", stages.landmarks), ("eye/pose", stages.measures),
            ("expressions", stages.expressions), ("encode+socket", stages.socket),
        ] {
            stageFigures.append(.init(name: name, meanMs: s.mean, p99Ms: s.percentile(99)))
        }
        return RoundJSON(
            frames: frames, repeats: repeats, clients: clientCount,
            fps: Ratio(total: Double(frames) / (totalMs / 1000), process: Double(frames) / (processMs / 1000)),
            stages: stageFigures, detectionsPer100Frames: Double(detections) * 100 / Double(max(1, frames)),
            linesPublished: lines, receivedPerClient: delivered)
    }

    /// A fresh private directory for a bench socket (mkdtemp(3) under /tmp); the caller removes it.
    /// - Throws: `BenchError` (70) when /tmp refuses it.
    static func temporaryDirectory() throws -> String {
        var template = Array("/tmp/winkbench-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw BenchError(description: "cannot create a directory in /tmp: \(String(cString: strerror(errno)))")
        }
        return String(cString: made)
    }

    static func describe(_ outcome: ModelCache.Outcome?) -> String {
        switch outcome {
        case nil: "model file, no cache"
        case .hit: "from cache"
        case .built(let reason): "model file, cache built: \(reason)"
        case .notWritten(let reason): "model file, cache not written: \(reason)"
        }
    }

    /// Runs the reference binary and returns its output line and its `fps_total=` and `fps_process=` figures.
    static func runReference(_ binary: String, file: String, repeats: Int, modelPath: String) throws
        -> (line: String, fpsTotal: Double?, fpsProcess: Double?)
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = [file, "--repeat", String(repeats), "--model", modelPath]
        let pipe = Pipe()
        process.standardOutput = pipe
        do { try process.run() } catch {
            throw UsageError("bench: cannot run the reference \(binary): \(error.localizedDescription)")
        }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let line = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard process.terminationStatus == 0, !line.isEmpty else {
            throw BenchError(
                description: "\(binary): the reference exited \(process.terminationStatus) without a result line")
        }
        func value(_ key: String) -> Double? {
            line.split(separator: " ").first { $0.hasPrefix(key + "=") }.flatMap { Double($0.dropFirst(key.count + 1)) }
        }
        return (line, value("fps_total"), value("fps_process"))
    }

    /// A client that reads every line on its own thread until the connection ends, counting them.
    final class Reader: @unchecked Sendable {
        private let client: EventClient
        private let done = DispatchSemaphore(value: 0)
        private var count = 0

        init(path: String) throws {
            client = try EventClient(path: path)
            try client.subscribe(events: client.hello.events, coefficients: true)
            Thread.detachNewThread { [self] in
                while let line = try? client.nextLine() {
                    if EventClient.type(of: line) != "bye" { count += 1 }
                }
                done.signal()
            }
        }

        /// Waits for the connection to end; the number of lines read (after the subscription's reply).
        func finish() -> Int {
            done.wait()
            client.close()
            return count
        }
    }
}

/// The first lines of the bench output.
struct BenchReport {
    var file: String, frames: Int, repeats: Int, clients: Int
    /// "debug" or "release": how this winkctl was built (a debug build's figures mean nothing).
    static var build: String {
        #if DEBUG
            return "debug"
        #else
            return "release"
        #endif
    }
    var header: String {
        let build = Self.build
        return "bench \(file): \(frames) frames (\(repeats) passes), \(clients) client(s), \(build) build\n"
    }
}

/// The reference benchmark failed to produce its line. Exit 70.
struct BenchError: ExitCodeError {
    var description: String
    var exitCode: ExitCode { .software }
}
