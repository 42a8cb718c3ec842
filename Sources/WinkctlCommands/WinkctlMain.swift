import Capture
import Foundation
import WinkCore
import WinkDaemon

/// `winkctl`: the companion tool. Each subcommand lives in `Commands/NameCommand.swift` and is listed here.
public enum WinkctlMain {
    /// A subcommand: its declared command line and its body, which reads its own arguments.
    struct Command {
        var spec: CommandSpec
        var run: (inout Arguments) throws -> ExitCode
        /// `winkctl analyze FILE [options]`.
        var usage: String { "usage: winkctl \(spec.synopsis)" }
    }

    static let commands: [Command] = [
        AnalyzeCommand.command,
        EvaluateCommand.command,
        CamerasCommand.command,
        InputCommand.command,
        EventsCommand.command,
        StatusCommand.command,
        ConfigCommand.command,
        MonitorCommand.command,
        OverlayCommand.command,
        CalibrateCommand.command,
        BenchCommand.command,
        HelpCommand.command,
        CompletionCommand.command,
        ManualCommand.command,
    ]

    /// The command named `name`, if any.
    static func command(named name: String) -> Command? {
        commands.first { $0.spec.name == name }
    }

    /// `winkctl --help`: every command with its summary.
    static var usage: String {
        let width = (commands.map(\.spec.name.count).max() ?? 8) + 2
        return
            (["usage: winkctl COMMAND [options]", "", "commands:"]
            + commands.map {
                "  " + $0.spec.name.padding(toLength: width, withPad: " ", startingAt: 0) + $0.spec.summary
            }
            + [
                "",
                "winkctl help COMMAND (or winkctl COMMAND --help) shows a command's options; --version the version.",
                ExitCode.summary,
            ]).joined(separator: "\n")
    }

    /// winkctl's `main`: ignores SIGPIPE, unblocks SIGINT/SIGTERM/SIGHUP, runs the command named by the first
    /// argument and exits with its code (64 for a usage error; each error's own code otherwise).
    public static func run() -> Never {
        signal(SIGPIPE, SIG_IGN)
        limitStillImageSize()
        // Ctrl-C, SIGTERM and SIGHUP stop any command, even when the parent blocked them (a blocked mask is
        // inherited: a test runner's thread), so that a stop mid-write is handled (`PendingOutput`).
        var stops = sigset_t()
        sigemptyset(&stops)
        for number in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&stops, number) }
        pthread_sigmask(SIG_UNBLOCK, &stops, nil)
        var argv = Array(CommandLine.arguments.dropFirst())
        runMain("winkctl") {
            guard let name = argv.first else { throw UsageError("which command? (winkctl --help lists them)") }
            if name == "--help" || name == "-h" {
                print(usage)
                return .ok
            }
            if name == "--version" {
                print("winkctl \(WinkVersion.current)")
                return .ok
            }
            guard let command = command(named: name) else { throw unknownCommand(name) }
            argv.removeFirst()
            if Arguments.asksForHelp(argv) {
                print(command.spec.help(program: "winkctl"))
                return .ok
            }
            var arguments = Arguments(argv, spec: command.spec)
            return try command.run(&arguments)
        }
    }

    /// One line for a command that does not exist, naming the nearest one when it looks like a typo.
    static func unknownCommand(_ name: String) -> UsageError {
        let names = commands.map(\.spec.name)
        if let near = CommandSpec.nearest(to: name, in: names) {
            return UsageError("unknown command '\(name)'; did you mean '\(near)'? (winkctl --help lists them)")
        }
        return UsageError("unknown command '\(name)' (winkctl --help lists them)")
    }
}
