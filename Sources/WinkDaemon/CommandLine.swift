import Foundation
import WinkCore

/// A command-line usage error: exit 64 with the message.
public struct UsageError: ExitCodeError, Equatable {
    /// The line printed (after the program's name) before exiting 64.
    public var message: String
    /// An error saying `message`.
    public init(_ message: String) { self.message = message }
    /// `message`.
    public var description: String { message }
    /// 64 (`usage`).
    public var exitCode: ExitCode { .usage }
}

/// A small `--flag value` parser shared by `winkd` and every `winkctl` subcommand.
///
/// The command's `CommandSpec` declares its options (for `--help`, the man pages and completions); reading
/// an option it does not declare is a programming error (a precondition), so the documentation cannot
/// miss one. Anything left unread is a usage error (exit 64) naming it, with the nearest declared option
/// when it looks like a typo, and so is an option given twice. After `--`, every argument is positional
/// (a file named `-x.mp4` or `--weird`), as POSIX utilities take it.
public struct Arguments {
    private var items: [String]
    private var used: [Bool]
    /// The index of the first `--`, after which no argument is an option (nil: none).
    private let separator: Int?
    /// Flags found more than once, said by `finish()`.
    private var repeatedFlags: [String] = []
    /// The command whose options these are; nil accepts any name (tests of the parser itself).
    public let spec: CommandSpec?

    /// The arguments `items` (without the program name), none read yet, for the command `spec`.
    public init(_ items: [String], spec: CommandSpec? = nil) {
        self.items = items
        self.spec = spec
        used = Array(repeating: false, count: items.count)
        separator = items.firstIndex(of: "--")
        if let separator { used[separator] = true }
    }

    /// Whether `arguments` hold `--help` or `-h` before any `--` (after it, they are file names).
    public static func asksForHelp(_ arguments: [String]) -> Bool {
        arguments.prefix { $0 != "--" }.contains { $0 == "--help" || $0 == "-h" }
    }

    /// Whether argument `i` may be read as an option (it comes before any `--`).
    private func isOption(_ i: Int) -> Bool { separator.map { i < $0 } ?? true }

    private func checkDeclared(_ name: String) {
        precondition(
            spec?.declares(name) ?? true,
            "\(spec?.name ?? ""): option \(name) is read but not declared in its CommandSpec")
    }

    /// Whether `--name` is present (a boolean flag).
    public mutating func flag(_ name: String) -> Bool {
        checkDeclared(name)
        var found = false
        for (i, item) in items.enumerated() where !used[i] && isOption(i) && item == name {
            used[i] = true
            if found && !repeatedFlags.contains(name) { repeatedFlags.append(name) }
            found = true
        }
        return found
    }

    /// The value after `--name` (or `--name=value`), if present.
    /// - Throws: `UsageError` when the flag has no value or an empty one (`--socket ""`): no option of
    ///   winkd or winkctl takes an empty string; or when it is given twice.
    public mutating func option(_ name: String) throws -> String? {
        checkDeclared(name)
        var value: String?
        func take(_ found: String) throws {
            // The last of two used to win without a word (`-o x.png -o y.png` wrote only y.png).
            if let value { throw UsageError("\(name) given twice ('\(value)' and '\(found)'); give it once") }
            value = found
        }
        for i in items.indices where !used[i] && isOption(i) {
            if items[i] == name {
                guard i + 1 < items.count, !used[i + 1] else { throw UsageError("\(name) needs a value") }
                used[i] = true
                used[i + 1] = true
                try take(items[i + 1])
            } else if items[i].hasPrefix(name + "=") {
                used[i] = true
                try take(String(items[i].dropFirst(name.count + 1)))
            }
        }
        if value?.isEmpty == true { throw UsageError("\(name) needs a value, not an empty string") }
        return value
    }

    /// The value of an option spelt two ways (`-o` and `--output`), given once in either spelling.
    /// - Throws: as `option(_:)`, and `UsageError` when both spellings are given ("-o x.png --output y.png"
    ///   said only that '--output' did not go with the other options).
    public mutating func option(_ name: String, or alias: String) throws -> String? {
        let first = try option(name)
        let second = try option(alias)
        if let first, let second {
            throw UsageError("\(name) given twice ('\(first)' and '\(second)'); give it once")
        }
        return first ?? second
    }

