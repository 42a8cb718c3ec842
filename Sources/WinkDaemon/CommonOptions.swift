import FaceTracking
import Foundation
import WinkCore

/// What the command line asks of the configuration: `--config FILE`, `--profile FILE`, `--mirrored`, and
/// whether the default locations are searched (winkd and `winkctl config`; `Configuration.Location`).
/// Read again, the same way, at each SIGHUP reload.
public struct ConfigurationRequest: Sendable, Equatable {
    /// `--config FILE` as given: read instead of searching the default locations.
    public var configPath: String?
    /// `--profile FILE`, made absolute against the working directory: replaces the configuration's.
    public var profilePath: String?
    /// `--mirrored`: the source is mirrored whatever the file says.
    public var mirrored = false
    /// Where `config.json` and `profile.json` are looked for without `--config` / a profile; nil: nowhere
    /// (`winkctl analyze`, `evaluate`, `bench`: what they read is only what their flags name).
    public var location: Configuration.Location?

    /// A request; nil paths and no location read only the built-in defaults.
    public init(
        configPath: String? = nil, profilePath: String? = nil, mirrored: Bool = false,
        location: Configuration.Location? = nil
    ) {
        self.configPath = configPath
        self.profilePath = profilePath
        self.mirrored = mirrored
        self.location = location
    }

    /// The configuration file to read: `--config`, else the first default `config.json` present, else none.
    public var resolvedConfigPath: String? { configPath ?? location?.firstPresent("config.json") }

    /// The profile found at a default location, used when neither `--profile` nor the file names one.
    func defaultProfile(for configuration: Configuration) -> String? {
        guard profilePath == nil, configuration.profilePath == nil else { return nil }
        return location?.firstPresent("profile.json")
    }

    /// Reads the configuration file (`resolvedConfigPath`; the built-in defaults without one) and lays the
    /// flags and a default profile over it.
    /// - Throws: `Configuration.Missing` (66) for a `--config` file that does not exist (or a default one
    ///   removed meanwhile), `Configuration.Invalid` (78) naming the file and every problem.
    public func load() throws -> Configuration {
        var configuration = try resolvedConfigPath.map { try Configuration.load(path: $0) } ?? Configuration()
        if mirrored { configuration.mirrored = true }
        if let profilePath { configuration.profilePath = profilePath }
        if let found = defaultProfile(for: configuration) { configuration.profilePath = found }
        return configuration
    }
}

/// Options shared by the commands that run the pipeline: `--config`, `--model`, `--mirrored`, `--profile`.
public struct CommonOptions {
    /// The configuration in effect (the file, the flags and the profile laid over it).
    public var configuration: Configuration
    /// `--model FILE`: the 68-point dlib shape predictor.
    public var modelPath: String
    /// What the command line asked of the configuration (re-read on reload).
    public var request = ConfigurationRequest()
    /// `--config FILE` as given (nil without it).
    public var configPath: String? { request.configPath }
    /// `--eye-model FILE`: a retrained eye-state model to use instead of the built-in one (see `EyeStateModel`).
    public var eyeModelPath: String?

    /// Options for `configuration` and `modelPath`, with an empty request (tests, embedders).
    public init(configuration: Configuration, modelPath: String) {
        self.configuration = configuration
        self.modelPath = modelPath
    }

    /// The options `init(_:)` reads, for the command's `CommandSpec` (without `--eye-model`, which only
    /// the offline commands take: `eyeModelSpec`).
    public static let specs: [OptionSpec] = [
        OptionSpec(
            "--config", .file("FILE"), "configuration file (JSON: the analyzer table, thresholds, camera, overlay)",
            default: "built-in defaults (the default locations are winkd's, not read here)"),
        modelSpec,
        OptionSpec("--mirrored", "the source is a mirror image (a selfie view); left and right stay the person's own"),
        OptionSpec(
            "--profile", .file("FILE"), "calibration profile (winkctl calibrate); replaces the configuration's",
            default: "the configuration's profile, if any"),
    ]

    /// `specs` as winkd and `winkctl config` read them: without `--config`, the first `config.json` of the
    /// default locations, and `profile.json` beside it.
    public static let daemonSpecs: [OptionSpec] = specs.map { option in
        var option = option
        switch option.name {
        case "--config":
            option.defaultValue = "$XDG_CONFIG_HOME/winkd/config.json (else ~/.config/winkd/config.json), else "
                + "/etc/winkd/config.json, when present"
        case "--profile":
            option.defaultValue = "the configuration's profile, else profile.json beside a default config.json"
        default: break
        }
        return option
    }

    /// `--model FILE`: the dlib 68-point shape predictor (also `winkctl overlay`'s).
    public static let modelSpec = OptionSpec(
        "--model", .file("FILE"), "dlib 68-point shape predictor",
        default: "$WINK_MODEL, else \(ShapePredictor.debianModelPath)")

    /// `--eye-model FILE`, for the commands that build a pipeline themselves (`makePipeline`).
    public static let eyeModelSpec = OptionSpec(
        "--eye-model", .file("FILE"), "an eye-state model retrained by Scripts/train_eye_model.py",
        default: "the built-in one")

    /// Parses the shared flags and reads the configuration.
    /// - Parameter location: the default locations to search without `--config` (winkd, `winkctl config`);
    ///   nil reads only what the flags name.
    /// - Throws: `UsageError` (64) for a flag without a value; as `ConfigurationRequest.load()`.
    public init(_ args: inout Arguments, location: Configuration.Location? = nil) throws {
        request.configPath = try args.option("--config")
        let model = try args.option("--model")
        request.mirrored = args.flag("--mirrored")
        // A profile on the command line replaces the configuration's; relative to the working directory.
        // Not by a command that records one (calibrate): there it is an unknown option, not silently ignored.
        if args.spec?.declares("--profile") ?? true {
            request.profilePath = try args.option("--profile").map { URL(fileURLWithPath: $0).path }
        }
        request.location = location
        if args.spec?.declares(Self.eyeModelSpec.name) ?? true { eyeModelPath = try args.option("--eye-model") }
        configuration = try request.load()
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
