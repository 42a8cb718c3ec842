import Foundation
import Glibc
import TestSupport
import Testing

/// `winkctl monitor` in a pseudo-terminal of a fixed size (a detached tmux session), against winkd playing
/// a recording in real time; the screen is read back with `tmux capture-pane`. The monitor runs inside a
/// small bash wrapper that, once it ends, prints its exit status and the terminal's `icanon`/`echo` modes,
/// so a test sees whether the terminal was given back cooked.
@Suite(.serialized)
struct MonitorTests {
    /// A winkd on `single_face_wink_left.mp4`, looped (the wink comes back every 2.7 s), and a monitor on it.
    final class Session {
        let dir: URL
        let socket: String
        let daemon = Process()
        let pane: TmuxPane

        /// - Parameters:
        ///   - sourceName: a name to play the recording under (a symbolic link in the scratch folder).
        ///   - locale: `LC_ALL` for the monitor (default: the test's environment).
        init(columns: Int = 80, rows: Int = 24, options: [String] = [], sourceName: String? = nil,
             locale: String? = nil) throws {
            dir = try Binaries.temporaryDirectory()
            socket = dir.appendingPathComponent("events.sock").path
            var source = Binaries.fixture("video/single_face_wink_left.mp4")
            if let sourceName {
                let link = dir.appendingPathComponent(sourceName).path
                try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: source)
                source = link
            }
            daemon.executableURL = Binaries.directory.appendingPathComponent("winkd")
            daemon.arguments = ["--source", source, "--socket", socket, "--pace", "realtime", "--loop"]
            let log = dir.appendingPathComponent("winkd.log")
            try #require(FileManager.default.createFile(atPath: log.path, contents: nil))
            daemon.standardError = try FileHandle(forWritingTo: log)
            daemon.standardOutput = FileHandle.nullDevice
            try daemon.run()
            #expect(Wait.forFile(socket), "winkd did not create \(socket)")
            let winkctl = Binaries.directory.appendingPathComponent("winkctl").path
            pane = try TmuxPane(
                columns: columns, rows: rows,
                command: [
                    "bash", "-c",
                    (locale.map { "export LC_ALL=\($0); " } ?? "")
                        + "trap : INT; \"$0\" monitor --socket \"$1\" \"${@:2}\"; echo \"exit=$?\"; "
                        + "echo \"stty=$(stty -a | tr ' ;' '\\n\\n' | grep -x -- '-*icanon\\|-*echo' | tr '\\n' ' "
                        + "')\"; "
                        + "sleep 300",
                    winkctl, socket,
                ] + options)
        }

        deinit {
            pane.kill()
            if daemon.isRunning {
                daemon.terminate()
                daemon.waitUntilExit()
            }
        }

        /// The analyzer row `name`'s line on the screen (it starts with a space, or `*` while flashing), without
        /// trailing blanks.
        func row(_ name: String) -> String? {
            pane.screen().split(separator: "\n").first { $0.dropFirst().hasPrefix(name + " ") }
                .map { String($0.reversed().drop { $0 == " " }.reversed()) }  // blanks ncurses wrote at the end
        }