    /// The value of `--name` as a number, written in decimal (`12`, `-0.5`, `1e-3`; not `0x10`, `inf` or
    /// `nan`, which Swift's own parsing would take).
    /// - Throws: `UsageError` when it is not such a number within `range` ("a whole number" when `T` is an
    ///   integer type: `--repeat 1.5`); the range is written as in `--help` (`-180...180`, not `-180.0...180.0`).
    public mutating func number<T: LosslessStringConvertible & Comparable>(
        _ name: String,
        in range: ClosedRange<T>
    ) throws -> T? {
        guard let text = try option(name) else { return nil }
        let decimal = text.contains { $0.isNumber } && text.allSatisfy { "0123456789+-.eE".contains($0) }
        guard decimal, let value = T(text), range.contains(value) else {
            let bounds = "\(plainNumber(range.lowerBound))...\(plainNumber(range.upperBound))"
            let kind = T.self is any BinaryInteger.Type ? "a whole number" : "a number"
            throw UsageError("\(name) expects \(kind) in \(bounds), got '\(text)'")
        }
        return value
    }

    /// The next unused argument that does not start with `--`, or any after a `--`.
    public mutating func positional() -> String? {
        for i in items.indices where !used[i] && (!isOption(i) || !(items[i].hasPrefix("--") && items[i].count > 2)) {
            used[i] = true
            return items[i]
        }
        return nil
    }

    /// - Throws: `UsageError` naming the first argument nobody asked for, with the nearest declared option
    ///   when it starts with `-` and looks like a typo of one.
    public func finish() throws {
        if let name = repeatedFlags.first {
            // `--flip --flip` read as one flip; a value option given twice was already refused.
            throw UsageError("\(name) given twice; give it once")
        }
        guard let i = used.firstIndex(of: false) else { return }
        let item = items[i]
        let word = String(item.prefix { $0 != "=" })
        if !isOption(i) { throw UsageError("unexpected argument '\(item)'") }
        if item.contains("="), let spec,
           spec.options.contains(where: { $0.spellings.contains(word) && $0.value == .flag }) {
            throw UsageError("\(word) takes no value (got '\(item)')")  // `--quiet=yes`
        }
        if word.hasPrefix("-"), let spec, spec.declares(word) {
            throw UsageError("'\(word)' does not go with the other options given")
        }
        if word.hasPrefix("-"), let spec,
            let near = CommandSpec.nearest(to: word, in: spec.options.flatMap(\.spellings))
        {
            throw UsageError("unknown option '\(item)'; did you mean \(near)?")
        }
        throw UsageError(word.hasPrefix("-") ? "unknown option '\(item)'" : "unexpected argument '\(item)'")
    }
}

/// Writes one line to stderr.
public func printError(_ line: String) {
    // write(2), not FileHandle.write, which traps when stderr cannot be written (a full disk, a closed pipe).
    // One line whatever it holds: a file name or argument with a newline or an escape sequence cannot split
    // it or reach the terminal (errors of several problems are printed a line each: `MultiLineError`).
    writeAll(visibleControlCharacters(line) + "\n", to: STDERR_FILENO)
}

/// Runs `body` and turns any error into its exit code and one stderr line prefixed with the program name.
///
/// What `print` left in standard output's buffer is flushed before exiting, and a failed write there (a full
/// disk, a closed pipe's EPIPE aside) is exit 74 with one line, `PROGRAM: standard output: REASON`, instead of
/// a silent 0 with the output cut short.
public func runMain(_ program: String, _ body: () throws -> ExitCode) -> Never {
    do {
        let code = try body()
        errno = 0
        if fflush(stdout) != 0 || ferror(stdout) != 0 {
            var failure = errno
            if failure == 0 {
                // The write that failed was an earlier buffer flush, whose errno is gone: ask the descriptor
                // again with one byte (the output is incomplete already; a newline cannot make it worse).
                failure = write(STDOUT_FILENO, "\n", 1) < 0 ? errno : 0
            }
            // A reader that went away (`winkctl help | head`) is not an error of ours.
            if failure != EPIPE {
                printError("\(program): \(StandardOutputError(code: failure == 0 ? EIO : failure).description)")
                exit(ExitCode.ioError.rawValue)
            }
        }
        exit(code.rawValue)
    } catch let error as MultiLineError {
        for line in error.lines { printError("\(program): \(line)") }
        exit(error.exitCode.rawValue)
    } catch let error as ExitCodeError {
        printError("\(program): \(error.description)")
        exit(error.exitCode.rawValue)
    } catch {
        printError("\(program): \(error)")
        exit(ExitCode.software.rawValue)
    }
}
