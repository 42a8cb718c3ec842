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
    /// The event socket's path (`--socket`).
    public var socketPath: String
    /// The configuration in effect at start.
    public var configuration: Configuration
    /// `--model FILE`: the 68-point dlib shape predictor.
    public var modelPath: String
    /// How a recorded file is paced (`--pace`; a camera is always real time).
    public var pace: Pace = .realtime
    /// `--loop`: play a recorded file again from the start when it ends.
    public var loop = false
    /// `--always-on`: keep the source open with no client listening.
    public var alwaysOn = false
    /// What the command line asked of the configuration (`--config`, `--profile`, `--mirrored`, the default
    /// locations), applied again to the file a SIGHUP re-reads. Tests and embedders that pass a loaded
    /// `configuration` leave it empty: a reload then re-reads `configuration.path`.
    public var request = ConfigurationRequest()
    /// `--log-level LEVEL`: the least severe messages logged, over the configuration's `logLevel`.
    public var logLevel: EventServer.LogLevel?
    /// `--print-config`: print the configuration in effect and where each value came from, then exit 0.
    public var printConfiguration = false
    /// Seconds the source stays open after the last client leaves.
    public var linger: Double = 3

    /// Options for tests and embedders.
    public init(
        source: String?, socketPath: String, configuration: Configuration = Configuration(),
        modelPath: String = ShapePredictor.debianModelPath
    ) {
        self.source = source
        self.socketPath = socketPath
        self.configuration = configuration
        self.modelPath = modelPath
    }

    /// `winkd`'s command line, for `--help`, the man page and completions.
    public static let spec: CommandSpec = {
        var spec = CommandSpec(
        name: "winkd",
        summary: "watch a webcam (or play a recording) and publish face expression events on a Unix socket",
        options: [
            OptionSpec(
                "--source", .file("DEVICE|FILE"),
                "a V4L2 device (/dev/...) or a recording (video file or still image)",
                default: "the first V4L2 capture device, by its /dev/v4l/by-id name"),
            OptionSpec(
                "--socket", .file("PATH"), "the event socket",
                default: "$WINK_SOCKET, else $XDG_RUNTIME_DIR/winkd/events.sock, else \(EventSocketPath.systemPath)"),
        ] + CommonOptions.daemonSpecs + [
            OptionSpec(
                "--pace", .choice(["realtime", "fast"]),
                "a recording's frames at their own timestamps, or as fast as the pipeline goes", default: "realtime"),
            OptionSpec("--loop", "play a recording again and again (without it, clients get bye at its end)"),
            OptionSpec(
                "--always-on", "keep the source open without clients (default: open only while someone listens)"),
            OptionSpec(
                "--log-level", .choice(EventServer.LogLevel.names),
                "the least severe messages logged", default: "the configuration's logLevel, else info"),
            OptionSpec("--print-config", "print the configuration in effect and where each value came from, then exit"),
            OptionSpec("--version", "print the version and exit"),
        ],
        details: "Without --config, winkd reads the first of $XDG_CONFIG_HOME/winkd/config.json (else "
            + "~/.config/winkd/config.json) and /etc/winkd/config.json that exists, and profile.json beside it when "
            + "no profile is named; --print-config shows the result. The source opens when the first client "
            + "listens (subscribes, or stays connected 0.25 s; a status question does not count) and closes 3 s "
            + "after the last leaves. SIGHUP reloads the configuration; SIGTERM and SIGINT "
            + "say bye to every client and exit 0.")
        spec.exitCodes = ExitCode.daemonSummary
        return spec
    }()

    /// Parses `winkd [--source DEVICE|FILE] [--socket PATH] [--config FILE] [--profile FILE] [--model FILE]
    /// [--mirrored] [--pace realtime|fast] [--loop] [--always-on] [--log-level LEVEL] [--print-config]`.
    /// Without `--config`, the first `config.json` of `Configuration.Location(environment:)` is read.
    /// - Throws: `UsageError` (64), `Configuration.Missing` (66) for a `--config` file that does not exist,
    ///   `Configuration.Invalid` (78) for a file with problems (a default one too), naming it.
    public init(_ args: inout Arguments, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        logLevel = try Self.logLevel(&args)
        printConfiguration = args.flag("--print-config")
        let common = try CommonOptions(&args, location: Configuration.Location(environment: environment))
        request = common.request
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

    /// `--log-level LEVEL`, shared with `winkctl config`.
    /// - Throws: `UsageError` (64) naming the levels for any other value.
    public static func logLevel(_ args: inout Arguments) throws -> EventServer.LogLevel? {
        guard let name = try args.option("--log-level") else { return nil }
        guard let level = EventServer.LogLevel(name: name) else {
            throw UsageError(
                "--log-level expects one of \(EventServer.LogLevel.names.joined(separator: ", ")), got '\(name)'")
        }
        return level
    }

    /// The least severe level logged: `--log-level`, else the configuration's `logLevel`, else `info`.
    public var effectiveLogLevel: EventServer.LogLevel { logLevel ?? configuration.logLevel ?? .info }

    /// What `source` names: a camera or a recording.
    var sourceKind: SourceKind { SourceKind(source: source) }
}
