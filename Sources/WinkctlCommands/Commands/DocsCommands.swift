import Foundation
import WinkCore
import WinkDaemon

/// `winkctl help [COMMAND]`: the overview, or one command's options (as `winkctl COMMAND --help`).
enum HelpCommand {
    static let command = WinkctlMain.Command(
        spec: CommandSpec(
            name: "help", summary: "show every command, or one command's options",
            operands: [("[COMMAND]", "the command to explain")], options: []),
        run: run)

    static func run(_ args: inout Arguments) throws -> ExitCode {
        let name = args.positional()
        try args.finish()
        guard let name else {
            print(WinkctlMain.usage)
            return .ok
        }
        guard let command = WinkctlMain.command(named: name) else { throw WinkctlMain.unknownCommand(name) }
        print(command.spec.help(program: "winkctl"))
        return .ok
    }
}

/// `winkctl completion bash|zsh|fish [winkd|winkctl]`: a shell completion script, generated from the same
/// `CommandSpec`s as `--help` (Scripts/install.sh installs them where each shell looks).
enum CompletionCommand {
    static let command = WinkctlMain.Command(
        spec: CommandSpec(
            name: "completion", summary: "print a bash, zsh or fish completion script for winkctl or winkd",
            operands: [("SHELL", "bash, zsh or fish"), ("[PROGRAM]", "winkctl (the default) or winkd")],
            options: []),
        run: run)

    static func run(_ args: inout Arguments) throws -> ExitCode {
        let shell = args.positional()
        let program = args.positional() ?? "winkctl"
        try args.finish()
        guard let shell else { throw UsageError("completion: which shell: bash, zsh or fish? \(command.usage)") }
        guard let kind = ShellCompletion.Shell(rawValue: shell) else {
            // "which shell: bash, zsh or fish?" to `completion tcsh` read as if nothing had been given.
            throw UsageError(
                "completion: no completion script for the shell '\(shell)' (there are scripts for bash, zsh and fish)")
        }
        guard let docs = ProgramDocs.named(program) else {
            throw UsageError("completion: PROGRAM is winkctl or winkd, got '\(program)'")
        }
        print(ShellCompletion.script(for: docs, shell: kind), terminator: "")
        return .ok
    }
}

/// `winkctl manual [winkd|winkctl]`: the man page (troff, man(7) macros), generated from the `CommandSpec`s.
enum ManualCommand {
    static let command = WinkctlMain.Command(
        spec: CommandSpec(
            name: "manual", summary: "print the man page of winkctl or winkd (troff; man -l - reads it)",
            operands: [("[PROGRAM]", "winkctl (the default) or winkd")], options: []),
        run: run)

    static func run(_ args: inout Arguments) throws -> ExitCode {
        let program = args.positional() ?? "winkctl"
        try args.finish()
        guard let docs = ProgramDocs.named(program) else {
            throw UsageError("manual: PROGRAM is winkctl or winkd, got '\(program)'")
        }
        print(ManPage.render(docs), terminator: "")
        return .ok
    }
}

/// A program's documentation: winkd is one command; winkctl a set of subcommands.
struct ProgramDocs {
    var name: String
    var summary: String
    /// winkd: its own spec; winkctl: one per subcommand.
    var commands: [CommandSpec]
    var hasSubcommands: Bool

    static let winkd = ProgramDocs(
        name: "winkd", summary: DaemonOptions.spec.summary,
        commands: [DaemonOptions.spec], hasSubcommands: false)
    static let winkctl = ProgramDocs(
        name: "winkctl", summary: "the companion tool of winkd: events, analysis, scoring, calibration, overlays, keys",
        commands: WinkctlMain.commands.map(\.spec), hasSubcommands: true)

    static func named(_ name: String) -> ProgramDocs? {
        name == "winkd" ? winkd : name == "winkctl" ? winkctl : nil
    }
}

