import Foundation
import WinkCore

/// Where the mapping engine's actions go: the uinput device, `--dry-run`'s printout, or a test recorder.
///
/// The engine calls these from one thread only; implementations need not be thread-safe.
public protocol Injector: AnyObject {
    /// Puts the key or button down.
    func press(_ key: InputKey)
    /// Lets the key or button up.
    func release(_ key: InputKey)
    /// Starts a program (argv[0] looked up in `PATH`) without a shell and without waiting for it.
    func run(_ command: [String])
}

/// `--dry-run`: prints each action on its own line (`press KEY_LEFT`, `release KEY_LEFT`,
/// `run notify-send 'hi there'`) instead of injecting it. Runs nothing.
public final class PrintingInjector: Injector {
    private let write: (String) -> Int32?
    /// The errno of the first line that could not be written (EPIPE: stdout's reader went away; ENOSPC: a
    /// full disk), nil while all went out; later lines are not tried. The session stops on it.
    public private(set) var writeFailure: Int32?

    /// - Parameter write: writes each line without its newline and returns nil, or the errno of a failed
    ///   write; defaults to stdout, a write(2) per line.
    public init(write: @escaping (String) -> Int32? = PrintingInjector.standardOutput) {
        self.write = write
    }

    /// Prints `press KEY`.
    public func press(_ key: InputKey) { say("press \(key.name)") }
    /// Prints `release KEY`.
    public func release(_ key: InputKey) { say("release \(key.name)") }
    /// `run` and the arguments, each quoted as a shell reads it when it is not plain (letters, digits and
    /// `@%+=:,./_-`): in single quotes (`'$(rm x)'`: pasted into a shell, the line runs what winkd would, and
    /// nothing else), or bash's `$'...'` when it holds a control character (a newline in an argument printed a
    /// second line that read like `press KEY_ENTER`): one line per action, whatever the map holds.
    public func run(_ command: [String]) { say("run " + command.map(Self.shown).joined(separator: " ")) }

    /// One argument as a POSIX shell (or, with a control character, bash) reads it back.
    static func shown(_ argument: String) -> String {
        let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-".unicodeScalars)
        if !argument.isEmpty && argument.unicodeScalars.allSatisfy(safe.contains) { return argument }
        // Control characters, and invisible ones that change how a line looks (a zero-width space, a
        // right-to-left override): escaped, so the printed line shows what would run.
        func hidden(_ scalar: Unicode.Scalar) -> Bool {
            [.control, .format, .lineSeparator, .paragraphSeparator].contains(scalar.properties.generalCategory)
        }
        let control = argument.unicodeScalars.contains(where: hidden)
        guard control else { return "'" + argument.replacingOccurrences(of: "'", with: #"'\''"#) + "'" }
        var out = "$'"
        for scalar in argument.unicodeScalars {
            switch scalar {
            case "\n": out += #"\n"#
            case "\r": out += #"\r"#
            case "\t": out += #"\t"#
            case "\\": out += #"\\"#
            case "'": out += #"\'"#
            case _ where hidden(scalar):
                // \x only below 0x80: bash reads $'\x85' as the byte 0x85, not U+0085.
                out += String(format: scalar.value < 0x80 ? "\\x%02x" : "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "'"
    }

    private func say(_ line: String) {
        guard writeFailure == nil else { return }
        writeFailure = write(line)
    }

    /// Writes the line and a newline to stdout at once, so a pipe sees each action as it happens; returns
    /// the errno of a failed write (it trapped through `FileHandle.write` on a closed pipe or a full disk).
    public static func standardOutput(_ line: String) -> Int32? {
        writeAll(line + "\n", to: STDOUT_FILENO)
    }
}

/// Starts programs with `posix_spawnp(3)` (no shell) and reaps them without blocking.
public struct CommandSpawner: Sendable {
    /// A spawner (stateless; thread-safe).
    public init() {}

    /// Starts `command[0]` (searched in `PATH`) with the arguments, inheriting stdin/stdout/stderr and the
    /// environment, and returns its process id. A thread waits for it, so a finished command does not stay a
    /// zombie until the next one starts.
    /// - Throws: `Errno` with the code posix_spawnp returned (ENOENT for an unknown program).
    @discardableResult
    public func spawn(_ command: [String]) throws -> pid_t {
        var cArgs: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) }
        cArgs.append(nil)
        defer { for arg in cArgs { free(arg) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, command[0], nil, nil, cArgs, environ)
        guard rc == 0 else { throw Errno(code: rc) }
        let child = pid
        Thread.detachNewThread {
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        }
        return pid
    }

    /// Where `program` would be started from: itself when it names a path (has a `/`), else the first
    /// executable file of that name in the `PATH` folders (`PATH` from `environment`, "/usr/bin:/bin"
    /// when unset, as posix_spawnp searches); nil when there is none. For `winkctl input` to refuse a map
    /// whose command could never start, before any gesture.
    public static func resolve(_ program: String, environment: [String: String]) -> String? {
        func runnable(_ path: String) -> Bool {
            var st = stat()
            return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG && access(path, X_OK) == 0
        }
        if program.contains("/") { return runnable(program) ? program : nil }
        guard !program.isEmpty else { return nil }
        let path = environment["PATH"] ?? "/usr/bin:/bin"
        for folder in path.split(separator: ":", omittingEmptySubsequences: false) {
            let candidate = (folder.isEmpty ? "." : String(folder)) + "/" + program
            if runnable(candidate) { return candidate }
        }
        return nil
    }
}
