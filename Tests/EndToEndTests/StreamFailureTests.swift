import Foundation
import TestSupport
import Testing

/// Faults a newcomer found in how the programs write and read: a log or an output that cannot be written,
/// a log line forged by a client, a FIFO where a configuration should be. Each with the input that showed it.
@Suite(.serialized)
struct StreamFailureTests {
    /// winkd with the wink recording on a fresh socket, stderr to `stderr` (a file or /dev/full).
    func startDaemon(in dir: URL, stderr: FileHandle, extra: [String] = []) throws -> (Process, String) {
        let socket = dir.appendingPathComponent("s.sock").path
        let daemon = Process()
        daemon.executableURL = Binaries.directory.appendingPathComponent("winkd")
        daemon.arguments =
            ["--source", Binaries.fixture("video/single_face_wink_left.mp4"), "--loop", "--socket", socket] + extra
        daemon.standardError = stderr
        daemon.standardOutput = FileHandle.nullDevice
        try daemon.run()
        #expect(Wait.forFile(socket), "winkd did not create \(socket)")
        return (daemon, socket)
    }

    /// `startDaemon` with its log in `dir/winkd.txt`: the process, the socket and the log file.
    func startDaemonLogging(in dir: URL, extra: [String] = []) throws -> (Process, String, URL) {
        let log = dir.appendingPathComponent("winkd.txt")
        try #require(FileManager.default.createFile(atPath: log.path, contents: nil))
        let (daemon, socket) = try startDaemon(in: dir, stderr: try FileHandle(forWritingTo: log), extra: extra)
        return (daemon, socket, log)
    }

    func connect(_ socket: String) -> RawClient? { Wait.value { RawClient(path: socket) } }

    func stop(_ daemon: Process) -> Int32 {
        kill(daemon.processIdentifier, SIGTERM)
        _ = Wait.forExit(daemon)
        return daemon.terminationStatus
    }

    /// winkd died (SIGILL, 132) on its first log line that could not be written: `FileHandle.write` traps.
    /// With its stderr on a full device it now serves clients and stops cleanly.
    @Test func winkdWhoseLogCannotBeWrittenKeepsServing() throws {
        let dir = try Binaries.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let full = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full"))
        let (daemon, socket) = try startDaemon(in: dir, stderr: full)
        for _ in 0..<3 {  // each connection is a log line
            let r = try Binaries.run("winkctl", ["status", "--socket", socket])
            #expect(r.status == 0, "\(r.stderr)")
        }
        let events = try Binaries.run("winkctl", ["events", "--socket", socket, "--count", "1"])
        #expect(events.status == 0 && events.stdout.contains("\"type\":\"event\""), "\(events.stderr)")
        #expect(daemon.isRunning)
        #expect(stop(daemon) == 0)
    }

