import Foundation
import Glibc

/// How the tests wait for the daemon (end-to-end and in-process).
///
/// Something a test needs from winkd (its socket, a greeting, a status line, frames, its exit) is awaited
/// until it happens, up to a generous deadline: a passing run goes on the moment it happens, only a broken
/// daemon waits the deadline out. A fixed few seconds is not enough: start-up alone (loading the 100 MB
/// model, from a cold model cache on a clean clone, while the other suites run) took 4-8 s on a busy
/// 2-core machine, and a `reload_ok` or the first frame comes only after it.
///
/// Waiting to see that nothing happens is the opposite case: that stays a short fixed read or sleep.
public enum Wait {
    /// The most a test waits for something it expects.
    public static let generous: Double = 60

    /// Checks `condition` every `interval` seconds until it holds or `seconds` pass; whether it held.
    @discardableResult
    public static func until(_ seconds: Double = generous, interval: Double = 0.05, _ condition: () throws -> Bool)
        rethrows
        -> Bool
    {
        try value(seconds, interval: interval) { try condition() ? true : nil } ?? false
    }

    /// The first non-nil result of `attempt`, tried every `interval` seconds for up to `seconds`; nil if none.
    public static func value<T>(_ seconds: Double = generous, interval: Double = 0.05, _ attempt: () throws -> T?)
        rethrows
        -> T?
    {
        let end = Date(timeIntervalSinceNow: seconds)
        while true {
            if let result = try attempt() { return result }
            if Date() >= end { return nil }
            usleep(useconds_t(interval * 1_000_000))
        }
    }

    /// Waits for the file at `path` (a socket winkd binds) to exist.
    public static func forFile(_ path: String) -> Bool {
        until { FileManager.default.fileExists(atPath: path) }
    }

    /// Waits for `process` to exit; false if it is still running after `seconds` (it is left running).
    public static func forExit(_ process: Process, seconds: Double = generous) -> Bool {
        until(seconds, interval: 0.02) { !process.isRunning }
    }
}
