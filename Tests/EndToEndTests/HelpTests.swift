import Foundation
import TestSupport
import Testing

/// What a user types first: help, versions, and a mistyped command.
@Suite struct HelpTests {
    static let commands = [
        "analyze", "evaluate", "cameras", "input", "events", "status", "config", "monitor", "overlay",
        "calibrate", "bench", "help", "completion", "manual",
    ]

    @Test func helpAndVersionOnBothPrograms() throws {
        for flag in ["--help", "-h"] {
            let winkd = try Binaries.run("winkd", [flag])
            #expect(winkd.status == 0 && winkd.stdout.hasPrefix("usage: winkd [options]"), "\(flag): \(winkd.stderr)")
            #expect(winkd.stdout.contains("--pace realtime|fast") && winkd.stdout.contains("(default: realtime)"))
            let winkctl = try Binaries.run("winkctl", [flag])
            #expect(winkctl.status == 0 && Self.commands.allSatisfy { winkctl.stdout.contains("  \($0) ") })
        }
        #expect(try Binaries.run("winkd", ["--version"]).stdout.hasPrefix("winkd "))
        #expect(try Binaries.run("winkctl", ["--version"]).stdout.hasPrefix("winkctl "))
    }

    /// `winkctl help CMD` is `winkctl CMD --help`, for every command; each lists its options.
    @Test func everyCommandHasHelp() throws {
        for command in Self.commands {
            let direct = try Binaries.run("winkctl", [command, "--help"])
            let viaHelp = try Binaries.run("winkctl", ["help", command])
            #expect(direct.status == 0 && direct.stdout.hasPrefix("usage: winkctl \(command)"), "\(command)")
            #expect(viaHelp.stdout == direct.stdout, "\(command)")
        }
    }

    /// Found by a newcomer: output that cannot be written (stdout on a full device) exited 0 for every
    /// command that prints with `print`; it is 74 with one line, as `analyze` already was.
    @Test func aFullStandardOutputIsExit74() throws {
        for arguments in [["--help"], ["manual", "winkd"], ["completion", "bash"], ["config"]] {
            let p = Process()
            p.executableURL = Binaries.directory.appendingPathComponent("winkctl")
            p.arguments = arguments
            let full = try #require(FileHandle(forWritingAtPath: "/dev/full"))
            let err = Pipe()
            p.standardOutput = full
            p.standardError = err
            try p.run()
            let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            #expect(p.terminationStatus == 74 && text == "winkctl: standard output: no space left on the device\n",
                    "\(arguments): \(p.terminationStatus) \(text)")
        }
    }

    /// A mistyped command is one line naming the nearest one, exit 64; so is a mistyped option.
    @Test func typosGetOneLineWithTheNearestName() throws {
        let command = try Binaries.run("winkctl", ["anlyze", "clip.mp4"])
        #expect(command.status == 64)
        #expect(
            command.stderrLines == [
                "winkctl: unknown command 'anlyze'; did you mean 'analyze'? (winkctl --help lists them)"
            ])
        let option = try Binaries.run("winkctl", ["events", "--coefficent"])
        #expect(
            option.status == 64
                && option.stderrLines == ["winkctl: unknown option '--coefficent'; did you mean --coefficients?"])
        let daemon = try Binaries.run("winkd", ["--sourse", "/dev/video0"])
        #expect(
            daemon.status == 64 && daemon.stderrLines == ["winkd: unknown option '--sourse'; did you mean --source?"])
    }

    /// Newcomer findings: winkd's help lists only its own exit codes and its own --config default; a
    /// declared option in the wrong company is not "did you mean" itself; `config` refuses a profile winkd
    /// would refuse.
    @Test func helpAndErrorsSayWhatEachProgramDoes() throws {
        let winkd = try Binaries.run("winkd", ["--help"])
        #expect(!winkd.stdout.contains("evaluate --min-f1") && winkd.stdout.contains("73 cannot create"))
        let config = try Binaries.run("winkctl", ["help", "analyze"])
        #expect(config.stdout.contains("built-in defaults"))
        let bench = try Binaries.run("winkctl", ["overlay", "--benchmark", "--layout", "x.json", "in.png"])
        #expect(bench.status == 64
            && bench.stderrLines == ["winkctl: '--layout' does not go with the other options given"])
        let profile = try Binaries.run("winkctl", ["config", "--profile", "/nonexistent/p.json"])
        #expect(profile.status == 66
            && profile.stderrLines
                == ["winkctl: /nonexistent/p.json: no such calibration profile (record one with winkctl calibrate)"])
        let printed = try Binaries.run("winkd", ["--print-config", "--profile", "/nonexistent/p.json"])
        #expect(printed.status == 66 && printed.stderrLines.count == 1)
    }

    /// Every command reads its whole command line before it fails for want of an operand: a command that
    /// read an option its spec does not declare would stop on a precondition instead of exiting 64.
    @Test func everyCommandParsesOnlyDeclaredOptions() throws {
        for command in ["analyze", "evaluate", "input", "overlay", "calibrate", "bench", "completion"] {
            let r = try Binaries.run("winkctl", [command])
            #expect(r.status == 64 && r.stderrLines.count == 1, "\(command): \(r.status) \(r.stderr)")
        }
        // A shell without a script was asked "which shell?" as if none had been named (a newcomer's finding).
        let tcsh = try Binaries.run("winkctl", ["completion", "tcsh"])
        #expect(tcsh.status == 64)
        #expect(tcsh.stderrLines == [
            "winkctl: completion: no completion script for the shell 'tcsh' (there are scripts for bash, zsh and fish)"
        ], "\(tcsh.stderr)")
    }
}