    /// Any winkctl command died (132) when stderr could not be written; a usage error is still 64.
    @Test func winkctlWhoseStderrIsFullStillExitsWithItsCode() throws {
        let p = Process()
        p.executableURL = Binaries.directory.appendingPathComponent("winkctl")
        p.arguments = ["events", "--bogus"]
        p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full"))
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationReason == .exit && p.terminationStatus == 64)
    }

    /// `winkctl events > /dev/full` lost every line and exited 0 (every write error was taken for a closed
    /// pipe); `winkctl input --dry-run > /dev/full` died (132). Both are now 74 with one line; a reader that
    /// goes away (EPIPE) still ends them quietly.
    @Test func anOutputOnAFullDiskIs74() throws {
        let dir = try Binaries.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (daemon, socket, _) = try startDaemonLogging(in: dir)
        defer { _ = stop(daemon) }
        let map = dir.appendingPathComponent("map.json")
        try Data(#"{"mappings": [{"event": "winkLeft", "action": {"key": "KEY_LEFT"}}]}"#.utf8).write(to: map)
        for arguments in [
            ["events", "--socket", socket],
            ["input", "--map", map.path, "--dry-run", "--once", "--socket", socket],
        ] {
            let p = Process()
            p.executableURL = Binaries.directory.appendingPathComponent("winkctl")
            p.arguments = arguments
            p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full"))
            let errors = Pipe()
            p.standardError = errors
            try p.run()
            let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            #expect(p.terminationReason == .exit && p.terminationStatus == 74, "\(arguments[0]): \(said)")
            #expect(said == "winkctl: standard output: no space left on the device\n", "\(arguments[0]): \(said)")
        }
    }

    /// A client's text reached winkd's log with its newlines decoded: `{"type":"subscribe","events":
    /// ["x\n<0>winkd: EMERGENCY"]}` wrote a second line that journald reads at emergency priority, and
    /// escape sequences went to whoever read the log. The log now shows them escaped, on one line.
    @Test func aClientCannotForgeALogLine() throws {
        let dir = try Binaries.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (daemon, socket, log) = try startDaemonLogging(in: dir)
        let client = try #require(connect(socket))
        client.send(#"{"type":"subscribe","id":1,"events":["x\n<0>winkd: FORGED\u001b[31m"]}"#)
        let answer = client.read(until: { $0.contains { $0.contains("\"error\"") } })
        #expect(answer.contains { $0.contains("unknown_event") }, "\(answer)")
        // Lines logged while the model loads are held until it has loaded (and dropped if stopped before).
        #expect(Wait.until { ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains("unknown_event") })
        #expect(stop(daemon) == 0)
        let text = try String(contentsOf: log, encoding: .utf8)
        let forged = text.split(separator: "\n").filter { $0.contains("FORGED") }
        #expect(forged.count == 1 && !text.contains("\u{1b}"), "\(text)")
        #expect(forged.first?.contains(#"x\n<0>winkd: FORGED\u{1b}[31m"#) == true, "\(forged)")
        #expect(!text.split(separator: "\n").contains { $0.hasPrefix("<0>") })
    }

    /// A socket every user may connect to (`"socket": {"mode": "0777"}`) was taken without a word, though it
    /// hands this face's events to anybody on the machine (a newcomer's finding): one warning at start.
    @Test func aSocketOpenToEveryUserIsWarnedOf() throws {
        let dir = try Binaries.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = dir.appendingPathComponent("open.json")
        try Data(#"{"socket": {"mode": "0777"}}"#.utf8).write(to: config)
        let (daemon, _, log) = try startDaemonLogging(in: dir, extra: ["--config", config.path])
        #expect(Wait.until { ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains("listening on") })
        #expect(stop(daemon) == 0)
        let lines = try String(contentsOf: log, encoding: .utf8).split(separator: "\n")
        #expect(lines.filter { $0.contains("socket.mode 777 lets every user") }.count == 1, "\(lines)")
        #expect(lines.first { $0.contains("socket.mode") }?.hasPrefix("<4>") == true, "a warning: \(lines)")
        // The default (0600) says nothing.
        let quiet = dir.appendingPathComponent("quiet")
        try FileManager.default.createDirectory(at: quiet, withIntermediateDirectories: true)
        let (other, _, otherLog) = try startDaemonLogging(in: quiet)
        #expect(Wait.until { ((try? String(contentsOf: otherLog, encoding: .utf8)) ?? "").contains("listening on") })
        #expect(stop(other) == 0)
        #expect(!(try String(contentsOf: otherLog, encoding: .utf8)).contains("socket.mode"))
    }

    /// A FIFO at the configuration's path: winkd hung at start-up, and a SIGHUP reload froze its frame thread
    /// for good (reading a FIFO without a writer blocks). It is refused like any unreadable file: 66 at
    /// start-up, `reload_failed` on SIGHUP with frames going on.
    @Test func aFIFOInsteadOfAConfigurationIsRefused() throws {
        let dir = try Binaries.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let fifo = dir.appendingPathComponent("config.json").path
        #expect(mkfifo(fifo, 0o644) == 0)
        let r = try Binaries.run(
            "winkd", ["--config", fifo, "--source", Binaries.fixture("video/single_face.mp4"), "--socket",
                      dir.appendingPathComponent("x.sock").path])
        #expect(r.status == 66)
        #expect(r.stderrLines == ["winkd: \(fifo): cannot read the configuration file: not a regular file (a FIFO)"],
                "\(r.stderr)")

        let config = dir.appendingPathComponent("good.json")
        try Data("{}".utf8).write(to: config)
        let (daemon, socket, _) = try startDaemonLogging(in: dir, extra: ["--config", config.path])
        let client = try #require(connect(socket))
        #expect(client.subscribeToEverything())
        try FileManager.default.removeItem(at: config)
        #expect(mkfifo(config.path, 0o644) == 0)
        let reload = client.reload(daemon)
        let failure = try #require(reload.status, "\(reload.lines)")
        #expect(failure.contains("\"reload_failed\"") && failure.contains("not a regular file (a FIFO)"), "\(failure)")
        #expect(reload.framesAfter, "no frames after the reload")
        #expect(stop(daemon) == 0)
    }

    /// A file that exists but cannot be read said only "cannot be read" (labels, eye model) or "cannot read
    /// the input map" (and the profile, the layout), where the configuration gave the system's reason; a user
    /// whose file is not theirs to read was not told so. Every reader now names the errno. The tests run as
    /// root, whom no permission stops, so the file is `/proc/self/mem`: a regular file whose first byte
    /// fails to read (EIO). `evaluate --events-from` also blocked for ever on a FIFO named as a clip's lines.
    @Test func aFileThatCannotBeReadIsSaidWhy() throws {
        let video = Binaries.fixture("video/single_face.mp4")
        let mem = "/proc/self/mem"
        let cases: [([String], Int32, String)] = [
            (["evaluate", mem], 66, "cannot be read"),
            (["analyze", video, "--config", mem], 66, "cannot read the configuration file"),
            (["analyze", video, "--profile", mem], 66, "cannot read the calibration profile"),
            (["analyze", video, "--eye-model", mem], 78, "cannot be read"),
            (["input", "--map", mem], 66, "cannot read the input map"),
            (["overlay", "--layout", mem, video, "-o", "/tmp/unwritten-\(getpid()).mkv"], 66,
             "cannot read the layout file"),
        ]
        for (arguments, status, what) in cases {
            let r = try Binaries.run("winkctl", arguments)
            #expect(r.status == status, "\(arguments): \(r.stderr)")
            #expect(r.stderrLines == ["winkctl: \(mem): \(what) (EIO: Input/output error)"], "\(arguments)")
        }

        let dir = try Binaries.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let labels = Binaries.fixture("labels/single_face.labels.json")
        #expect(mkfifo(dir.appendingPathComponent("single_face.ndjson").path, 0o644) == 0)
        let r = try #require(
            try Binaries.runWithDeadline("winkctl", ["evaluate", labels, "--events-from", dir.path]),
            "evaluate blocked reading the FIFO")
        #expect(r.status == 66)
        #expect(r.stderrLines == ["winkctl: \(dir.path)/single_face.ndjson: not a regular file (a FIFO)"],
                "\(r.stderr)")
    }

    /// A file name or argument with a newline split winkctl's error and warning lines in two (a second line
    /// `<0>...` reads as an emergency under journald) and sent escape sequences to the terminal. Every line
    /// is now one line, its control characters escaped; a configuration's problems stay a line each.
    @Test func anErrorLineIsOneLineWhateverItNames() throws {
        let dir = try Binaries.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let name = dir.appendingPathComponent("clip\n<0>forged\u{1b}[2J.mp4").path
        let r = try Binaries.run("winkctl", ["analyze", name])
        #expect(r.status == 66)
        #expect(r.stderrLines.count == 1 && r.stderr.contains(#"clip\n<0>forged\u{1b}[2J.mp4"#), "\(r.stderr)")
        let usage = try Binaries.run("winkctl", ["analyze", name, "--rotate", "1\n<0>x"])
        #expect(usage.status == 64 && usage.stderrLines.count == 1, "\(usage.stderr)")
        let config = dir.appendingPathComponent("c.json")
        try Data(#"{"bogus": 1, "camera": {"fps": -1}}"#.utf8).write(to: config)
        let two = try Binaries.run("winkctl", ["config", "--config", config.path])
        let prefixed = two.stderrLines.allSatisfy { $0.hasPrefix("winkctl: ") }
        #expect(two.status == 78 && two.stderrLines.count == 2 && prefixed, "\(two.stderr)")
    }

    /// A FIFO given as the model (`--model`, `WINK_MODEL`, `--eye-model`) hung winkctl and winkd for ever
    /// without a word: dlib's read blocks on a FIFO without a writer. It is refused (78) naming it.
    @Test func aFIFOInsteadOfAModelIsRefused() throws {
        let dir = try Binaries.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let fifo = dir.appendingPathComponent("model.dat").path
        #expect(mkfifo(fifo, 0o644) == 0)
        let video = Binaries.fixture("video/single_face.mp4")
        for arguments in [["analyze", video, "--model", fifo], ["analyze", video, "--eye-model", fifo]] {
            let r = try Binaries.run("winkctl", arguments)
            #expect(r.status == 78 && r.stderrLines == ["winkctl: \(fifo): not a regular file (a FIFO)"],
                    "\(arguments[2]): \(r.stderr)")
        }
    }

    /// `winkctl input --once` exited 0 without a word when winkd went away without a bye (killed), where
    /// `winkctl events` says so with 69. It now says so too.
    @Test func inputOnceSaysWhenWinkdVanishes() throws {
        let dir = try Binaries.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (daemon, socket) = try startDaemon(in: dir, stderr: FileHandle.nullDevice)
        let map = dir.appendingPathComponent("map.json")
        try Data(#"{"mappings": [{"event": "winkLeft", "action": {"key": "KEY_LEFT"}}]}"#.utf8).write(to: map)
        let p = Process()
        p.executableURL = Binaries.directory.appendingPathComponent("winkctl")
        p.arguments = ["input", "--map", map.path, "--dry-run", "--once", "--socket", socket]
        p.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        p.standardError = errors
        try p.run()
        #expect(Wait.until { (try? Binaries.run("winkctl", ["status", "--socket", socket]))?.stdout
            .contains("clients: 2") == true }, "winkctl input did not connect")
        kill(daemon.processIdentifier, SIGKILL)
        daemon.waitUntilExit()
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 69, "\(said)")
        #expect(said.hasSuffix("winkctl: \(socket): winkd closed the connection without a bye\n"), "\(said)")
        try? FileManager.default.removeItem(atPath: socket)
    }

    /// Whether strace can run a program here (ptrace allowed), to deliver a signal at a chosen system call.
    static let straceWorks: Bool = {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/strace")
        p.arguments = ["-qq", "-o", "/dev/null", "/bin/true"]
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return false }
        p.waitUntilExit()
        return p.terminationStatus == 0
    }()

    /// A newcomer's finding: a signal while `analyze --plot` wrote its plot left the `.partial` file, and one
    /// while `overlay` wrote a still was swallowed (exit 0, the old file replaced). The signal now comes
    /// exactly as the output is being written (strace delivers it at the `fchmod` that gives the partial
    /// file the old file's mode): the old file stays, no partial file is left, and the exit says the signal.
    @Test(.enabled(if: straceWorks, "strace cannot trace here (install strace; ptrace must be allowed)"))
    func aSignalDuringAShortWriteKeepsTheOldFile() throws {
        let dir = try Binaries.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let layout = dir.appendingPathComponent("layout.json")
        try Data(
            #"{"layers": [{"feature": "eyes", "image": "\#(Binaries.fixture("overlays/sunglasses_rgba8.png"))"}]}"#.utf8
        ).write(to: layout)
        let plot = dir.appendingPathComponent("plot.png").path
        let still = dir.appendingPathComponent("still.png").path
        let cases: [(signal: String, status: Int32, arguments: [String], output: String, said: String?)] = [
            // Both exit 128 + the signal, saying what they kept.
            ("SIGTERM", 143, ["analyze", Binaries.fixture("video/single_face.mp4"), "--plot", plot, "--quiet"],
             plot, "analyze: stopped by SIGTERM after frame 71; the lines of the frames before were written; "
                + "no plot written, \(plot) was left as it was"),
            ("SIGINT", 130, ["overlay", Binaries.fixture("images/expressions/single_face.jpg"), "--layout",
                             layout.path, "-o", still, "--quiet"],
             still, "overlay: stopped by SIGINT; \(still) was left as it was"),
        ]
        for c in cases {
            try Data("old".utf8).write(to: URL(fileURLWithPath: c.output))
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/strace")
            p.arguments = [
                "-f", "-qq", "-o", "/dev/null", "-e", "trace=fchmod", "-e", "inject=fchmod:signal=\(c.signal)",
                Binaries.directory.appendingPathComponent("winkctl").path,
            ] + c.arguments
            let r = try Binaries.capture(p)
            #expect(r.status == c.status, "\(c.arguments[0]): \(r.stderr)")  // strace ends as its tracee did
            #expect(try Data(contentsOf: URL(fileURLWithPath: c.output)) == Data("old".utf8), "\(c.arguments[0])")
            let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains(".partial-") }
            #expect(left.isEmpty, "\(c.arguments[0]): \(left)")
            if let said = c.said { #expect(r.stderrLines.contains(said), "\(r.stderr)") }
        }
    }
}