        /// Waits for the wrapper's report after the monitor ended; checks the terminal was restored.
        func expectEnded(withStatus status: Int32, _ comment: Comment? = nil) {
            #expect(Wait.until { pane.screen().contains("exit=\(status)") }, "\(pane.screen())")
            #expect(
                Wait.until { pane.screen().contains("stty=icanon echo") }, "terminal not restored: \(pane.screen())")
            #expect(pane.format("#{alternate_on}") == "0", "still on the alternate screen")
            #expect(pane.format("#{cursor_flag}") == "1", "cursor left hidden")
        }
    }

    @Test func drawsTheRowsWithThresholdsAndAWinkGoingPendingActiveIdle() throws {
        let s = try Session()
        // Every default row with its thresholds; the bar marks them with | (enter) and : (exit).
        #expect(Wait.until { s.row("winkLeft")?.contains("0.70/0.50") == true }, "\(s.pane.screen())")
        for name in ["blink", "eyesClosed", "winkLeft", "winkRight", "smile", "mouthOpen"] {
            #expect(s.row(name).map { $0.contains("[") && $0.contains("|") && $0.contains(":") } == true, "\(name)")
        }
        #expect(Wait.until { s.pane.screen().contains("face found") && s.pane.screen().contains(" fps") })
        #expect(s.pane.screen().contains("headYaw") && s.pane.screen().contains("eyeBlinkLeft"))
        // The wink: pending (held against minDuration), active (flashing as it fires), then idle again.
        #expect(
            Wait.until(interval: 0.02) {
                s.row("winkLeft")?.contains(" pending ") == true && s.row("winkLeft")?.contains("/0.25s") == true
            },
            "\(s.pane.screen())")
        #expect(Wait.until(interval: 0.02) { s.row("winkLeft")?.contains(" active ") == true }, "\(s.pane.screen())")
        #expect(
            Wait.until(interval: 0.02) { s.row("winkLeft")?.hasPrefix("*") == true }, "no flash on the row that fired")
        #expect(Wait.until(interval: 0.02) { s.row("winkLeft")?.hasSuffix(" idle") == true }, "\(s.pane.screen())")
        // The event list, newest first, with times.
        #expect(
            Wait.until { s.pane.screen().contains("winkLeft began") && s.pane.screen().contains("winkLeft ended") },
            "\(s.pane.screen())")
        // A larger terminal, live: the title bar spans the new width.
        s.pane.resize(columns: 100, rows: 30)
        #expect(
            Wait.until { s.pane.screen().split(separator: "\n").first?.count == 100 },
            "\(s.pane.format("#{window_width}x#{window_height}")): \(s.pane.screen())")
        // Smaller than 80x24 (found by a newcomer: columns overlapped): one line asking for more room, and
        // the view again once there is.
        s.pane.resize(columns: 60, rows: 15)
        #expect(Wait.until { s.pane.screen().contains("needs 80x24; this terminal is 60x15") }, "\(s.pane.screen())")
        s.pane.resize(columns: 100, rows: 30)
        #expect(Wait.until { s.pane.screen().contains("winkLeft") }, "\(s.pane.screen())")
        // p freezes the display (the frame number stops), c empties the event list, p again goes on.
        s.pane.send("p")
        #expect(Wait.until { s.pane.screen().contains("PAUSED") }, "\(s.pane.screen())")
        let frozen = s.pane.screen()
        usleep(300_000)  // about 9 frames: nothing may change meanwhile
        #expect(s.pane.screen() == frozen, "the display moved while paused")
        s.pane.send("c")
        #expect(
            Wait.until { !s.pane.screen().contains("winkLeft began") && !s.pane.screen().contains("faceFound") },
            "\(s.pane.screen())")
        s.pane.send("p")
        #expect(Wait.until { !s.pane.screen().contains("PAUSED") && s.pane.screen() != frozen })
        s.pane.send("q")
        s.expectEnded(withStatus: 0)
    }

    /// A newcomer's finding: `--events winkLeft` ("show these rows and events only") still drew all six rows.
    /// A newcomer's finding: a shortened source name's "…" came out as "~@" (ncursesw without the locale)
    /// and, counted in bytes, cut the key help to "c cl". In a UTF-8 locale the title shows "…" and every
    /// key; in the C locale "~" (and "?" for the name's "é"), every key too.
    @Test func aLongSourceNameIsShortenedWithinTheTitleInAnyLocale() throws {
        for (locale, ellipsis, accent) in [("C.UTF-8", "…", "é"), ("C", "~", "?")] {
            let s = try Session(
                sourceName: "vidéo_\(String(repeating: "x", count: 60)).mp4", locale: locale)
            let title = { String(s.pane.screen().split(separator: "\n").first ?? "") }
            #expect(Wait.until { title().contains("source_opened") }, "\(locale): \(s.pane.screen())")
            #expect(title().hasSuffix("  source_opened q quit  p pause  c clear"), "\(locale): \(title())")
            #expect(title().contains("vid\(accent)o_xx") && title().contains("x\(ellipsis)  source_opened"),
                    "\(locale): \(title())")
            #expect(title().count == 80, "\(locale): \(title().count) \(title())")
        }
        // Wide characters take two cells each, and a terminal wider than 512 columns lost the keys.
        let s = try Session(sourceName: String(repeating: "日本語", count: 14) + ".mp4", locale: "C.UTF-8")
        let title = { String(s.pane.screen().split(separator: "\n").first ?? "") }
        #expect(Wait.until { title().contains("source_opened") }, "\(s.pane.screen())")
        #expect(title().hasSuffix("  source_opened q quit  p pause  c clear") && title().contains("日本語…"),
                "\(title())")
        s.pane.resize(columns: 600, rows: 24)
        #expect(Wait.until { title().hasSuffix(" q quit  p pause  c clear") && title().contains("日本語.mp4") },
                "\(title())")
    }

    @Test func eventsLimitsTheRowsToo() throws {
        let s = try Session(options: ["--events", "winkLeft,faceFound"])
        #expect(Wait.until { s.row("winkLeft")?.contains("0.70/0.50") == true }, "\(s.pane.screen())")
        for name in ["blink", "eyesClosed", "winkRight", "smile", "mouthOpen"] {
            #expect(s.row(name) == nil, "\(name): \(s.pane.screen())")
        }
        #expect(Wait.until { s.pane.screen().contains("winkLeft began") }, "\(s.pane.screen())")
        s.pane.send("q")
        s.expectEnded(withStatus: 0)
    }

    @Test func controlCRestoresTheTerminal() throws {
        let s = try Session()
        #expect(Wait.until { s.row("winkLeft") != nil }, "\(s.pane.screen())")
        s.pane.send("C-c")
        s.expectEnded(withStatus: 130)
    }

    @Test func aDaemonKilledMidRunLeavesAReadableMessage() throws {
        let s = try Session()
        #expect(Wait.until { s.pane.screen().contains("face found") }, "\(s.pane.screen())")
        kill(s.daemon.processIdentifier, SIGKILL)
        s.daemon.waitUntilExit()
        s.expectEnded(withStatus: 69)
        #expect(s.pane.screen().contains("winkd closed the connection without a bye"), "\(s.pane.screen())")
        #expect(s.pane.screen().contains(s.socket), "the message names the socket")
    }

    @Test func refusesWithoutATerminal() throws {
        let r = try Binaries.run("winkctl", ["monitor", "--socket", "/nonexistent/events.sock"])
        #expect(r.status == 64)
        #expect(r.stderrLines.count == 1 && r.stderr.contains("terminal"), "\(r.stderr)")
    }
}

