import Capture
import Expressions
import FaceTracking
import Foundation
import Glibc
import Overlay
import WinkCore
import WinkDaemon

/// `winkctl analyze FILE`: the daemon's pipeline on a recording or image, as fast as possible, printing
/// the event lines (NDJSON) to stdout.
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
        try pipeline.run(source, buffer: buffer) { info, face in
            // The closing call (a face that had just gone) repeats the last frame: its events count, not it.
            if info.index != lastFrame {
                progress.frame(face: face != nil, events: 0)
                lastFrame = info.index
            }
            progress.frame(events: pipeline.engine.events.filter(\.isOccurrence).count)
            plot?.add(
                time: info.time, coefficients: pipeline.engine.faceInFrame ? pipeline.engine.coefficients : nil,
                events: pipeline.engine.events, traces: pipeline.engine.table.traces)
            if withCoefficients, let line = pipeline.coefficientsLine(info: info) {
                try out.write(try encoder.line(line))
            }
            if withMeasures, let face { try out.write(try encoder.line(measuresLine(info, face, pipeline))) }
            if withEyeFeatures, let face, let eyes = EyeStateFeatures.of(face.landmarks, in: buffer) {
                try out.write(try encoder.line(EyeFeaturesLine(frame: info.index, left: eyes.left, right: eyes.right)))
            }
            for event in pipeline.engine.events { try out.write(try encoder.line(event)) }
        }
        try out.flush()
        progress.warnIfDamaged(source)
        if let plot, let plotPath { try plot.plot(title: file).write(to: plotPath) }
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

/// Buffered stdout writer for NDJSON lines (one `write(2)` per 64 KiB or per flush).
///
/// A reader that goes away (`winkctl analyze clip.mp4 | head`) ends the program quietly with exit 0, as
/// a pipeline's producer does; any other write error (a full disk) throws `OutputError` (exit 74).
final class LineWriter {
    private var pending = Data()
    private let descriptor: Int32

    init(descriptor: Int32 = STDOUT_FILENO) { self.descriptor = descriptor }

    /// - Throws: `OutputError` when standard output cannot be written.
    func write(_ line: Data) throws {
        pending.append(line)
        if pending.count >= 65_536 { try flush() }
    }

    /// - Throws: `OutputError` when standard output cannot be written.
    func flush() throws {
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
