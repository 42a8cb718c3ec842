import Foundation
import WinkCore

/// The version `winkd --version` and `winkctl --version` print, and the man pages carry.
public enum WinkVersion {
    /// Semantic version of the programs and their protocol implementation (protocol version: `hello`'s).
    public static let current = "0.6.0"
}

/// One command-line option of `winkd` or a `winkctl` subcommand: the one source of its `--help` line,
/// its man page entry and its shell completion, so the three cannot drift. `Arguments` refuses to read
/// an option its command does not declare.
public struct OptionSpec: Sendable, Equatable {
    /// What follows the option on the command line.
    public enum Value: Sendable, Equatable {
        /// Nothing: a flag.
        case flag
        /// A file path, shown as the placeholder (`FILE`, `OUT.png`); completed with file names.
        case file(String)
        /// A directory path; completed with directory names.
        case directory(String)
        /// One of these words; completed with them.
        case choice([String])
        /// Free text or a number, shown as the placeholder (`N`, `NAME,...`); not completed.
        case text(String)

        /// The placeholder shown after the option (empty for a flag).
        public var placeholder: String {
            switch self {
            case .flag: return ""
            case .file(let p), .directory(let p), .text(let p): return p
            case .choice(let words): return words.joined(separator: "|")
            }
        }
    }

    /// The long name with its dashes (`--config`).
    public var name: String
    /// Other spellings (`-o` for `--output`).
    public var aliases: [String]
    /// What the option takes: nothing (a flag), a file, a directory, text or one of a few words.
    public var value: Value
    /// One line of meaning, with units.
    public var help: String
    /// What applies without the option, in words ("the first V4L2 capture device"); nil for flags and
    /// options whose absence is simply "off".
    public var defaultValue: String?

    /// An option with a value.
    public init(_ name: String, aliases: [String] = [], _ value: Value, _ help: String,
                default defaultValue: String? = nil) {
        self.name = name
        self.aliases = aliases
        self.value = value
        self.help = help
        self.defaultValue = defaultValue
    }

    /// A flag.
    public init(_ name: String, aliases: [String] = [], _ help: String) {
        self.init(name, aliases: aliases, .flag, help)
    }

    /// Every spelling, the long name first.
    public var spellings: [String] { [name] + aliases }

    /// `--config FILE` / `-o, --output FILE`.
    public var label: String {
        let names = (aliases + [name]).joined(separator: ", ")
        return value == .flag ? names : "\(names) \(value.placeholder)"
    }
}

extension OptionSpec {
    /// `--socket PATH` of the commands that are clients of winkd's socket (`events`, `input`, `status`).
    public static let clientSocket = OptionSpec(
        "--socket", .file("PATH"), "winkd's event socket",
        default: "$WINK_SOCKET, else $XDG_RUNTIME_DIR/winkd/events.sock, else /run/winkd/events.sock")
    /// `--quiet` of the long offline runs (`analyze`, `evaluate`, `bench`).
    public static let quiet = OptionSpec("--quiet", "no progress line and no closing summary on stderr")
}

/// A program (`winkd`) or subcommand (`winkctl analyze`): its operands, options and one-line summary.
public struct CommandSpec: Sendable {
    /// `winkd`, or the subcommand's name (`analyze`).
    public var name: String
    /// What it does, in one line (the man page's NAME, `winkctl --help`'s list).
    public var summary: String
    /// The operands as shown in the synopsis (`FILE`, `LABELS.json|FOLDER...`), with a line of meaning each.
    public var operands: [(name: String, help: String)]
    /// The options, in the order `--help` lists them.
    public var options: [OptionSpec]
    /// The exit codes line of `--help` and the man page (`ExitCode.summary`, winkd's without 1).
    public var exitCodes = ExitCode.summary
    /// A paragraph or two for `--help` and the man page, beyond the summary (may be empty).
    public var details: String

    /// A command; `exitCodes` starts as `ExitCode.summary`.
    public init(name: String, summary: String, operands: [(name: String, help: String)] = [],
                options: [OptionSpec], details: String = "") {
        self.name = name
        self.summary = summary
        self.operands = operands
        self.options = options
        self.details = details
    }

    /// Whether `spelling` (`--config`, `-o`) is one of this command's options.
    public func declares(_ spelling: String) -> Bool {
        options.contains { $0.spellings.contains(spelling) }
    }

    /// `analyze FILE [options]`, as `usage:` lines show it after the program name.
    public var synopsis: String {
        ([name] + operands.map(\.name) + (options.isEmpty ? [] : ["[options]"])).joined(separator: " ")
    }

    /// The whole `--help` text: usage, summary, details, operands and every option with its default,
    /// then the exit codes.
    /// - Parameter program: what precedes the synopsis (`winkd` prints its own name only: pass "").
    public func help(program: String) -> String {
        var lines = ["usage: \(program.isEmpty ? "" : program + " ")\(synopsis)", "", summary]
        if !details.isEmpty { lines += ["", details] }
        let width = min(28, (operands.map(\.name.count) + options.map(\.label.count)).max().map { $0 + 4 } ?? 4)
        /// The label, then the text wrapped at 100 columns under itself (a label too long for the column gets
        /// the text on the next line).
        func row(_ label: String, _ text: String) -> String {
            let indent = String(repeating: " ", count: width)
            let pad = label.count + 2 < width ? String(repeating: " ", count: width - label.count - 2) : "\n" + indent
            var lines: [String] = []
            var line = ""
            for word in text.split(separator: " ") {
                if !line.isEmpty && width + line.count + 1 + word.count > 100 {
                    lines.append(line)
                    line = ""
                }
                line += (line.isEmpty ? "" : " ") + word
            }
            lines.append(line)
            return "  " + label + pad + lines.joined(separator: "\n" + indent)
        }
        if !operands.isEmpty {
            lines.append("")
            lines += operands.map { row($0.name, $0.help) }
        }
        lines += ["", "options:"]
        for option in options {
            lines.append(row(option.label, option.help + (option.defaultValue.map { " (default: \($0))" } ?? "")))
        }
        lines.append(row("-h, --help", "print this help and exit"))
        lines += ["", exitCodes]
        return lines.joined(separator: "\n")
    }

    /// The closest of `candidates` to `word` by edit distance, if it is close enough to be a typo (at
    /// most a third of the word's length, and at least 1 edit).
    public static func nearest(to word: String, in candidates: [String]) -> String? {
        let scored = candidates.map { ($0, editDistance(word, $0)) }.min { $0.1 < $1.1 }
        guard let (best, distance) = scored, distance <= max(2, word.count / 3) else { return nil }
        return best
    }

    /// Levenshtein distance between two strings (insertions, deletions and substitutions, each 1).
    public static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count), current = Array(repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