/// Scripts/install.sh, staged into a folder: binaries, plugin, man pages and completions where man and the
/// shells look, and the installed winkctl runs from there.
@Suite struct InstallScriptTests {
    @Test func installsEverythingWhereItIsLookedFor() throws {
        let stage = try Binaries.temporaryDirectory()
        let p = Process()
        p.executableURL = Binaries.repository.appendingPathComponent("Scripts/install.sh")
        var environment = ProcessInfo.processInfo.environment
        environment["DESTDIR"] = stage.path
        environment["PREFIX"] = "/usr/local"
        environment["BUILD_DIR"] = Binaries.directory.path
        p.environment = environment
        let result = try Binaries.capture(p)
        #expect(result.status == 0, "\(result.stderr)")
        let root = stage.appendingPathComponent("usr/local").path
        for file in [
            "bin/winkd", "bin/winkctl", "lib/winkd/libWinkCodecs.so", "share/man/man1/winkd.1",
            "share/man/man1/winkctl.1", "share/bash-completion/completions/winkctl",
            "share/bash-completion/completions/winkd", "share/zsh/site-functions/_winkctl",
            "share/zsh/site-functions/_winkd", "share/fish/vendor_completions.d/winkctl.fish",
            "share/fish/vendor_completions.d/winkd.fish",
        ] {
            #expect(FileManager.default.fileExists(atPath: "\(root)/\(file)"), "\(file)")
        }
        let page = try String(contentsOfFile: "\(root)/share/man/man1/winkd.1", encoding: .utf8)
        #expect(page.hasPrefix(".TH WINKD 1") && page.contains("\\-\\-always\\-on"))
        let installed = Process()
        installed.executableURL = URL(fileURLWithPath: "\(root)/bin/winkctl")
        installed.arguments = ["--version"]
        #expect(try Binaries.capture(installed).stdout.hasPrefix("winkctl "))
    }

    @Test func refusesWithoutABuild() throws {
        let p = Process()
        p.executableURL = Binaries.repository.appendingPathComponent("Scripts/install.sh")
        var environment = ProcessInfo.processInfo.environment
        environment["BUILD_DIR"] = "/nonexistent/build"
        environment["DESTDIR"] = try Binaries.temporaryDirectory().path
        p.environment = environment
        let result = try Binaries.capture(p)
        #expect(result.status == 66)
        #expect(
            result.stderr == "install.sh: /nonexistent/build/winkd is missing; build first: swift build -c release\n")
    }
}
