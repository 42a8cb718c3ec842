import EventServer
import Expressions
import FaceTracking
import Foundation
import Testing
import WinkCore

@testable import WinkDaemon

/// Issue 15, items 1 and 2: the default configuration and profile locations, `--config` naming a missing
/// file, the report of the configuration in effect, and the commented sample.
struct ConfigurationLocationTests {
    /// A user folder and a system folder under a fresh temporary directory.
    struct Folders {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "winkd-loc-\(UUID().uuidString.prefix(8))")
        var user: URL { root.appendingPathComponent("xdg/winkd") }
        var system: URL { root.appendingPathComponent("etc/winkd") }
        var location: Configuration.Location {
            Configuration.Location(
                environment: ["XDG_CONFIG_HOME": root.appendingPathComponent("xdg").path],
                systemDirectory: system.path)
        }
        func write(_ text: String, to folder: URL, _ name: String = "config.json") throws {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: folder.appendingPathComponent(name))
        }
    }

    @Test func theUserFolderComesFromXDGConfigHomeElseHomeAndASystemUserHasNone() {
        #expect(
            Configuration.Location(environment: ["XDG_CONFIG_HOME": "/x", "HOME": "/home/me"]).userDirectory
                == "/x/winkd")
        #expect(
            Configuration.Location(environment: ["XDG_CONFIG_HOME": "relative", "HOME": "/home/me"]).userDirectory
                == "/home/me/.config/winkd")
        #expect(Configuration.Location(environment: ["HOME": "/"]).userDirectory == nil)
        #expect(Configuration.Location(environment: [:]).candidates("config.json") == ["/etc/winkd/config.json"])
        #expect(
            Configuration.Location(environment: ["HOME": "/home/me"]).candidates("config.json")
                == ["/home/me/.config/winkd/config.json", "/etc/winkd/config.json"])
    }

    @Test func theUsersFileWinsOverTheSystemsAndNoFileIsTheDefaults() throws {
        let f = Folders()
        defer { try? FileManager.default.removeItem(at: f.root) }
        let request = ConfigurationRequest(location: f.location)
        #expect(try request.load().path == nil)
        try f.write(#"{"quality": {"maximumYaw": 20}}"#, to: f.system)
        #expect(try request.load().quality.maximumYaw == 20)
        try f.write(#"{"quality": {"maximumYaw": 10}}"#, to: f.user)
        let c = try request.load()
        #expect(c.quality.maximumYaw == 10 && c.path == f.user.appendingPathComponent("config.json").path)
        // --config wins over both.
        try f.write(#"{"mirrored": true}"#, to: f.root, "mine.json")
        let mine = try ConfigurationRequest(
            configPath: f.root.appendingPathComponent("mine.json").path, location: f.location
        ).load()
        #expect(mine.mirrored && mine.quality.maximumYaw == QualityGate().maximumYaw)
    }

    @Test func aProfileAtTheDefaultLocationIsPickedUpUnlessOneIsNamed() throws {
        let f = Folders()
        defer { try? FileManager.default.removeItem(at: f.root) }
        try f.write("{}", to: f.user, "profile.json")
        let found = f.user.appendingPathComponent("profile.json").path
        #expect(try ConfigurationRequest(location: f.location).load().profilePath == found)
        #expect(try ConfigurationRequest(profilePath: "/p.json", location: f.location).load().profilePath == "/p.json")
        try f.write(#"{"profile": "other.json"}"#, to: f.user)
        #expect(
            try ConfigurationRequest(location: f.location).load().resolvedProfilePath
                == f.user.appendingPathComponent("other.json").path)
        #expect(try ConfigurationRequest().load().profilePath == nil, "without a location nothing is searched")
    }

    /// A symbolic link at the default location whose target is gone (a dotfiles folder moved) was passed
    /// over: the system file or the built-in defaults were used without a word (a newcomer's finding).
    @Test func aDanglingLinkAtTheDefaultLocationIsSaidSo() throws {
        let f = Folders()
        defer { try? FileManager.default.removeItem(at: f.root) }
        try f.write("{}", to: f.system)
        try FileManager.default.createDirectory(at: f.user, withIntermediateDirectories: true)
        let link = f.user.appendingPathComponent("config.json").path
        let gone = f.root.appendingPathComponent("dotfiles/winkd.json").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: gone)
        do {
            _ = try ConfigurationRequest(location: f.location).load()
            Issue.record("the dangling link was passed over")
        } catch let error as Configuration.Missing {
            #expect(error.exitCode == .noInput)
            #expect(error.description == "\(link): a symbolic link to \(gone), which does not exist")
        }
        // A loop of links is not "does not exist" (it exists; it cannot be followed).
        let one = f.root.appendingPathComponent("one").path, two = f.root.appendingPathComponent("two").path
        try FileManager.default.createSymbolicLink(atPath: one, withDestinationPath: two)
        try FileManager.default.createSymbolicLink(atPath: two, withDestinationPath: one)
        try FileManager.default.removeItem(atPath: link)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: one)
        do {
            _ = try ConfigurationRequest(location: f.location).load()
            Issue.record("the looping link was passed over")
        } catch let error as Configuration.Unreadable {
            #expect(error.description
                == "\(link): cannot read the configuration file (ELOOP: Too many levels of symbolic links)")
        }
        // The profile found at a default location the same way: a dangling link said "no such calibration
        // profile" and stopped winkd (helper-32).
        try FileManager.default.removeItem(atPath: link)
        let profile = f.user.appendingPathComponent("profile.json").path
        try FileManager.default.createSymbolicLink(atPath: profile, withDestinationPath: gone)
        do {
            _ = try ConfigurationRequest(location: f.location).load().applyingProfile()
            Issue.record("the dangling profile link was passed over")
        } catch let error as CalibrationProfileError {
            #expect(error.description == "\(profile): a symbolic link to \(gone), which does not exist")
        }
    }

    @Test func aMissingConfigFileIs66AndABrokenDefaultOneIs78NamingIt() throws {
        let f = Folders()
        defer { try? FileManager.default.removeItem(at: f.root) }
        do {
            _ = try ConfigurationRequest(configPath: "/nonexistent/winkd.json").load()
            Issue.record("expected Configuration.Missing")
        } catch let error as Configuration.Missing {
            #expect(
                error.exitCode == .noInput && error.description == "/nonexistent/winkd.json: no such configuration file"
            )
        }
        // A directory named as the file (it said only "cannot read" with exit 78): 66, with the reason.
        try FileManager.default.createDirectory(at: f.root, withIntermediateDirectories: true)
        do {
            _ = try ConfigurationRequest(configPath: f.root.path).load()
            Issue.record("expected Configuration.Unreadable")
        } catch let error as Configuration.Unreadable {
            #expect(error.exitCode == .noInput)
            #expect(error.description == "\(f.root.path): cannot read the configuration file (EISDIR: Is a directory)")
        }
        try f.write(#"{"mirrored": "#, to: f.user)
        do {
            _ = try ConfigurationRequest(location: f.location).load()
            Issue.record("expected Configuration.Invalid")
        } catch let error as Configuration.Invalid {
            #expect(error.exitCode == .configuration)
            #expect(error.description.hasPrefix(f.user.appendingPathComponent("config.json").path + ": not valid JSON"))
        }
    }

    @Test func logLevelIsValidatedNamingTheKeyAndTheLevels() throws {
        #expect(try Configuration.parse(Data(#"{"logLevel": "debug"}"#.utf8)).logLevel == .debug)
        do {
            _ = try Configuration.parse(Data(#"{"logLevel": "verbose"}"#.utf8), path: "c.json")
            Issue.record("expected Configuration.Invalid")
        } catch let error as Configuration.Invalid {
            #expect(error.description == "c.json: logLevel: expected one of error, warning, notice, info, debug")
        }
    }

    @Test func theReportSaysWhereEachValueCameFrom() throws {
        let f = Folders()
        defer { try? FileManager.default.removeItem(at: f.root) }
        try f.write(
            #"{"logLevel": "notice", "quality": {"maximumYaw": 20}, "analyzers": [{"event": "smile", "enter": 0.6}]}"#,
            to: f.user)
        let request = ConfigurationRequest(mirrored: true, location: f.location)
        let report = ConfigurationReport(configuration: try request.load(), request: request, logLevelFlag: .debug)
        let file = f.user.appendingPathComponent("config.json").path
        func setting(_ key: String) -> ConfigurationReport.Setting? { report.settings.first { $0.key == key } }
        #expect(report.file == file && report.fileChosenBy == "default location")
        #expect(
            setting("logLevel")
                == .init(
                    key: "logLevel", value: "\"debug\"", unit: "error, warning, notice, info or debug",
                    from: "--log-level"))
        #expect(setting("mirrored")?.from == "--mirrored" && setting("mirrored")?.value == "true")
        #expect(
            setting("quality.maximumYaw") == .init(key: "quality.maximumYaw", value: "20", unit: "degrees", from: file))
        #expect(setting("quality.maximumPitch")?.from == "default")
        #expect(setting("analyzers.smile.enter")?.value == "0.6" && setting("analyzers.smile.enter")?.from == file)
        #expect(setting("analyzers.smile.exit")?.from == "default")
        #expect(setting("coefficients.eyeStateWeight")?.value == "0.85")
        let text = report.text()
        #expect(text.contains("# file: \(file) (default location)\n"))
        #expect(
            text.split(separator: "\n").contains {
                $0.hasPrefix("quality.maximumYaw = 20 ") && $0.hasSuffix("# degrees; \(file)")
            })
        // Every comment that fits in the column is in one column (calibration.expressiveSamplesPerSecond and
        // maximumNeutralEyeClosed stuck out by two characters at a fixed 40); longer lines keep two spaces.
        let hashes = text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line in
            line.range(of: "  # ").map { line.distance(from: line.startIndex, to: $0.upperBound) - 2 } ?? -1
        }
        #expect(!hashes.contains(-1))
        let columns = Set(hashes.filter { $0 <= ConfigurationReport.commentColumn })
        #expect(columns.count == 1, "\(columns)")
        let json = try #require(JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any])
        #expect((json["settings"] as? [[String: Any]])?.count == report.settings.count)
    }

    /// The commented sample in the repository parses once its comments are gone, and shows every top-level
    /// key the parser knows.
    @Test func theSampleParsesAndListsEveryTopLevelKey() throws {
        let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("systemd/config.sample.jsonc")
        let json = Self.strippingComments(try String(contentsOf: sample, encoding: .utf8))
        let c = try Configuration.parse(Data(json.utf8), path: sample.path)
        let keys = try #require(JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]).keys
        #expect(Set(keys) == Configuration.knownKeys)
        #expect(c.coefficients == CoefficientModel() && c.quality == QualityGate() && c.calibration == .init())
        #expect(
            c.tracker == TrackerSettings() && c.socketMode == 0o600 && c.maximumClients == 64
                && !c.overlayOutputConfigured)
        // Each settings section lists every key its type reads (calibration.maximumNeutralEyeClosed was
        // missing while the README said the sample shows every key).
        let root = try #require(JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        func encodedKeys(_ value: some Encodable) throws -> Set<String> {
            Set(try #require(JSONSerialization.jsonObject(with: JSONEncoder().encode(value)) as? [String: Any]).keys)
        }
        let sections: [(String, Set<String>)] = [
            ("coefficients", try encodedKeys(CoefficientModel())), ("quality", try encodedKeys(QualityGate())),
            ("tracker", try encodedKeys(TrackerSettings())),
            ("calibration", try encodedKeys(Calibration.Settings())),
        ]
        for (name, expected) in sections {
            let given = Set((root[name] as? [String: Any]).map { Array($0.keys) } ?? [])
            #expect(given == expected, "\(name): the sample lacks \(expected.subtracting(given).sorted())")
        }
    }

    /// `text` without `//` comments (outside strings).
    static func strippingComments(_ text: String) -> String {
        var out = ""
        var inString = false
        var escaped = false
        var chars = Array(text)[...]
        while let ch = chars.first {
            chars = chars.dropFirst()
            if inString {
                out.append(ch)
                if escaped {
                    escaped = false
                } else if ch == "\\" {
                    escaped = true
                } else if ch == "\"" {
                    inString = false
                }
            } else if ch == "/" && chars.first == "/" {
                while let next = chars.first, next != "\n" { chars = chars.dropFirst() }
            } else {
                if ch == "\"" { inString = true }
                out.append(ch)
            }
        }
        return out
    }
}

