import WinkCore

/// The daemon's lifecycle (wiring, signals, on-demand source).
enum Daemon {
    static func main(_ args: inout Arguments) throws -> ExitCode {
        try args.finish()
        throw UsageError("winkd: the event server is not wired in yet")
    }
}
