import Capture
import EventServer
import Expressions
import FaceTracking
import Foundation
import Overlay
import WinkCore

/// The daemon's lifecycle: an event server whose clients switch the source on and off, start-up, demand
/// and linger, and reload.
///
/// The source opens when the first client connects (or at once with `--always-on`) and closes `linger`
/// seconds after the last leaves. What streams is a `SourceSession`: a `CameraSession` (a capture thread
/// and the processing thread; camera faults become status lines, never an exit) or a `FileSession` (a
/// recording on the processing thread, paced in real time or fast, once or looped; at its end every client
/// gets `bye` (`end_of_input`) and `run` returns 0). Frames and status lines go out through a
/// `FramePublisher`.
///
/// SIGHUP (`requestReload`) reloads the configuration file and the overlay layout between two frames
/// without dropping clients: `reload_ok`, or `reload_failed` with the reason while the old configuration
/// stays. With `overlay` configured, every frame is drawn with the layout and written to the V4L2 output
/// device; without it no frame leaves the process.
public final class Daemon: SessionHost, @unchecked Sendable {
    let options: DaemonOptions
    let server: EventServer
    let predictor: ShapePredictor
    let environment: DaemonEnvironment
    let observer: DaemonObserver?
    let log: @Sendable (EventServer.LogLevel, String) -> Void
    let signals = DaemonSignals()
    /// Frames and status lines out; its pipeline and configuration are the processing thread's.
    let publisher: FramePublisher
    /// Opens a recording to play (`openMediaFile`); tests put a scripted source here before `run`.
    var openRecording: (String) throws -> FrameSource = { try openMediaFile(path: $0) }
    /// The camera settings in use, under `signals`' lock.
    private var currentCameraSettings: V4L2Camera.Settings

    /// Loads the model (unless given), checks a file source and the overlay layout, binds the socket.
    /// - Parameters:
    ///   - predictor: an already loaded model (tests); nil loads `options.modelPath`.
    ///   - environment: cameras, output device and fault timings (`.system` in production).
    ///   - observer: hooks for sd_notify (see `DaemonObserver`).
    ///   - serverListening: called with the event server as soon as its socket listens, before the model
    ///     loads (winkd's SIGTERM handler stops it from there while the daemon does not exist yet).
    /// - Throws: `FaceTrackingError` (78) for the model, `CaptureError` (65/66) for an unreadable file
    ///   source, `Configuration.Invalid` (78) for an overlay layout that does not load,
    ///   `EventServerError` for the socket.
    public init(
        options: DaemonOptions, predictor: ShapePredictor? = nil, environment: DaemonEnvironment = .system,
        observer: DaemonObserver? = nil, serverListening: ((EventServer) -> Void)? = nil,
        log: @escaping @Sendable (EventServer.LogLevel, String) -> Void
    ) throws {
        self.options = options
        self.log = log
        self.environment = environment
        self.observer = observer
        var configuration = options.configuration
        if options.request.mirrored { configuration.mirrored = true }
        currentCameraSettings = configuration.camera
        // Listen first, so clients can connect at once and are greeted at once; the model and the source are
        // checked next (clients wait for frames meanwhile), and a failure there says bye to them and
        // removes the socket again.
        let names = Self.eventNames(configuration)
        let serverOptions = EventServer.Options(
            mode: configuration.socketMode,
            maximumClients: configuration.maximumClients)
        // Until start-up succeeds the server's lines are held: a failed start prints its one error line only,
        // a successful one writes them in order (a client's "connected" before what it did next).
        let gate = StartupLogGate(log: log)
        let serverLog: @Sendable (EventServer.LogLevel, String) -> Void = { level, message in gate(level, message) }
        let server: EventServer
        if let fd = try SocketActivation.listeningSocket() {
            server = try EventServer(listeningFD: fd, eventNames: names, options: serverOptions, log: serverLog)
        } else {
            do {
                server = try EventServer(
                    path: options.socketPath, eventNames: names, options: serverOptions, log: serverLog)
            } catch let error as EventServerError {
                throw Self.withSocketAdvice(error, socketPath: options.socketPath)
            }
        }
        Self.describeTable(configuration.analyzers, to: server, log: log)
        self.server = server
        serverListening?(server)
        // Greet clients at once (hello, subscribe) while the model loads; frames wait for `run`.
        server.start()
        do {
            // Through the verified binary cache (about 7x faster than dlib's loader; see Models/README.md).
            let predictor = try predictor ?? ShapePredictor(path: options.modelPath, cache: ModelCache.standard())
            self.predictor = predictor
            let (personalised, prior) = try configuration.applyingProfile()
            let pipeline = FramePipeline(configuration: personalised, predictor: predictor, prior: prior)
            publisher = FramePublisher(
                server: server, pipeline: pipeline, configuration: configuration,
                renderer: try Self.loadRenderer(configuration), environment: environment,
                observer: observer, log: log)
            switch (options.sourceKind, options.source) {
            case (.recording, let s?): try openMediaFile(path: s).close()  // fail now (65/66), not later
            case (.camera, let s?): try Self.checkVideoDevice(s)
            default: break
            }
        } catch {
            gate.discard()
            server.stop(reason: "startup_failed")
            throw error
        }
        gate.open()
        server.sourceReport = { [publisher] in publisher.sourceReport() }
        let signals = self.signals
        server.onClientCountChange = { n in
            signals.clientCount = n
            observer?.daemonClientsChanged(count: n)
        }
        // Clients that connected while the model loaded were counted before the handler existed.
        signals.clientCount = server.listenerCount
    }