/// Issue 15, item 9: the log's level, its `<N>` prefixes, and the server's lines held during start-up.
struct DaemonLogTests {
    @Test func prefixesUnlessStderrIsATerminalButAlwaysUnderJournald() {
        #expect(!DaemonLog.usesPrefixes(stderrIsTerminal: true, environment: [:]))
        #expect(DaemonLog.usesPrefixes(stderrIsTerminal: false, environment: [:]))
        #expect(DaemonLog.usesPrefixes(stderrIsTerminal: true, environment: ["JOURNAL_STREAM": "8:1234"]))
        #expect(DaemonLog(prefixed: true).line(.notice, "listening") == "<5>winkd: listening\n")
        #expect(DaemonLog(prefixed: false).line(.notice, "listening") == "winkd: listening\n")
    }

    /// A client's text in a message cannot make a second line (a forged `<0>` emergency entry) or reach a
    /// terminal as an escape sequence; NUL, DEL, C1 and the Unicode line separators are escaped too.
    @Test func aMessageIsOneLineWhateverItHolds() {
        let message = "unknown event 'x\n<0>winkd: forged\u{1b}[31m\0\u{7f}\u{85}\u{2028}'"
        let line = DaemonLog(prefixed: true).line(.notice, message)
        #expect(line == "<5>winkd: unknown event 'x\\n<0>winkd: forged\\u{1b}[31m\\u{0}\\u{7f}\\u{85}\\u{2028}'\n")
        #expect(visibleControlCharacters("a\nb\tc", keepingNewlines: true) == "a\nb\\tc")
        #expect(visibleControlCharacters("plain ünïcode") == "plain ünïcode")
    }

