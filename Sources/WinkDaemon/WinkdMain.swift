import Foundation
import WinkCore

/// `winkd`: the daemon.
public enum WinkdMain {
    public static func run() -> Never {
        signal(SIGPIPE, SIG_IGN)
        runMain("winkd") {
            var args = Arguments(Array(CommandLine.arguments.dropFirst()))
            return try Daemon.main(&args)
        }
    }
}
