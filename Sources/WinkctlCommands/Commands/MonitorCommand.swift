import EventServer
import Foundation
import WinkCore
import WinkDaemon

/// `winkctl monitor`: a full-screen live view of what winkd sees, for tuning the analyzer table to one's own
/// face: each row's value against its thresholds and its state, the coefficients and head pose, the last
/// events, and the daemon's frames per second, latency and source. Numbers only; frames never leave winkd.
///
/// Subscribes with `"coefficients":true,"analyzers":true` and redraws at every frame's `rows` line (ncurses
/// sends only what changed). Keys: `q` quits (exit 0), `p` pauses the display, `c` clears the events.
/// The terminal is restored on `q`, on SIGINT (Ctrl-C, exit 130) and SIGTERM/SIGHUP (exit 143/129), and
/// when the daemon goes away: then one line on stderr says why, and the exit is 0 after a recording's
/// `end_of_input`, 69 otherwise. Without a terminal on stdin and stdout it exits 64 with one line.
enum MonitorCommand {
    static let command = WinkctlMain.Command(
        spec: CommandSpec(
            name: "monitor",
            summary: "a live full-screen view of each analyzer row's value, thresholds and state, for tuning",
            options: [
                .clientSocket,
                OptionSpec("--events", .text("NAME,..."), "show these rows and events only", default: "every row"),
            ],
            details: "Keys: q quits, p pauses the display, c clears the event list. Needs a terminal."),
        run: run)

    /// Seconds between `status` requests (for the client count), while the daemon answers them.
    static let statusInterval = 2.0

    static func run(_ args: inout Arguments) throws -> ExitCode {
        let socket = try args.option("--socket") ?? EventSocketPath.default()
        let names = try args.option("--events").map { list in
            list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        if let names, names.isEmpty { throw UsageError("--events needs at least one event name, e.g. winkLeft,smile") }
        try args.finish()
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else {
            throw UsageError("monitor: needs a terminal on stdin and stdout (for lines, use winkctl events)")
        }

        let client = try EventClient(path: socket)
        let offered = client.hello.events
        let wanted = names ?? offered
        if let unknown = wanted.first(where: { !offered.contains($0) }) {
            throw UsageError(
                "monitor: winkd at \(socket) has no event '\(unknown)'; it offers \(offered.joined(separator: ","))")
        }
        let request =
            #"{"type":"subscribe","id":1,"coefficients":true,"analyzers":true,"events":"#
            + "[" + wanted.map { "\"\($0)\"" }.joined(separator: ",") + "]}"
        try client.send(line: request)

        let shared = SharedMonitor(state: MonitorState(socket: socket, shownRows: names.map(Set.init)))
        // Signals become a flag and a wake-up of the drawing loop: never leave inside ncurses.
        for s in [SIGINT, SIGTERM, SIGHUP] { signal(s, SIG_IGN) }
        let sources = [SIGINT, SIGTERM, SIGHUP].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { shared.interrupt(number) }
            source.resume()
            return source
        }
        defer { sources.forEach { $0.cancel() } }

        // ncurses learns of resizes from SIGWINCH: make sure a parent did not leave it blocked.
        var winch = sigset_t()
        sigemptyset(&winch)
        sigaddset(&winch, SIGWINCH)
        pthread_sigmask(SIG_UNBLOCK, &winch, nil)
        let terminal = try Terminal()
        defer { terminal.stop() }
        let reader = Thread { read(client, into: shared) }
        reader.name = "winkctl-monitor-reader"
        reader.start()
        let outcome = loop(terminal, shared)
        terminal.stop()
        switch outcome {
        case .quit: return .ok
        case .signal(let number): exit(128 + number)  // as a command stopped by the signal reports (130 for ^C)
        case .ended(.bye("end_of_input")):
            printError("winkctl: monitor: winkd at \(socket) said bye: end_of_input (the recording ended)")
            return .ok
        case .ended(.bye(let reason)):
            throw EventServerError(.noDaemon, subject: socket, reason: "winkd said bye: \(reason)")
        case .ended(.lost(let reason)):
            throw EventServerError(.noDaemon, subject: socket, reason: reason)
        }
    }

    /// `CLOCK_MONOTONIC` in seconds.
    private static func seconds() -> Double { Double(SystemClock().nanoseconds()) / 1e9 }

    private enum Outcome {
        case quit
        case signal(Int32)
        case ended(MonitorState.Ending)
    }

