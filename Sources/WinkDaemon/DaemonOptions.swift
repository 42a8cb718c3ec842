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

    /// `winkd`'s command line, for `--help`, the man page and completions.
    public static let spec = CommandSpec(
        name: "winkd",
        summary: "watch a webcam (or play a recording) and publish face expression events on a Unix socket",
        options: [
            OptionSpec("--source", .file("DEVICE|FILE"),
                       "a V4L2 device (/dev/...) or a recording (video file or still image)",
                       default: "the first V4L2 capture device, by its /dev/v4l/by-id name"),
            OptionSpec("--socket", .file("PATH"), "the event socket",
                       default: "$WINK_SOCKET, else $XDG_RUNTIME_DIR/winkd/events.sock, else \(EventSocketPath.systemPath)"),
        ] + CommonOptions.specs + [
            OptionSpec("--pace", .choice(["realtime", "fast"]),
                       "a recording's frames at their own timestamps, or as fast as the pipeline goes", default: "realtime"),
            OptionSpec("--loop", "play a recording again and again (without it, clients get bye at its end)"),
            OptionSpec("--always-on", "keep the source open without clients (default: open only while someone listens)"),
            OptionSpec("--version", "print the version and exit"),
        ],
        details: "The source opens when the first client connects and closes 3 s after the last leaves. SIGHUP "
            + "reloads the configuration; SIGTERM and SIGINT say bye to every client and exit 0.")

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