/// man(7) pages from `ProgramDocs`.
enum ManPage {
    /// The page: NAME, SYNOPSIS, DESCRIPTION, OPTIONS (winkd) or COMMANDS (winkctl, each with its options),
    /// EXIT STATUS, FILES, SEE ALSO.
    static func render(_ docs: ProgramDocs) -> String {
        var out = [
            ".TH \(docs.name.uppercased()) 1 \"\" \"\(docs.name) \(WinkVersion.current)\" \"User Commands\"",
            ".SH NAME", "\(docs.name) \\- \(escape(docs.summary))", ".SH SYNOPSIS",
        ]
        if docs.hasSubcommands {
            out += [".B \(docs.name)", ".I COMMAND", "[\\fIoptions\\fR]"]
        } else {
            out += [".B \(docs.name)", "[\\fIoptions\\fR]"]
        }
        out.append(".SH DESCRIPTION")
        if docs.hasSubcommands {
            out.append(
                escape(
                    "\(docs.summary.prefix(1).uppercased())\(docs.summary.dropFirst()). "
                        + "Each command below takes its own options; -h or --help after a command prints them."))
            out.append(".SH COMMANDS")
            for spec in docs.commands {
                out += [".SS \(escape(spec.synopsis))", escape(spec.summary)]
                if !spec.details.isEmpty { out += [".PP", escape(spec.details)] }
                out += entries(spec)
            }
        } else if let spec = docs.commands.first {
            if !spec.details.isEmpty { out.append(escape(spec.details)) }
            out.append(".SH OPTIONS")
            out += entries(spec)
            out += [".TP", "\\fB\\-h\\fR, \\fB\\-\\-help\\fR", "print the options and exit"]
        }
        out += [
            ".SH EXIT STATUS", escape(docs.hasSubcommands ? ExitCode.summary : ExitCode.daemonSummary),
            ".SH FILES", ".TP", "\\fI$XDG_RUNTIME_DIR/winkd/events.sock\\fR", "the event socket of a user's winkd",
            ".TP", "\\fI/run/winkd/events.sock\\fR", "the event socket of the system service",
            ".SH SEE ALSO", docs.name == "winkd" ? "\\fBwinkctl\\fR(1)" : "\\fBwinkd\\fR(1)",
            "and the README of the source tree.",
        ]
        return out.joined(separator: "\n") + "\n"
    }

    private static func entries(_ spec: CommandSpec) -> [String] {
        var out: [String] = []
        for operand in spec.operands { out += [".TP", "\\fI\(escape(operand.name))\\fR", escape(operand.help)] }
        for option in spec.options {
            let names = (option.aliases + [option.name]).map { "\\fB\(escape($0))\\fR" }.joined(separator: ", ")
            let value = option.value == .flag ? "" : " \\fI\(escape(option.value.placeholder))\\fR"
            out += [
                ".TP", names + value, escape(option.help + (option.defaultValue.map { " (default: \($0))" } ?? "")),
            ]
        }
        return out
    }

    /// Text safe in a man page line: backslashes doubled as `\e`, hyphens as `\-`, and a leading `.` or `'`
    /// (a request) guarded with `\&`.
    static func escape(_ text: String) -> String {
        var s = text.replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "-", with: "\\-")
        if s.hasPrefix(".") || s.hasPrefix("'") { s = "\\&" + s }
        return s
    }
}

/// Shell completion scripts from `ProgramDocs`: subcommands, their options, and for each option's value
/// file names, directory names or its fixed words (`OptionSpec.Value`).
enum ShellCompletion {
    enum Shell: String, CaseIterable { case bash, zsh, fish }

    static func script(for docs: ProgramDocs, shell: Shell) -> String {
        switch shell {
        case .bash: return bash(docs)
        case .zsh: return zsh(docs)
        case .fish: return fish(docs)
        }
    }

    // MARK: bash

