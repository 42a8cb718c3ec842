import Capture
import Expressions
import FaceTracking
import Foundation
import Overlay
import WinkCore

/// `winkctl analyze FILE`: the daemon's pipeline on a recording or image, as fast as possible, printing
/// the event lines (NDJSON) to stdout.
enum AnalyzeCommand {
    static let command = WinkctlMain.Command(
        synopsis: "analyze FILE [--config FILE] [--model FILE] [--profile FILE] [--mirrored] [--coefficients] "
            + "[--measures] [--plot OUT.png] "
            + "[--flip] [--rotate DEG] [--scale S] [--gain G] [--noise SIGMA]",
        run: run)

    static func run(_ args: inout Arguments) throws -> ExitCode {
        let options = try CommonOptions(&args)
        let withCoefficients = args.flag("--coefficients")
        let withMeasures = args.flag("--measures")
        let plotPath = try args.option("--plot")
        var transform = FrameTransform()
        transform.flip = args.flag("--flip")
        transform.degrees = try args.number("--rotate", in: -180.0...180.0) ?? 0
        transform.scale = try args.number("--scale", in: 0.05...4.0) ?? 1
        transform.gain = try args.number("--gain", in: 0.0...4.0) ?? 1
        transform.noise = try args.number("--noise", in: 0.0...64.0) ?? 0
        transform.resizeFrame = transform.degrees == 0
        guard let file = args.positional() else { throw UsageError("analyze: which file? usage: winkctl \(command.synopsis)") }
        try args.finish()
        if let plotPath, OverlayOutputKind(path: plotPath) != .image {
            throw UsageError("analyze: --plot writes a .png (or .jpg) image, got '\(plotPath)'")
        }

        var source = try openMediaFile(path: file)
        if transform != FrameTransform(resizeFrame: transform.resizeFrame) { source = TransformedSource(source, transform) }
        let pipeline = try options.makePipeline()
        let out = LineWriter()
        let encoder = LineEncoder()
        let plot = plotPath.map { _ in AnalyzePlotRecorder(rows: pipeline.engine.table.rows) }
        try pipeline.run(source) { info, face in
            plot?.add(time: info.time, coefficients: pipeline.engine.facePresent ? pipeline.engine.coefficients : nil,
                      events: pipeline.engine.events)
            if withCoefficients, let line = pipeline.coefficientsLine(info: info) { out.write(try encoder.line(line)) }
            if withMeasures, let face { out.write(Data((measuresLine(info, face, pipeline) + "\n").utf8)) }
            for event in pipeline.engine.events { out.write(try encoder.line(event)) }
        }
        out.flush()
        if let plot, let plotPath { try plot.plot(title: file).write(to: plotPath) }
        return .ok
    }

    /// A tab-separated line of the raw measures, for tuning thresholds.
    static func measuresLine(_ info: FrameInfo, _ face: FaceObservation, _ pipeline: FramePipeline) -> String {
        let m = pipeline.engine.measures
        let n = pipeline.engine.calibration.neutral
        let c = pipeline.engine.coefficients
        func f(_ x: Float) -> String { String(format: "%.3f", x) }
        return "# \(info.index) t=\(String(format: "%.3f", info.time)) earL=\(f(m.eyeAspectLeft)) earR=\(f(m.eyeAspectRight)) "
            + "irisL=\(f(m.irisLeft)) irisR=\(f(m.irisRight)) jaw=\(f(m.jawDrop)) gap=\(f(m.lipGap)) "
            + "width=\(f(m.mouthWidth)) liftL=\(f(m.cornerLiftLeft)) liftR=\(f(m.cornerLiftRight)) "
            + "brow=\(f(m.innerBrowHeight)) | nEarL=\(f(n.eyeAspectLeft)) nIrisL=\(f(n.irisLeft)) nW=\(f(n.mouthWidth)) "
            + "| bL=\(f(c[.eyeBlinkLeft])) bR=\(f(c[.eyeBlinkRight])) jaw=\(f(c[.jawOpen])) "
            + "smL=\(f(c[.mouthSmileLeft])) smR=\(f(c[.mouthSmileRight])) | yaw=\(f(face.pose.yaw)) "
            + "pitch=\(f(face.pose.pitch)) roll=\(f(face.pose.roll)) iod=\(f(face.quality.interocularPixels)) "
            + "bright=\(f(face.quality.medianBrightness))"
    }
}

/// Options shared by the commands that run the pipeline: `--config`, `--model`, `--mirrored`, `--profile`.
struct CommonOptions {
    var configuration: Configuration
    var modelPath: String
    /// `--config FILE` as given (nil without it).
    var configPath: String?

    init(configuration: Configuration, modelPath: String) {
        self.configuration = configuration
        self.modelPath = modelPath
    }

    init(_ args: inout Arguments) throws {
        let configPath = try args.option("--config")
        let model = try args.option("--model")
        let mirrored = args.flag("--mirrored")
        let profile = try args.option("--profile")
        self.configPath = configPath
        configuration = try configPath.map { try Configuration.load(path: $0) } ?? Configuration()
        if mirrored { configuration.mirrored = true }
        // A profile on the command line replaces the configuration's; relative to the working directory.
        if let profile { configuration.profilePath = URL(fileURLWithPath: profile).path }
        modelPath = model ?? ProcessInfo.processInfo.environment["WINK_MODEL"] ?? ShapePredictor.debianModelPath
    }

    /// Loads the calibration profile and the model (both checked before any frame is read) and builds the
    /// pipeline.
    /// - Throws: `CalibrationProfileError` (66 missing, 78 corrupt) for the profile, `FaceTrackingError`
    ///   (exit 78) for a bad model.
    func makePipeline() throws -> FramePipeline {
        let (personalised, prior) = try configuration.applyingProfile()
        // Through the verified binary cache in $XDG_CACHE_HOME/winkd (about 7x faster than dlib's loader).
        let predictor = try ShapePredictor(path: modelPath, cache: ModelCache.standard())
        return FramePipeline(configuration: personalised, predictor: predictor, prior: prior)
    }
}

/// Buffered stdout writer for NDJSON lines (one `write(2)` per 64 KiB or per flush).
final class LineWriter {
    private var pending = Data()
    private let handle = FileHandle.standardOutput

    func write(_ line: Data) {
        pending.append(line)
        if pending.count >= 65_536 { flush() }
    }

    func flush() {
        guard !pending.isEmpty else { return }
        handle.write(pending)
        pending.removeAll(keepingCapacity: true)
    }
}
