import Foundation
import Testing
import WinkCore

@testable import WinkDaemon
@testable import WinkctlCommands

/// `--help`, the man pages and the shell completions come from the same `CommandSpec`s: each holds every
/// option of every command, and the scripts and pages are valid for their shells and for groff.
@Suite struct CommandDocsTests {
    static let programs = [ProgramDocs.winkd, ProgramDocs.winkctl]

    @Test func helpListsEveryOptionWithItsDefault() {
        for spec in WinkctlMain.commands.map(\.spec) + [DaemonOptions.spec] {
            let help = spec.help(program: "winkctl")
            // Wrapped at 100 columns: compare with the runs of spaces and line breaks folded to one space.
            let folded = help.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
            // Option and operand rows (indented) wrap at 100 columns; a single word longer than that may not.
            let rows = help.split(separator: "\n").filter { $0.hasPrefix("  ") }
            #expect(rows.allSatisfy { $0.count <= 100 || !$0.dropFirst(30).contains(" ") },
                    "\(spec.name): a help row over 100 columns")
            for option in spec.options {
                #expect(help.contains(option.label), "\(spec.name): \(option.name)")
                if let value = option.defaultValue {
                    #expect(folded.contains("(default: \(value))"), "\(spec.name): \(option.name)")
                }
            }
            #expect(help.contains("--help") && help.contains(spec.exitCodes))
        }
    }

    @Test func manPagesAndCompletionsHoldEveryOption() {
        for docs in Self.programs {
            let page = ManPage.render(docs)
            let scripts = ShellCompletion.Shell.allCases.map { ShellCompletion.script(for: docs, shell: $0) }
            for spec in docs.commands {
                for option in spec.options {
                    #expect(page.contains(ManPage.escape(option.name)), "man \(docs.name): \(option.name)")
                    for (shell, script) in zip(ShellCompletion.Shell.allCases, scripts) {
                        let spelled = shell == .fish ? "-l \(option.name.dropFirst(2))" : option.name
                        #expect(script.contains(spelled), "\(shell) \(docs.name) \(spec.name): \(option.name)")
                    }
                }
            }
        }
    }

    /// groff reads the pages without a warning (`-ww` turns every warning on).
    @Test func groffReadsTheManPagesWithoutWarnings() throws {
        for docs in Self.programs {
            let result = try run("/usr/bin/groff", ["-man", "-Tutf8", "-ww", "-z"], input: ManPage.render(docs))
            #expect(result.status == 0 && result.errors.isEmpty, "\(docs.name): \(result.errors)")
        }
    }

    /// Each shell parses its script, and bash and fish complete real command lines with it.
    @Test func theShellsCompleteWithTheScripts() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("winkd-completion-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for docs in Self.programs {
            for shell in ShellCompletion.Shell.allCases {
                let file = directory.appendingPathComponent("\(docs.name).\(shell.rawValue)")
                try ShellCompletion.script(for: docs, shell: shell).write(to: file, atomically: true, encoding: .utf8)
                let checked = try run("/usr/bin/\(shell.rawValue)", ["-n", file.path])
                #expect(checked.status == 0, "\(shell) -n \(docs.name): \(checked.errors)")
            }
        }
        let bash = directory.appendingPathComponent("winkctl.bash").path
        func bashCompletes(_ words: [String]) throws -> [String] {
            let line =
                "source \(bash); COMP_WORDS=(\(words.map { "'\($0)'" }.joined(separator: " "))); "
                + "COMP_CWORD=\(words.count - 1); _winkctl_complete; printf '%s\\n' \"${COMPREPLY[@]}\""
            return try run("/usr/bin/bash", ["-c", line]).output.split(separator: "\n").map(String.init)
        }
        #expect(try bashCompletes(["winkctl", "ev"]) == ["evaluate", "events"])
        #expect(try bashCompletes(["winkctl", "analyze", "--co"]) == ["--config", "--coefficients"])
        #expect(try bashCompletes(["winkctl", "completion", "f"]) == ["fish"])
        let winkdBash = directory.appendingPathComponent("winkd.bash").path
        let pace = try run(
            "/usr/bin/bash",
            [
                "-c",
                "source \(winkdBash); COMP_WORDS=(winkd --pace ''); COMP_CWORD=2; "
                    + "_winkd_complete; printf '%s\\n' \"${COMPREPLY[@]}\"",
            ])
        #expect(pace.output == "realtime\nfast\n")

        let fish = directory.appendingPathComponent("winkctl.fish").path
        let fished = try run("/usr/bin/fish", ["-c", "source \(fish); complete -C'winkctl evaluate --ev'"])
        #expect(fished.output.hasPrefix("--events-from\t"), "\(fished.output)")
    }

    @Test func typosGetTheNearestName() {
        #expect(CommandSpec.nearest(to: "anlyze", in: WinkctlMain.commands.map(\.spec.name)) == "analyze")
        #expect(CommandSpec.nearest(to: "evnets", in: WinkctlMain.commands.map(\.spec.name)) == "events")
        #expect(CommandSpec.nearest(to: "xyzzy", in: WinkctlMain.commands.map(\.spec.name)) == nil)
        #expect(CommandSpec.editDistance("kitten", "sitting") == 3)
        var args = Arguments(["clip.mp4", "--coefficent"], spec: AnalyzeCommand.command.spec)
        _ = args.positional()
        #expect(throws: UsageError("unknown option '--coefficent'; did you mean --coefficients?")) { try args.finish() }
    }

    /// A newcomer's findings: `--` was an unknown option (`winkctl analyze -- --odd.mp4` could not name the
    /// file), and a flag given twice was taken as once while a valued option given twice was refused.
    @Test func aDoubleDashEndsTheOptionsAndAFlagGivenTwiceIsRefused() throws {
        let spec = AnalyzeCommand.command.spec
        var args = Arguments(["--quiet", "--", "--coefficients", "-x.mp4"], spec: spec)
        let quiet = args.flag("--quiet")
        let coefficients = args.flag("--coefficients")  // after --: a file name
        #expect(quiet && !coefficients)
        let first = args.positional()
        #expect(first == "--coefficients")
        #expect(throws: UsageError("unexpected argument '-x.mp4'")) { try args.finish() }
        var plot = Arguments(["clip.mp4", "--", "--plot", "p.png"], spec: spec)
        let value = try plot.option("--plot")
        #expect(value == nil)
        var trailing = Arguments(["clip.mp4", "--"], spec: spec)
        let (one, two) = (trailing.positional(), trailing.positional())
        #expect(one == "clip.mp4" && two == nil)
        try trailing.finish()
        var twice = Arguments(["clip.mp4", "--flip", "--coefficients", "--flip"], spec: spec)
        let (flip, withCoefficients, clip) = (twice.flag("--flip"), twice.flag("--coefficients"), twice.positional())
        #expect(flip && withCoefficients && clip == "clip.mp4")
        #expect(throws: UsageError("--flip given twice; give it once")) { try twice.finish() }
        // A flag with a value said "'--quiet' does not go with the other options given".
        var valued = Arguments(["clip.mp4", "--quiet=yes"], spec: spec)
        let (file, quiet2) = (valued.positional(), valued.flag("--quiet"))
        #expect(file == "clip.mp4" && !quiet2)
        #expect(throws: UsageError("--quiet takes no value (got '--quiet=yes')")) { try valued.finish() }
        // `-h` and `--help` after `--` are file names too (they printed the help).
        #expect(Arguments.asksForHelp(["clip.mp4", "-h"]) && Arguments.asksForHelp(["--help", "--", "x"]))
        #expect(!Arguments.asksForHelp(["--", "-h"]) && !Arguments.asksForHelp(["--quiet", "--", "--help"]))
    }

    /// Numbers are decimal: Swift's parser alone took `--rotate 0x10` as 16 degrees and `inf`/`nan` as
    /// numbers. The range in the message reads as in `--help` (`-180...180`, not `-180.0...180.0`).
    @Test func numbersAreDecimalAndRangesReadAsInHelp() throws {
        for bad in ["0x10", "inf", "nan", "1_0", " 5", "+", "-", ".", "e5", "12deg"] {
            var args = Arguments(["--rotate", bad])
            #expect(throws: UsageError("--rotate expects a number in -180...180, got '\(bad)'")) {
                try args.number("--rotate", in: -180.0...180.0)
            }
        }
        for (text, value) in [("12", 12.0), ("-0.5", -0.5), ("1e-3", 0.001), ("+7.25", 7.25), ("180", 180)] {
            var args = Arguments(["--rotate", text])
            #expect(try args.number("--rotate", in: -180.0...180.0) == value)
        }
        var scale = Arguments(["--scale", "9"])
        #expect(throws: UsageError("--scale expects a number in 0.05...4, got '9'")) {
            try scale.number("--scale", in: 0.05...4.0)
        }
        // The last of two used to win without a word: `-o x.png -o y.png` wrote only y.png.
        var twice = Arguments(["-o", "x.png", "--rotate", "5", "-o=y.png"])
        #expect(throws: UsageError("-o given twice ('x.png' and 'y.png'); give it once")) { try twice.option("-o") }
        // Its two spellings count as one option.
        var spelt = Arguments(["-o", "x.png", "--output=y.png"])
        #expect(throws: UsageError("--output given twice ('y.png' and 'x.png'); give it once")) {
            try spelt.option("--output", or: "-o")
        }
        var repeats = Arguments(["--repeat", "0x3"])
        #expect(throws: UsageError("--repeat expects a whole number in 1...1000, got '0x3'")) {
            try repeats.number("--repeat", in: 1...1000)
        }
        // An integer option says so: "a number in 1...1000" read as if 1.5 were allowed.
        var fraction = Arguments(["--repeat", "1.5"])
        #expect(throws: UsageError("--repeat expects a whole number in 1...1000, got '1.5'")) {
            try fraction.number("--repeat", in: 1...1000)
        }
    }

    private func run(_ program: String, _ arguments: [String], input: String? = nil) throws
        -> (status: Int32, output: String, errors: String)
    {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: program)
        p.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        let inp = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = inp
        try p.run()
        if let input { inp.fileHandleForWriting.write(Data(input.utf8)) }
        try inp.fileHandleForWriting.close()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
    }
}