    private static func bash(_ docs: ProgramDocs) -> String {
        let function = "_\(docs.name)_complete"
        var out = [
            "# bash completion for \(docs.name) \(WinkVersion.current), generated by `winkctl completion bash "
            + "\(docs.name)`",
            "\(function)() {",
            "    local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"",
            "    COMPREPLY=()",
        ]
        func body(_ spec: CommandSpec, indent: String) -> [String] {
            var lines = ["\(indent)case \"$prev\" in"]
            for option in spec.options where option.value != .flag {
                let pattern = option.spellings.joined(separator: "|")
                let action: String
                switch option.value {
                case .file: action = "compgen -f -- \"$cur\""
                case .directory: action = "compgen -d -- \"$cur\""
                case .choice(let words): action = "compgen -W \"\(words.joined(separator: " "))\" -- \"$cur\""
                case .text, .flag: action = ""
                }
                lines.append("\(indent)    \(pattern)) \(action.isEmpty ? "" : "COMPREPLY=($(\(action))); ")return ;;")
            }
            let words = (spec.options.flatMap(\.spellings) + ["--help"]).joined(separator: " ")
            lines += [
                "\(indent)esac",
                "\(indent)if [[ \"$cur\" == -* ]]; then",
                "\(indent)    COMPREPLY=($(compgen -W \"\(words)\" -- \"$cur\"))",
                spec.operands.isEmpty
                    ? "\(indent)fi" : "\(indent)else\n\(indent)    COMPREPLY=($(compgen -f -- \"$cur\"))\n\(indent)fi",
            ]
            return lines
        }
        if docs.hasSubcommands {
            let names = docs.commands.map(\.name).joined(separator: " ")
            out += [
                "    if [[ $COMP_CWORD -eq 1 ]]; then",
                "        COMPREPLY=($(compgen -W \"\(names) --help --version\" -- \"$cur\"))",
                "        return",
                "    fi",
                "    case \"${COMP_WORDS[1]}\" in",
            ]
            for spec in docs.commands {
                out.append("    \(spec.name))")
                if spec.name == "help" {
                    out += ["        COMPREPLY=($(compgen -W \"\(names)\" -- \"$cur\")) ;;"]
                    continue
                }
                if spec.name == "completion" {
                    out += ["        COMPREPLY=($(compgen -W \"bash zsh fish winkd winkctl\" -- \"$cur\")) ;;"]
                    continue
                }
                if spec.name == "manual" {
                    out += ["        COMPREPLY=($(compgen -W \"winkd winkctl\" -- \"$cur\")) ;;"]
                    continue
                }
                out += body(spec, indent: "        ")
                out.append("        ;;")
            }
            out.append("    esac")
        } else if let spec = docs.commands.first {
            out += body(spec, indent: "    ")
        }
        out += ["}", "complete -F \(function) \(docs.name)", ""]
        return out.joined(separator: "\n")
    }

    // MARK: zsh

    /// `[`, `]`, `:` and `\` are special inside an `_arguments` spec; `'` ends the quoted word.
    private static func zshEscape(_ text: String) -> String {
        var s = ""
        for c in text {
            switch c {
            case "[", "]", ":", "\\": s += "\\\(c)"
            case "'": s += "'\\''"
            default: s.append(c)
            }
        }
        return s
    }

    private static func zshArguments(_ spec: CommandSpec) -> [String] {
        var specs: [String] = []
        for option in spec.options {
            let action: String
            switch option.value {
            case .flag: action = ""
            case .file(let p): action = ":\(zshEscape(p)):_files"
            case .directory(let p): action = ":\(zshEscape(p)):_files -/"
            case .choice(let words): action = ":value:(\(words.joined(separator: " ")))"
            case .text(let p): action = ":\(zshEscape(p)): "
            }
            for spelling in option.spellings {
                specs.append("'\(spelling)[\(zshEscape(option.help))]\(action)'")
            }
        }
        specs.append("'(- *)'{-h,--help}'[print the options and exit]'")
        for (i, operand) in spec.operands.enumerated() {
            specs.append("'\(operand.name.hasSuffix("...") ? "*" : "\(i + 1)"):\(zshEscape(operand.name)):_files'")
        }
        return specs
    }

