import Capture
import Expressions
import FaceTracking
import Foundation
import Glibc
import Overlay
import WinkCore
import WinkDaemon

/// `winkctl analyze FILE`: the daemon's pipeline on a recording or image, as fast as possible, printing
/// the event lines (NDJSON) to stdout. Lines reach stdout at least every `LineWriter.flushInterval`; a stop by
/// SIGINT, SIGTERM or SIGHUP ends the run after the frame under way, with every line of the frames analysed
/// written (exit 128 + the signal); a reader that goes away (`| head`) ends it with exit 0.
enum AnalyzeCommand {
    static let command = WinkctlMain.Command(
        spec: CommandSpec(
            name: "analyze",
            summary: "run the daemon's pipeline on a recording or image, as fast as possible; event lines on stdout",
            operands: [("FILE", "a video file or a still image")],
            options: CommonOptions.specs + [
                CommonOptions.eyeModelSpec,
                OptionSpec("--coefficients", "also print each frame's coefficient line (ARKit blend shapes, 0...1)"),
                OptionSpec("--measures", "also print each frame's raw measures as JSON lines (\"type\":\"measures\")"),
                OptionSpec(
                    "--eye-features", "also print each frame's eye-state features (for Scripts/train_eye_model.py)"),
                OptionSpec(
                    "--plot", .file("OUT.png"),
                    "draw each row's value, thresholds and events over time, with what held them back (minDuration, "
                    + "releaseDelay, cooldown, suppressedBy), into a PNG or JPEG"
                ),
                OptionSpec("--flip", "analyse the mirror image of the recording (a test variant)"),
            ] + TransformOptions.specs + [.quiet]),
        run: run)

    static func run(_ args: inout Arguments) throws -> ExitCode {
        let options = try CommonOptions(&args)
        let withCoefficients = args.flag("--coefficients")
        let withMeasures = args.flag("--measures")
        let withEyeFeatures = args.flag("--eye-features")
        let plotPath = try args.option("--plot")
        let quiet = args.flag("--quiet")
        let transform = try TransformOptions.parse(&args, flip: true)
        guard let file = args.positional() else { throw UsageError("analyze: which file? \(command.usage)") }
        try args.finish()
        if let plotPath, OverlayOutputKind(path: plotPath) != .image {
            throw UsageError("analyze: --plot writes a .png (or .jpg) image, got '\(plotPath)'")
        }
        // Before minutes of processing, not after (73: "no such directory ...").
        if let plotPath { try OutputFile.checkCreatable(plotPath) }
        // A photo analysed with --plot on its own name was replaced by the plot.
        if let plotPath {
            try refuseOverwriting(
                plotPath, command: "analyze", what: "the plot", option: "--plot",
                inputs: [("input", file), ("configuration", options.configPath),
                         ("profile", options.request.profilePath), ("eye model", options.eyeModelPath)])
        }

        let source = TransformOptions.apply(transform, to: try openMediaFile(path: file))
        let pipeline = try options.makePipeline()
        let out = LineWriter()
        let encoder = LineEncoder()
        let plot = plotPath.map { _ in AnalyzePlotRecorder(rows: pipeline.engine.table.rows) }
        let buffer = PixelBuffer()
        let progress = RunProgress(command: "analyze", quiet: quiet)
        progress.begin(file, expectedFrames: source.expectedFrameCount)
        var lastFrame = -1
        StopSignals.install()
        do {
            try pipeline.run(source, buffer: buffer) { info, face in
                // The closing call (a face that had just gone) repeats the last frame: its events count, not it.
                if info.index != lastFrame {
                    progress.frame(face: face != nil, events: 0)
                    lastFrame = info.index
                }
                // Every event line written counts (an `ended` too): the summary's figure is the lines above it.
                progress.frame(events: pipeline.engine.events.count)
                plot?.add(
                    time: info.time, coefficients: pipeline.engine.faceInFrame ? pipeline.engine.coefficients : nil,
                    events: pipeline.engine.events, traces: pipeline.engine.table.traces)
                if withCoefficients, let line = pipeline.coefficientsLine(info: info) {
                    try out.write(try encoder.line(line))
                }
                if withMeasures, let face { try out.write(try encoder.line(measuresLine(info, face, pipeline))) }
                if withEyeFeatures, let face, let eyes = EyeStateFeatures.of(face.landmarks, in: buffer) {
                    let line = EyeFeaturesLine(frame: info.index, left: eyes.left, right: eyes.right)
                    try out.write(try encoder.line(line))
                }
                for event in pipeline.engine.events { try out.write(try encoder.line(event)) }
                try out.flushIfDue()
                if let signal = StopSignals.caught { throw PendingOutput.Stopped(signal: signal) }
            }
            try out.flush()
            progress.warnIfDamaged(source)
            // A stop while the plot is written (held off until it is complete or removed) comes out here too.
            if let plot, let plotPath { try plot.plot(title: file).write(to: plotPath) }
        } catch let stopped as PendingOutput.Stopped {
            // Between frames, or while the plot was written: every line of the frames analysed is out; the
            // recording's rest is not read, and a plot not complete was not put in place.
            try out.flush()
            progress.clear()
            let plotNote = plotPath.map { "; no plot written, \($0) was left as it was" } ?? ""
            printError(
                "analyze: stopped by \(StopSignals.name(stopped.signal)) after frame \(lastFrame); "
                    + "the lines of the frames before were written\(plotNote)")
            exit(128 + stopped.signal)
        }
        progress.finish(extra: plotPath.map { "plot written to \($0)" })
        return .ok
    }