    /// A socket directory this user may not create or search, or that cannot be made (a parent that cannot
    /// hold one, such as /proc, or a file on the way): says how to choose another (`--socket`), and,
    /// for the system default `/run/winkd/events.sock` taken because `XDG_RUNTIME_DIR` is not set, that a
    /// login session's `XDG_RUNTIME_DIR` gives the per-user default.
    static func withSocketAdvice(
        _ error: EventServerError, socketPath: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> EventServerError {
        guard case .system(let code) = error.code, [EACCES, EPERM, EROFS, ENOENT, ENOTDIR].contains(code) else {
            return error
        }
        var advice = "give winkd a socket path this user may create with --socket PATH"
        if socketPath == EventSocketPath.systemPath && (environment["XDG_RUNTIME_DIR"] ?? "").isEmpty {
            advice +=
                ", or set XDG_RUNTIME_DIR (a login session does; the socket is then "
                + "$XDG_RUNTIME_DIR/winkd/events.sock); /run/winkd is for the system service (README)"
        }
        var advised = error
        advised.reason += "; " + advice
        return advised
    }

    /// A device source that exists must be a V4L2 character device (major number 81, the kernel's
    /// video4linux major, Documentation/admin-guide/devices.txt); one that does not exist yet is waited for.
    /// - Throws: `CaptureError.unsupported` (exit 69) for `/dev/null`, a tty, a disk.
    static func checkVideoDevice(_ path: String) throws {
        var st = stat()
        guard stat(path, &st) == 0 else { return }
        let isCharacter = (st.st_mode & S_IFMT) == S_IFCHR
        let major = (UInt64(st.st_rdev) >> 8) & 0xfff
        guard isCharacter && major == 81 else {
            throw CaptureError(.unsupported, subject: path, reason: "not a V4L2 video device")
        }
    }

    /// The overlay renderer for a configuration with an output device, else nil. `winkctl config` and
    /// `winkd --print-config` load it too, so that they refuse what start-up would.
    /// - Throws: `Configuration.Invalid` (78) naming `overlay.layout` when the layout or an image fails.
    public static func loadRenderer(_ configuration: Configuration) throws -> OverlayRenderer? {
        guard configuration.overlayOutputConfigured, let path = configuration.overlayLayoutPath else { return nil }
        do {
            return try OverlayRenderer(layout: OverlayLayout.load(path: path))
        } catch let error as ExitCodeError {
            throw Configuration.Invalid(
                path: configuration.path ?? "configuration",
                problems: ["overlay.layout: \(error.description)"])
        }
    }

    // MARK: Requests from other threads

    /// Asks the daemon to end; `run` then says `bye` and returns 0 within about a second, even with the
    /// camera stalled. Thread-safe; callable from a signal handler's dispatch queue.
    public func requestStop() { signals.requestStop() }

    /// Asks for the configuration file and overlay layout to be read again (SIGHUP); done on the processing
    /// thread between two frames. Thread-safe.
    public func requestReload() { signals.requestReload() }

    /// Closes the socket (sending `bye`), for a stop from a signal handler thread.
    public func shutdown(reason: String) { server.stop(reason: reason) }

    // MARK: Running

    /// Serves until stopped or, for a file without `--loop`, until its end.
    /// - Returns: the exit code (0).
    public func run() -> ExitCode {
        server.start()
        log(.notice, "listening on \(server.path ?? "an inherited socket")")
        // Privacy: whoever can connect reads what the face does. A socket others may write to is said so
        // once (it is the user's choice, so not refused).
        if server.path != nil, options.configuration.socketMode & 0o002 != 0 {
            log(.warning, "socket.mode \(String(options.configuration.socketMode, radix: 8)) lets every user of this "
                + "machine connect and read this face's events; 0660 with a group shares them with chosen users")
        }
        observer?.daemonIsReady(socketPath: server.path)
        let session: SourceSession
        switch (options.sourceKind, options.source) {
        case (.recording, let path?):
            session = FileSession(
                path: path, pace: options.pace, loop: options.loop, host: self,
                openRecording: openRecording)
        default:
            session = CameraSession(device: options.source, host: self)
        }
        while waitForDemand() {
            if session.run() == .endOfInput {
                observer?.daemonIsStopping()
                server.stop(reason: "end_of_input")
                return .ok
            }
        }
        observer?.daemonIsStopping()
        server.stop(reason: "shutdown")
        return .ok
    }

    /// Waits until a client is connected (or `alwaysOn`), or a stop is requested, reloading on request and
    /// keeping the watchdog fed. Returns false on stop.
    private func waitForDemand() -> Bool {
        while true {
            let (demand, stop) = signals.waitForDemand(alwaysOn: options.alwaysOn)
            observer?.daemonIsAlive()
            applyReloadIfRequested()
            if stop { return false }
            if demand { return true }
        }
    }

    // MARK: SessionHost

    var cameraSettings: V4L2Camera.Settings { signals.withLock { currentCameraSettings } }

    func keepStreaming(idleSince: inout UInt64?) -> Bool {
        if signals.stopRequested || lingerExpired(&idleSince) { return false }
        observer?.daemonIsAlive()
        applyReloadIfRequested()
        return true
    }

    /// True once nobody has listened for `linger` seconds (never with `--always-on`).
    private func lingerExpired(_ idleSince: inout UInt64?) -> Bool {
        guard signals.clientCount == 0 && !options.alwaysOn else {
            idleSince = nil
            return false
        }
        let now = environment.clock.nanoseconds()
        guard let since = idleSince else {
            idleSince = now
            return false
        }
        return Double(now - since) / 1e9 >= options.linger
    }

    // MARK: Reloading (processing thread)

    private func applyReloadIfRequested() {
        guard signals.takeReloadRequest() else { return }
        observer?.daemonIsReloading()
        let ok = reload()
        observer?.daemonDidReload(ok: ok)
    }

    /// Announces the analyzer table to clients that watch its rows (`winkctl monitor`). A table over the 8 KiB
    /// line limit (about 35 rows like the default ones) is described as omitted, with one warning; events flow
    /// as ever.
    static func describeTable(
        _ rows: [AnalyzerRow], to server: EventServer,
        log: (EventServer.LogLevel, String) -> Void
    ) {
        do { try server.announce(analyzers: AnalyzersLine(rows: rows)) } catch {
            log(.warning, "\(describeError(error)); winkctl monitor cannot show this table")
        }
    }

    /// The names `hello` announces: the face's arrival and departure, then the analyzer table's events.
    static func eventNames(_ configuration: Configuration) -> [String] {
        [EventName.faceFound, EventName.faceLost] + configuration.analyzers.map(\.event)
    }

    /// Reads the configuration file and overlay layout again; on any problem keeps the old ones. The file
    /// is the one the command line chose (`--config`), else the first default one present now (so one
    /// created or removed since start-up counts), with `--mirrored`, `--profile` and a default profile laid
    /// over it as at start-up. Called on the processing thread between two frames (tests call it directly).
    /// - Returns: whether the new configuration is in use.
    @discardableResult
    func reload() -> Bool {
        let configuration = publisher.configuration
        var request = options.request
        if request.configPath == nil && request.location == nil { request.configPath = configuration.path }
        let path = request.resolvedConfigPath
        // Without any file or default location there is nothing to read (a profile found by default is
        // read again, though: a new calibration counts).
        guard path != nil || configuration.path != nil || request.location != nil else {
            publisher.publish(status: StatusLine(state: .reloadOk, message: "no configuration file; nothing to reload"))
            return true
        }
        do {
            let fresh = try request.load()
            let freshRenderer = try Self.loadRenderer(fresh)
            try server.announce(eventNames: Self.eventNames(fresh))  // for clients connecting from now on
            Self.describeTable(fresh.analyzers, to: server, log: log)  // to rows watchers now
            let (personalised, prior) = try fresh.applyingProfile()
            // The face and what did not change carry on: a reload is not the face leaving.
            publisher.reconfigure(fresh, renderer: freshRenderer) { current, frame in
                FramePipeline(
                    continuing: current, configuration: personalised, predictor: predictor, prior: prior, frame: frame)
            }
            let unchanged = Self.startupOnlyNote(fresh, running: options)
            signals.withLock { currentCameraSettings = fresh.camera }
            publisher.publish(
                status: StatusLine(
                    state: .reloadOk, source: path,
                    message: path == nil
                        // The profile found by default is in use too (it said "defaults in use" only).
                        ? "no configuration file; defaults in use"
                            + (fresh.resolvedProfilePath.map { " with the profile \($0)" } ?? "") + unchanged
                        : "configuration reloaded\(unchanged)"))
            return true
        } catch {
            let reason = describeError(error).replacingOccurrences(of: "\n", with: "; ")
            log(.warning, "reload failed, keeping the old configuration: \(reason)")
            // The line's source names the file; its message says what is wrong without naming it again.
            let source = path ?? configuration.path
            let problems = reason.components(separatedBy: "; ").map { problem in
                guard let source, problem.hasPrefix(source + ": ") else { return problem }
                return String(problem.dropFirst(source.count + 2))
            }
            publisher.publish(
                status: StatusLine(
                    state: .reloadFailed, source: source,
                    message: Self.shortened(problems.joined(separator: "; "))))
            return false
        }
    }
}

extension Daemon {
    /// " (the log level and socket settings apply at the next start)" when the reloaded configuration asks
    /// for a log level or socket settings other than those winkd started with (it keeps them until it
    /// restarts), naming only what differs; "" when nothing does. Compared with what runs, not with the
    /// configuration before: after a reload that asked for 5 clients, a reload back to the default said the
    /// socket settings would change at the next start, and a new `logLevel` went unmentioned.
    static func startupOnlyNote(_ fresh: Configuration, running options: DaemonOptions) -> String {
        var waiting: [String] = []
        // --log-level wins over the file, now and after a restart.
        if options.logLevel == nil && (fresh.logLevel ?? .info) != options.effectiveLogLevel {
            waiting.append("the log level")
        }
        if fresh.socketMode != options.configuration.socketMode
            || fresh.maximumClients != options.configuration.maximumClients {
            waiting.append(waiting.isEmpty ? "the socket settings" : "socket settings")
        }
        guard !waiting.isEmpty else { return "" }
        let verb = waiting == ["the log level"] ? "applies" : "apply"
        return " (\(waiting.joined(separator: " and ")) \(verb) at the next start)"
    }

    /// `reason` cut to at most `limit` UTF-8 bytes at a "; " between problems (or a character), with the
    /// number left out: a status line over 8 KiB would not be sent at all (a file with hundreds of bad
    /// rows). The log keeps the whole text.
    static func shortened(_ reason: String, limit: Int = 2048) -> String {
        guard reason.utf8.count > limit else { return reason }
        let problems = reason.components(separatedBy: "; ")
        var kept: [String] = []
        var size = 0
        for problem in problems {
            let cost = problem.utf8.count + (kept.isEmpty ? 0 : 2)
            if size + cost > limit { break }
            kept.append(problem)
            size += cost
        }
        if kept.isEmpty {
            var cut = ""
            for character in reason where cut.utf8.count + character.utf8.count <= limit { cut.append(character) }
            return cut + "... (cut; the log has it whole)"
        }
        return kept.joined(separator: "; ") + "; ... and \(problems.count - kept.count) more (the log has them all)"
    }
}