    private static func zsh(_ docs: ProgramDocs) -> String {
        var out = [
            "#compdef \(docs.name)",
            "# zsh completion for \(docs.name) \(WinkVersion.current), generated by `winkctl completion zsh "
            + "\(docs.name)`",
            "_\(docs.name)() {",
        ]
        if docs.hasSubcommands {
            out += ["    local -a commands", "    commands=("]
            out += docs.commands.map { "        '\($0.name):\(zshEscape($0.summary))'" }
            out += [
                "    )",
                "    if (( CURRENT == 2 )); then",
                "        _describe -t commands 'winkctl command' commands",
                "        return",
                "    fi",
                "    local command=$words[2]",
                "    shift words",
                "    (( CURRENT-- ))",
                "    case $command in",
            ]
            for spec in docs.commands {
                switch spec.name {
                case "help": out.append("    help) _describe -t commands 'winkctl command' commands ;;")
                case "completion":
                    out.append("    completion) _values 'shell or program' bash zsh fish winkd winkctl ;;")
                case "manual": out.append("    manual) _values 'program' winkd winkctl ;;")
                default:
                    out.append("    \(spec.name)) _arguments -s \\")
                    out += zshArguments(spec).map { "        \($0) \\" }
                    out[out.count - 1].removeLast(2)
                    out.append("        ;;")
                }
            }
            out.append("    esac")
        } else if let spec = docs.commands.first {
            out.append("    _arguments -s \\")
            out += zshArguments(spec).map { "        \($0) \\" }
            out[out.count - 1].removeLast(2)
        }
        out += ["}", "_\(docs.name) \"$@\"", ""]
        return out.joined(separator: "\n")
    }

    // MARK: fish

    private static func fishQuote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }

    private static func fishOptions(_ spec: CommandSpec, program: String, condition: String?) -> [String] {
        let prefix = "complete -c \(program)" + (condition.map { " -n \(fishQuote($0))" } ?? "")
        var out: [String] = []
        for option in spec.options {
            var names = ""
            for spelling in option.spellings {
                names += spelling.hasPrefix("--") ? " -l \(spelling.dropFirst(2))" : " -s \(spelling.dropFirst())"
            }
            let value: String
            switch option.value {
            case .flag: value = ""
            case .file: value = " -r -F"
            case .directory: value = " -r -a '(__fish_complete_directories)'"
            case .choice(let words): value = " -x -a \(fishQuote(words.joined(separator: " ")))"
            case .text: value = " -x"
            }
            out.append("\(prefix)\(names)\(value) -d \(fishQuote(option.help))")
        }
        return out
    }

    private static func fish(_ docs: ProgramDocs) -> String {
        var out = [
            "# fish completion for \(docs.name) \(WinkVersion.current), generated by `winkctl completion fish "
            + "\(docs.name)`",
            "complete -c \(docs.name) -s h -l help -d 'print the options and exit'",
        ]
        if docs.hasSubcommands {
            let names = docs.commands.map(\.name).joined(separator: " ")
            out.append("complete -c \(docs.name) -n '__fish_use_subcommand' -l version -d 'print the version and exit'")
            for spec in docs.commands {
                out.append(
                    "complete -c \(docs.name) -f -n '__fish_use_subcommand' -a \(spec.name) -d "
                    + "\(fishQuote(spec.summary))"
                )
            }
            for spec in docs.commands {
                let condition = "__fish_seen_subcommand_from \(spec.name)"
                switch spec.name {
                case "help": out.append("complete -c \(docs.name) -f -n \(fishQuote(condition)) -a \(fishQuote(names))")
                case "completion":
                    out.append(
                        "complete -c \(docs.name) -f -n \(fishQuote(condition)) -a 'bash zsh fish winkd winkctl'")
                case "manual": out.append("complete -c \(docs.name) -f -n \(fishQuote(condition)) -a 'winkd winkctl'")
                default:
                    if spec.operands.isEmpty { out.append("complete -c \(docs.name) -f -n \(fishQuote(condition))") }
                    out += fishOptions(spec, program: docs.name, condition: condition)
                }
            }
        } else if let spec = docs.commands.first {
            out += fishOptions(spec, program: docs.name, condition: nil)
        }
        return out.joined(separator: "\n") + "\n"
    }
}
