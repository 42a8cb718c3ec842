import Foundation
import Glibc
import Synchronization
import TestSupport

/// Runs the built `winkd` / `winkctl` executables (they sit beside the test bundle in the build folder).
enum Binaries {
    static let directory: URL = {
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        while url.path != "/" && !FileManager.default.fileExists(atPath: url.appendingPathComponent("winkctl").path) {
            url.deleteLastPathComponent()
        }
        return url
    }()
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let fixtures = repository.deletingLastPathComponent().appendingPathComponent("shared/fixtures")
    static func fixture(_ relative: String) -> String { fixtures.appendingPathComponent(relative).path }

    /// The first half of the fixture file at `relative`, written to `folder/name`: a download cut short.
    /// Returns its path.
    static func truncatedFixture(_ relative: String, in folder: URL, as name: String) throws -> String {
        let whole = try Data(contentsOf: URL(fileURLWithPath: fixture(relative)))
        let cut = folder.appendingPathComponent(name)
        try whole.prefix(whole.count / 2).write(to: cut)
        return cut.path
    }

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        var stdoutLines: [String] { stdout.split(separator: "\n").map(String.init) }
        var stderrLines: [String] { stderr.split(separator: "\n").map(String.init) }
    }

    /// Runs `program` with `arguments` to completion (stdout and stderr captured).
    static func run(_ program: String, _ arguments: [String], environment: [String: String] = [:]) throws -> Result {
        let p = Process()
        p.executableURL = directory.appendingPathComponent(program)
        p.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        p.environment = env
        return try capture(p)
    }

    /// Runs `program` to completion like `Binaries.run`, but kills it after `seconds`: nil then.
    static func runWithDeadline(_ program: String, _ arguments: [String], seconds: Double = Wait.generous) throws
        -> Result?
    {
        let p = Process()
        p.executableURL = directory.appendingPathComponent(program)
        p.arguments = arguments
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let pid = p.processIdentifier
        let finished = DispatchSemaphore(value: 0)
        let killed = Mutex(false)
        Thread.detachNewThread {
            if finished.wait(timeout: .now() + seconds) == .timedOut {
                killed.withLock { $0 = true }
                kill(pid, SIGKILL)
            }
        }
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        finished.signal()
        if killed.withLock({ $0 }) { return nil }
        return Result(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self),
                               stderr: String(decoding: e, as: UTF8.self))
    }

    /// Runs the prepared `process` to completion, its stdout and stderr captured.
    static func capture(_ p: Process) throws -> Result {
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return Result(
            status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self),
            stderr: String(decoding: e, as: UTF8.self))
    }

    /// A fresh temporary directory, removed with the test process's scratch root at exit if not before.
    static func temporaryDirectory() throws -> URL { try Scratch.directory("e2e") }
}