    /// The `measures` line of a frame with a face (see `MeasuresLine`).
    static func measuresLine(_ info: FrameInfo, _ face: FaceObservation, _ pipeline: FramePipeline) -> MeasuresLine {
        MeasuresLine(
            info: info, face: face, measures: pipeline.engine.measures,
            neutral: pipeline.engine.calibration.neutral)
    }
}

/// One line of `winkctl analyze --eye-features`: the eye-state model's inputs for each eye of a frame's face
/// (`EyeStateFeatures`), the person's own left and right, for training the model
/// (Scripts/train_eye_model.py).
struct EyeFeaturesLine: Encodable {
    var type = "eyeFeatures"
    var frame: Int
    var left: [Float]
    var right: [Float]
}

/// Buffered stdout writer for NDJSON lines: one `write(2)` per 64 KiB or per flush, and at least every
/// `flushInterval` when the writer calls `flushIfDue()` once a frame, so a reader of a pipe sees lines as they
/// come, not in 64 KiB bursts, and the writer finds out soon that nobody reads.
///
/// A reader that goes away (`winkctl analyze clip.mp4 | head`) ends the program quietly with exit 0, as
/// a pipeline's producer does; any other write error (a full disk) throws `OutputError` (exit 74).
/// Not thread-safe.
final class LineWriter {
    /// Longest time (seconds) a line waits in the buffer when `flushIfDue()` is called once a frame.
    static let flushInterval = 0.2
    private var pending = Data()
    private let descriptor: Int32
    private let clock = SystemClock()
    /// When the buffer was last written out (`clock`, nanoseconds).
    private var flushedAt = SystemClock().nanoseconds()

    init(descriptor: Int32 = STDOUT_FILENO) { self.descriptor = descriptor }

    /// - Throws: `OutputError` when standard output cannot be written.
    func write(_ line: Data) throws {
        pending.append(line)
        if pending.count >= 65_536 { try flush() }
    }

    /// Writes the buffer out if it holds lines and `flushInterval` has passed since the last write.
    /// - Throws: `OutputError` when standard output cannot be written.
    func flushIfDue() throws {
        if !pending.isEmpty, Double(clock.nanoseconds() - flushedAt) / 1e9 >= Self.flushInterval { try flush() }
    }

    /// - Throws: `OutputError` when standard output cannot be written.
    func flush() throws {
        flushedAt = clock.nanoseconds()
        guard !pending.isEmpty else { return }
        defer { pending.removeAll(keepingCapacity: true) }
        try pending.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                do throws(Errno) {
                    offset += try valueOrErrno(retryOnInterrupt: true) {
                        Glibc.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                    }
                } catch {
                    if error.code == EPIPE { exit(0) }  // the reader has what it wanted
                    throw OutputError(subject: "standard output", reason: error.message)
                }
            }
        }
    }
}

/// Output that could not be written (exit 74, `EX_IOERR`).
struct OutputError: ExitCodeError {
    var subject: String
    var reason: String
    var exitCode: ExitCode { .ioError }
    var description: String { "\(subject): \(reason)" }
}
