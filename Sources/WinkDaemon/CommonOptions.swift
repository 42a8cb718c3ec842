import FaceTracking
import Foundation
import WinkCore

/// Options shared by the commands that run the pipeline: `--config`, `--model`, `--mirrored`, `--profile`.
public struct CommonOptions {
    public var configuration: Configuration
    public var modelPath: String
    /// `--config FILE` as given (nil without it).
    public var configPath: String?
    /// `--eye-model FILE`: a retrained eye-state model to use instead of the built-in one (see `EyeStateModel`).
    public var eyeModelPath: String?

    public init(configuration: Configuration, modelPath: String) {
        self.configuration = configuration
        self.modelPath = modelPath
    }

    /// The options `init(_:)` reads, for the command's `CommandSpec` (without `--eye-model`, which only
    /// the offline commands take: `eyeModelSpec`).
    public static let specs: [OptionSpec] = [
        OptionSpec("--config", .file("FILE"), "configuration file (JSON: the analyzer table, thresholds, camera, overlay)",
                   default: "built-in defaults"),
        OptionSpec("--model", .file("FILE"), "dlib 68-point shape predictor",
                   default: "$WINK_MODEL, else \(ShapePredictor.debianModelPath)"),
        OptionSpec("--mirrored", "the source is a mirror image (a selfie view); left and right stay the person's own"),
        OptionSpec("--profile", .file("FILE"), "calibration profile (winkctl calibrate); replaces the configuration's",
                   default: "the configuration's profile, if any"),
    ]

    /// `--eye-model FILE`, for the commands that build a pipeline themselves (`makePipeline`).
    public static let eyeModelSpec = OptionSpec(
        "--eye-model", .file("FILE"), "an eye-state model retrained by Scripts/train_eye_model.py", default: "the built-in one")

    /// Reads `specs`' options, and `--eye-model` when the command declares it.
    /// - Throws: `UsageError` (64) for an option without its value, `Configuration.Invalid` (78).
    public init(_ args: inout Arguments) throws {
        let configPath = try args.option("--config")
        let model = try args.option("--model")
        let mirrored = args.flag("--mirrored")
        let profile = try args.option("--profile")
        if args.spec?.declares(Self.eyeModelSpec.name) ?? true { eyeModelPath = try args.option("--eye-model") }
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
    public func makePipeline() throws -> FramePipeline {
        if let eyeModelPath { try EyeStateModel.load(path: eyeModelPath) }
        let (personalised, prior) = try configuration.applyingProfile()
        // Through the verified binary cache in $XDG_CACHE_HOME/winkd (about 7x faster than dlib's loader).
        let predictor = try ShapePredictor(path: modelPath, cache: ModelCache.standard())
        return FramePipeline(configuration: personalised, predictor: predictor, prior: prior)
    }
}
