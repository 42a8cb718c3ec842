import EventServer
import Foundation
import WinkCore
import WinkDaemon

/// `winkctl config [--config FILE] [--profile FILE] [--mirrored] [--log-level LEVEL] [--json]`: prints the
/// configuration winkd would run with, given the same flags in the same environment: every setting with
/// its value, unit and where it came from (`ConfigurationReport`). Exit 0; 66 for a missing `--config`
/// file, 78 for a file with problems (as winkd).
enum ConfigCommand {
    static let command = WinkctlMain.Command(
        spec: CommandSpec(
            name: "config",
            summary: "print the configuration winkd would run with: every setting, its unit and where it came from",
            options: CommonOptions.daemonSpecs + [
                DaemonOptions.spec.options.first { $0.name == "--log-level" }!,
                OptionSpec("--json", "print it as JSON"),
            ]),
        run: run)

    static func run(_ args: inout Arguments) throws -> ExitCode {
        let logLevel = try DaemonOptions.logLevel(&args)
        let asJSON = args.flag("--json")
        let options = try CommonOptions(&args, location: Configuration.Location())
        try args.finish()
        // A profile winkd would refuse (missing: 66, corrupt: 78) is refused here too, naming it.
        _ = try options.configuration.applyingProfile()
        // So is an overlay layout (or its images) winkd would refuse at start-up (78, naming overlay.layout).
        _ = try Daemon.loadRenderer(options.configuration)
        let report = ConfigurationReport(configuration: options.configuration, request: options.request,
                                         logLevelFlag: logLevel)
        print(asJSON ? report.json() : report.text(), terminator: "")
        return .ok
    }
}
