import EventServer
import Foundation
import InputClient
import WinkCore
import WinkDaemon

/// Set by SIGINT/SIGTERM/SIGHUP; the input session polls it between lines and lets every key up.
private var inputStopRequested: sig_atomic_t = 0

/// `winkctl input --map MAP.json [--socket PATH] [--dry-run] [--once]`: face gestures as keys, through a
/// virtual uinput device, as a separate client of the event socket (the daemon needs no input rights).
enum InputCommand {
    static let command = WinkctlMain.Command(
        spec: CommandSpec(
            name: "input",
            summary: "turn face gestures into keys and buttons through a virtual uinput device",
            options: [
                OptionSpec(
                    "--map", .file("FILE"), "the input map (JSON: event -> key or button, press or hold); required"),
                .clientSocket,
                OptionSpec("--dry-run", "print the key actions instead of injecting them (no uinput needed)"),
                OptionSpec("--once", "end when the connection ends instead of reconnecting"),
            ]),
        run: run)

    static func run(_ args: inout Arguments) throws -> ExitCode {
        guard let mapPath = try args.option("--map") else {
            throw UsageError("input: which map? \(command.usage)")
        }
        let socket = try args.option("--socket") ?? EventSocketPath.default()
        let dryRun = args.flag("--dry-run")
        let once = args.flag("--once")
        try args.finish()

        let map: InputMap
        do {
            map = try InputMap.load(path: mapPath)
        } catch let error as InputError {
            // One stderr line per problem, each with the program prefix.
            for line in error.lines { printError("winkctl: \(line)") }
            return error.exitCode
        }

        // A command that could never start failed at every gesture, with the same line each time: refused
        // now (a dry run, which starts nothing, says it and goes on).
        let environment = ProcessInfo.processInfo.environment
        for (i, mapping) in map.mappings.enumerated() {
            guard case .command(let command) = mapping.action,
                  CommandSpawner.resolve(command[0], environment: environment) == nil else { continue }
            let what = !command[0].contains("/") ? "is not a program in PATH"
                : FileManager.default.fileExists(atPath: command[0]) ? "is not an executable file" : "does not exist"
            let line = "\(mapPath): mappings[\(i)].action.command: '\(command[0])' \(what)"
            printError("winkctl: \(line)")
            if !dryRun { return .configuration }
        }

        let log: (String) -> Void = { printError("winkctl input: \($0)") }
        let injector: Injector
        var uinput: UinputInjector?
        var printer: PrintingInjector?
        if dryRun {
            printer = PrintingInjector()
            injector = printer!
        } else {
            let device = try UinputInjector(map: map, factory: LibevdevUinput(), log: log)
            uinput = device
            injector = device
        }
        defer { uinput?.close() }

        for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
            signal(signalNumber) { _ in inputStopRequested = 1 }
        }
        // A dry run's stdout that cannot be written ends the session too (its reader gone: exit 0; a full
        // disk: 74 below).
        let stop = { inputStopRequested != 0 || printer?.writeFailure != nil }
        let session = InputSession(
            engine: MappingEngine(map: map, injector: injector),
            connector: UnixSocketConnector(path: socket),
            sleep: { seconds in
                var left = seconds
                while left > 0, !stop() {
                    usleep(useconds_t(min(left, 0.05) * 1e6))
                    left -= 0.05
                }
            },
            log: log,
            shouldStop: stop)
        let end = session.run(reconnect: !once)
        if let failure = printer?.writeFailure, failure != EPIPE { throw StandardOutputError(code: failure) }
        return exitCode(for: end, path: socket, mapPath: mapPath)
    }

    /// `--once`: 0 when the daemon said bye; 69 when it could not be reached, was not winkd, or the stream
    /// ended without a bye (winkd killed: this exited 0 without a word, where `winkctl events` says 69).
    /// Without `--once` only a signal ends the session (exit 0). With or without it, a map naming an event
    /// the daemon does not offer ends it at once: 78, one line naming each such event and the nearest
    /// offered name.
    static func exitCode(for end: ConnectionEnd, path: String, mapPath: String) -> ExitCode {
        switch end {
        case .bye, .stopped:
            return .ok
        case .closed:
            printError("winkctl: \(path): winkd closed the connection without a bye")
            return .unavailable
        case .silent(let seconds):
            printError("winkctl: \(path): no line from winkd for \(plainNumber(seconds)) s (stalled?); every key let up")
            return .unavailable
        case .connectFailed(let message), .notWinkd(let message):
            printError("winkctl: \(message.hasPrefix(path) ? message : "\(path): \(message)")")
            return .unavailable
        case .unknownEvents(let names, let offered):
            let problems = names.map { name in
                "unknown event '\(name)'"
                    + (CommandSpec.nearest(to: name, in: offered).map { " (did you mean '\($0)'?)" } ?? "")
            }
            printError(
                "winkctl: \(mapPath): \(problems.joined(separator: "; ")); "
                    + "winkd offers \(offered.joined(separator: ", "))"
            )
            return .configuration
        }
    }
}
