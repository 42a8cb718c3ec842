import Foundation
import WinkCore

/// A command-line usage error: exit 64 with the message.
public struct UsageError: ExitCodeError {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
    public var exitCode: ExitCode { .usage }
}

/// A small `--flag value` parser shared by `winkd` and every `winkctl` subcommand.
///
/// Options are declared by the caller as they are read; anything left unread is an error, so a typo is
/// reported (exit 64) instead of being ignored.
public struct Arguments {
    private var items: [String]
    private var used: [Bool]

    public init(_ items: [String]) {
        self.items = items
        used = Array(repeating: false, count: items.count)
    }

    /// Whether `--name` is present (a boolean flag).
    public mutating func flag(_ name: String) -> Bool {
        var found = false
        for (i, item) in items.enumerated() where !used[i] && item == name {
            used[i] = true
            found = true
        }
        return found
    }

    /// The value after `--name` (or `--name=value`), if present.
    /// - Throws: `UsageError` when the flag has no value or an empty one (`--socket ""`): no option of
    ///   winkd or winkctl takes an empty string.
    public mutating func option(_ name: String) throws -> String? {
        var value: String?
        for i in items.indices where !used[i] {
            if items[i] == name {
                guard i + 1 < items.count, !used[i + 1] else { throw UsageError("\(name) needs a value") }
                used[i] = true
                used[i + 1] = true
                value = items[i + 1]
            } else if items[i].hasPrefix(name + "=") {
                used[i] = true
                value = String(items[i].dropFirst(name.count + 1))
            }
        }
        if value?.isEmpty == true { throw UsageError("\(name) needs a value, not an empty string") }
        return value
    }

    /// The value of `--name` as a number.
    /// - Throws: `UsageError` when it is not a number within `range`.
    public mutating func number<T: LosslessStringConvertible & Comparable>(_ name: String,
                                                                          in range: ClosedRange<T>) throws -> T? {
        guard let text = try option(name) else { return nil }
        guard let value = T(text), range.contains(value) else {
            throw UsageError("\(name) expects a number in \(range.lowerBound)...\(range.upperBound), got '\(text)'")
        }
        return value
    }

    /// The next unused argument that does not start with `--`.
    public mutating func positional() -> String? {
        for i in items.indices where !used[i] && !(items[i].hasPrefix("--") && items[i].count > 2) {
            used[i] = true
            return items[i]
        }
        return nil
    }

    /// - Throws: `UsageError` naming the first argument nobody asked for.
    public func finish() throws {
        if let i = used.firstIndex(of: false) { throw UsageError("unknown argument '\(items[i])'") }
    }
}

/// Writes one line to stderr.
public func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// Runs `body` and turns any error into its exit code and one stderr line prefixed with the program name.
public func runMain(_ program: String, _ body: () throws -> ExitCode) -> Never {
    do {
        exit(try body().rawValue)
    } catch let error as ExitCodeError {
        printError("\(program): \(error.description)")
        exit(error.exitCode.rawValue)
    } catch {
        printError("\(program): \(error)")
        exit(ExitCode.software.rawValue)
    }
}
