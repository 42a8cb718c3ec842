import Capture
import EventServer
import FaceTracking
import Foundation
import WinkCore

/// How a recorded file is paced.
public enum Pace: String, Sendable {
    /// Frames are released at their own timestamps, like a camera.
    case realtime
    /// As fast as the pipeline goes.
    case fast
}

/// `winkd`'s settings from its command line (SPEC.md "Programs").
public struct DaemonOptions: Sendable {
    /// A V4L2 device or a regular file; `nil` = the first V4L2 capture device.
    public var source: String?
    public var socketPath: String
    public var configuration: Configuration
    public var modelPath: String
    public var pace: Pace = .realtime
    public var loop = false
    public var alwaysOn = false
    /// `--mirrored` was given (kept over a reloaded configuration file).
    public var mirroredFlag = false
    /// Seconds the source stays open after the last client leaves.
    public var linger: Double = 3

    /// Options for tests and embedders.
    public init(source: String?, socketPath: String, configuration: Configuration = Configuration(),
                modelPath: String = ShapePredictor.debianModelPath) {
        self.source = source
        self.socketPath = socketPath
        self.configuration = configuration
        self.modelPath = modelPath
    }

    /// Parses `winkd [--source DEVICE|FILE] [--socket PATH] [--config FILE] [--model FILE] [--mirrored]
    /// [--pace realtime|fast] [--loop] [--always-on]`.
    /// - Throws: `UsageError` (64), `Configuration.Invalid` (78).
    public init(_ args: inout Arguments, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        var probe = args
        mirroredFlag = probe.flag("--mirrored")
        let common = try CommonOptions(&args)
        configuration = common.configuration
        modelPath = common.modelPath
        source = try args.option("--source")
        socketPath = try args.option("--socket") ?? EventSocketPath.default(environment: environment)
        if let p = try args.option("--pace") {
            guard let pace = Pace(rawValue: p) else { throw UsageError("--pace expects realtime or fast, got '\(p)'") }
            self.pace = pace
        }
        loop = args.flag("--loop")
        alwaysOn = args.flag("--always-on")
        try args.finish()
    }

    /// What `source` names: a camera or a recording.
    var sourceKind: SourceKind { SourceKind(source: source) }
}