    /// Draws at every wake-up (a frame, an event, a key, a signal) until `q`, a signal or the daemon's end.
    private static func loop(_ terminal: Terminal, _ shared: SharedMonitor) -> Outcome {
        var paused = false
        var frozen: MonitorState?
        var frozenAt: Double?  // the paused screen's clock (fps, flashes) stands still too
        var fds = [
            pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0),
            pollfd(fd: shared.wakeRead, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            fds[0].revents = 0
            fds[1].revents = 0
            _ = poll(&fds, 2, 500)  // EINTR (SIGWINCH) too: the key loop below sees the resize
            shared.drainWake()
            while let key = terminal.key() {
                switch key {
                case .character(UInt8(ascii: "q")), .character(UInt8(ascii: "Q")): return .quit
                case .character(UInt8(ascii: "p")), .character(UInt8(ascii: "P")):
                    paused.toggle()
                    frozen = paused ? shared.snapshot() : nil
                    frozenAt = paused ? seconds() : nil
                case .character(UInt8(ascii: "c")), .character(UInt8(ascii: "C")):
                    shared.update { $0.clearEvents() }
                    frozen?.clearEvents()
                case .character(3): return .signal(SIGINT)  // ^C arriving as a byte
                default: break
                }
            }
            if let number = shared.takeSignal() { return .signal(number) }
            let state = frozen ?? shared.snapshot()
            if let ending = shared.snapshot().ending { return .ended(ending) }
            let size = terminal.size
            terminal.draw(
                MonitorScreen.layout(
                    state, rows: size.rows, columns: size.columns,
                    now: frozenAt ?? seconds(), paused: paused, unicode: terminal.unicode))
        }
    }

    /// The reader thread: applies every line to the shared state (waking the drawing loop for those that
    /// change the screen) and asks for the daemon's status now and then, until the connection ends.
    private static func read(_ client: EventClient, into shared: SharedMonitor) {
        var nextStatus = 0.0
        var statusID = 2
        var askStatus = true
        do {
            while true {
                let now = seconds()
                if askStatus && now >= nextStatus {
                    try client.send(line: #"{"type":"status","id":\#(statusID)}"#)
                    statusID += 1
                    nextStatus = now + statusInterval
                }
                guard let line = try client.nextLine(timeout: 0.5) else {
                    if client.isFinished { break }
                    continue
                }
                // A daemon without status requests answers with an error: stop asking.
                if line.contains("\"unknown_type\"") { askStatus = false }
                let redraw = shared.update {
                    $0.apply(line, now: seconds(), nowNanoseconds: SystemClock().nanoseconds())
                }
                if redraw { shared.wake() }
            }
            shared.update { state in
                if state.ending == nil { state.ending = .lost("winkd closed the connection without a bye") }
            }
        } catch {
            shared.update { $0.ending = .lost("\(error)") }
        }
        shared.wake()
    }
}

/// The monitor's state shared by the reader thread and the drawing loop, under a lock, with a pipe that
/// wakes the drawing loop. Thread-safe.
final class SharedMonitor: @unchecked Sendable {
    private let lock = NSLock()
    private var state: MonitorState
    private var signalNumber: Int32?
    private var wakePending = false
    let wakeRead: Int32
    private let wakeWrite: Int32

    init(state: MonitorState) {
        self.state = state
        var ends: [Int32] = [0, 0]
        _ = pipe(&ends)
        for fd in ends { _ = fcntl(fd, F_SETFL, O_NONBLOCK) }
        wakeRead = ends[0]
        wakeWrite = ends[1]
    }

    deinit {
        close(wakeRead)
        close(wakeWrite)
    }

    func snapshot() -> MonitorState { lock.withLock { state } }

    @discardableResult
    func update<T>(_ body: (inout MonitorState) -> T) -> T { lock.withLock { body(&state) } }

    func interrupt(_ number: Int32) {
        lock.withLock { signalNumber = signalNumber ?? number }
        wake()
    }

    func takeSignal() -> Int32? { lock.withLock { signalNumber } }

    /// Wakes the drawing loop (at most one byte in the pipe at a time).
    func wake() {
        let send = lock.withLock {
            defer { wakePending = true }
            return !wakePending
        }
        guard send else { return }
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    func drainWake() {
        lock.withLock { wakePending = false }
        var scratch = [UInt8](repeating: 0, count: 64)
        while read(wakeRead, &scratch, scratch.count) > 0 {}
    }
}