    @Test func messagesBelowTheThresholdAreLeftOut() {
        let log = DaemonLog(threshold: .notice, prefixed: false)
        #expect(log.line(.info, "client 1 connected") == nil && log.line(.warning, "w") != nil)
        #expect(DaemonLog(prefixed: false).line(.debug, "d") == nil, "info is the default")
        #expect(EventServer.LogLevel.names == ["error", "warning", "notice", "info", "debug"])
        #expect(EventServer.LogLevel(name: "warning") == .warning && EventServer.LogLevel(name: "WARN") == nil)
    }

    @Test func logLevelFlagWinsOverTheFileAndAnUnknownLevelIsAUsageError() throws {
        let f = ConfigurationLocationTests.Folders()
        defer { try? FileManager.default.removeItem(at: f.root) }
        try f.write(#"{"logLevel": "warning"}"#, to: f.root.appendingPathComponent("xdg/winkd"))
        let env = ["XDG_CONFIG_HOME": f.root.appendingPathComponent("xdg").path]
        var args = Arguments(["--socket", "/tmp/x.sock"])
        #expect(try DaemonOptions(&args, environment: env).effectiveLogLevel == .warning)
        args = Arguments(["--socket", "/tmp/x.sock", "--log-level", "debug"])
        #expect(try DaemonOptions(&args, environment: env).effectiveLogLevel == .debug)
        args = Arguments(["--log-level", "loud"])
        #expect(throws: UsageError.self) { try DaemonOptions(&args, environment: env) }
    }

    /// Per-client lines in order: what the server logs while the daemon starts is held and written first,
    /// in order, before any later line; a failed start drops it.
    @Test func linesHeldDuringStartUpComeFirstAndInOrder() {
        final class Lines: @unchecked Sendable {
            let lock = NSLock()
            var all: [String] = []
        }
        let lines = Lines()
        let gate = StartupLogGate { _, message in lines.lock.withLock { lines.all.append(message) } }
        gate(.info, "client 1 connected")
        gate(.debug, "client 1 subscribed to every event")
        #expect(lines.lock.withLock { lines.all }.isEmpty)
        gate.open()
        gate(.info, "client 1 closed (done)")
        #expect(
            lines.lock.withLock { lines.all }
                == ["client 1 connected", "client 1 subscribed to every event", "client 1 closed (done)"])
        let failed = StartupLogGate { _, message in lines.lock.withLock { lines.all.append(message) } }
        failed(.info, "client 2 connected")
        failed.discard()
        #expect(lines.lock.withLock { lines.all }.count == 3)
    }
}
