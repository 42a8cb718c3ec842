import Foundation
import WinkCore
import WinkDaemon

/// `winkctl`: the companion tool. Each subcommand lives in `Commands/NameCommand.swift` and is listed here.
public enum WinkctlMain {
    /// A subcommand: its one-line synopsis and its body, which reads its own arguments.
    struct Command {
        var synopsis: String
        var run: (inout Arguments) throws -> ExitCode
    }

    static let commands: [(name: String, command: Command)] = [
        ("analyze", AnalyzeCommand.command),
        ("evaluate", EvaluateCommand.command),
        ("cameras", CamerasCommand.command),
        ("input", InputCommand.command),
        ("events", EventsCommand.command),
        ("monitor", MonitorCommand.command),
        ("overlay", OverlayCommand.command),
        ("calibrate", CalibrateCommand.command),
        ("bench", BenchCommand.command),
    ]

    static var usage: String {
        "usage: winkctl COMMAND [options]\n" + commands.map { "  winkctl \($0.command.synopsis)" }.joined(separator: "\n")
            + "\n" + ExitCode.summary
    }

    public static func run() -> Never {
        signal(SIGPIPE, SIG_IGN)
        var argv = Array(CommandLine.arguments.dropFirst())
        runMain("winkctl") {
            guard let name = argv.first else { throw UsageError(usage) }
            if name == "--help" || name == "-h" || name == "help" {
                print(usage)
                return .ok
            }
            guard let command = commands.first(where: { $0.name == name })?.command else {
                throw UsageError("unknown command '\(name)'\n" + usage)
            }
            argv.removeFirst()
            if argv.contains("--help") || argv.contains("-h") {
                print("usage: winkctl \(command.synopsis)")
                return .ok
            }
            var arguments = Arguments(argv)
            return try command.run(&arguments)
        }
    }
}