/// A detached tmux session of a fixed size running one command, on a tmux server of its own, whose socket is
/// in a scratch folder (with `-L` it stayed in /tmp/tmux-<uid>/ once the server was killed).
///
/// tmux is started with posix_spawn and waited for with waitpid, every descriptor above stderr closed:
/// Foundation's `Process` waits until every holder of a descriptor it gives the child has closed it, and
/// the tmux server the first command forks keeps its descriptors for as long as it runs.
final class TmuxPane {
    /// The server's socket and the output file of `read(_:)`.
    private let directory: URL
    private var server: String { directory.appendingPathComponent("s").path }
    private var output: String { directory.appendingPathComponent("out").path }

    init(columns: Int, rows: Int, command: [String]) throws {
        directory = try Scratch.directory("tmux")
        let quoted = command.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let status = tmux([
            "-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "\(columns)", "-y", "\(rows)", quoted,
        ])
        guard status == 0 else { throw TmuxError(status: status) }
        processes = format("#{pid} #{pane_pid}").split(separator: " ").compactMap { pid_t($0) }
    }

    /// The tmux server's and the pane's process ids, for `kill()`.
    private var processes: [pid_t] = []

    deinit { try? FileManager.default.removeItem(at: directory) }

    struct TmuxError: Error { var status: Int32 }

    /// The visible screen as text, one line per row (trailing blanks trimmed, wrapped lines joined by tmux).
    func screen() -> String { read(["capture-pane", "-p", "-J", "-t", "t"]) }

    /// A tmux format for the pane, e.g. `#{alternate_on}`.
    func format(_ format: String) -> String {
        read(["display-message", "-p", "-t", "t", format]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Types keys (tmux key names: `q`, `C-c`).
    func send(_ keys: String) { tmux(["send-keys", "-t", "t", keys]) }

    func resize(columns: Int, rows: Int) { tmux(["resize-window", "-t", "t", "-x", "\(columns)", "-y", "\(rows)"]) }

    /// Ends the session: `kill-server`, then SIGKILL to the server and the pane's process group, which
    /// `kill-server` has been seen to leave behind on a busy machine.
    func kill() {
        tmux(["kill-server"])
        if processes.count == 2 {
            Glibc.kill(-processes[1], SIGKILL)
            Glibc.kill(processes[0], SIGKILL)
        }
    }

    private func read(_ arguments: [String]) -> String {
        guard tmux(arguments, stdout: output) == 0, let data = FileManager.default.contents(atPath: output) else {
            return ""
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Runs tmux to completion; its wait status (-1 if it could not start).
    @discardableResult
    private func tmux(_ arguments: [String], stdout: String = "/dev/null") -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        spawnCloseFrom(&actions, 3)
        var environment = ProcessInfo.processInfo.environment
        environment["TMUX"] = nil
        environment["TERM"] = environment["TERM"] ?? "xterm"
        let argv = (["/usr/bin/tmux", "-S", server] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        // The test thread may block or ignore signals; tmux and the monitor must not inherit that (a blocked
        // SIGWINCH would hide resizes from ncurses).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        var all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        guard posix_spawn(&pid, "/usr/bin/tmux", &actions, &attributes, argv, envp) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }
}

/// glibc's posix_spawn_file_actions_addclosefrom_np (2.34+), which Swift's Glibc module does not export.
@_silgen_name("posix_spawn_file_actions_addclosefrom_np")
@discardableResult
private func spawnCloseFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ from: Int32) -> Int32
