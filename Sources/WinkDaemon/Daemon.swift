import Capture
import EventServer
import Expressions
import FaceTracking
import Foundation
import Synchronization
import Overlay
import WinkCore

/// How a recorded file is paced.
public enum Pace: String, Sendable {
    /// Frames are released at their own timestamps, like a camera.
    case realtime
    /// As fast as the pipeline goes.
    case fast
}

/// `winkd`'s settings from its command line (SPEC.md "Programs").
public struct DaemonOptions: Sendable {
    /// A V4L2 device or a regular file; `nil` = the first V4L2 capture device.
    public var source: String?
    public var socketPath: String
    public var configuration: Configuration
    public var modelPath: String
    public var pace: Pace = .realtime
    public var loop = false
    public var alwaysOn = false
    /// `--mirrored` was given (kept over a reloaded configuration file).
    public var mirroredFlag = false
    /// Seconds the source stays open after the last client leaves.
    public var linger: Double = 3

    /// Options for tests and embedders.
    public init(source: String?, socketPath: String, configuration: Configuration = Configuration(),
                modelPath: String = ShapePredictor.debianModelPath) {
        self.source = source
        self.socketPath = socketPath
        self.configuration = configuration
        self.modelPath = modelPath
    }

    /// Parses `winkd [--source DEVICE|FILE] [--socket PATH] [--config FILE] [--model FILE] [--mirrored]
    /// [--pace realtime|fast] [--loop] [--always-on]`.
    /// - Throws: `UsageError` (64), `Configuration.Invalid` (78).
    public init(_ args: inout Arguments, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        var probe = args
        mirroredFlag = probe.flag("--mirrored")
        let common = try CommonOptions(&args)
        configuration = common.configuration
        modelPath = common.modelPath
        source = try args.option("--source")
        socketPath = try args.option("--socket") ?? EventSocketPath.default(environment: environment)
        if let p = try args.option("--pace") {
            guard let pace = Pace(rawValue: p) else { throw UsageError("--pace expects realtime or fast, got '\(p)'") }
            self.pace = pace
        }
        loop = args.flag("--loop")
        alwaysOn = args.flag("--always-on")
        try args.finish()
    }

    /// Whether the source is a recorded file (anything not under `/dev/`); nil source = a camera.
    var sourceIsFile: Bool {
        guard let s = source else { return false }
        return !s.hasPrefix("/dev/")
    }
}

/// The daemon: an event server whose clients switch the source on and off, and a processing thread.
///
/// The source opens when the first client connects (or at once with `--always-on`) and closes `linger`
/// seconds after the last leaves. A recorded file is read and processed on one thread, paced in real time
/// (or fast), once or looped; at its end every client gets `bye` (`end_of_input`) and `run` returns 0.
///
/// A camera is read on a capture thread into three reused `PixelBuffer`s and handed to the processing
/// thread through a `FrameExchange` ("latest frame wins": a frame not yet taken when a newer one arrives
/// is dropped). Camera faults never end the daemon; each becomes a `status` line to every client:
/// - `camera_absent`: no camera (yet); looked for every `absentPollInterval` s while clients are connected,
/// - `camera_busy`: another program streams from it (`EBUSY`); retried after 1, 2, 4, 8, 10, 10... s,
/// - `camera_unplugged`: it went away mid-stream (`ENODEV`); `faceLost` if a face was present, buffers and
///   descriptor released, and streaming resumes when the same name (its `/dev/v4l/by-id` link) is back,
/// - `camera_stalled`: no frame for `stallSeconds`; the camera is closed and opened again,
/// - `camera_corrupt_frames`: corrupt (MJPEG) frames were dropped (at most every `corruptReportInterval` s),
/// - `camera_dark` / `camera_light`: mean brightness stayed below `FrameUsability.darkThreshold` for
///   `darkSeconds`, and came back; dark frames are not tracked, so darkness is not "no face" (no
///   `faceLost` storm),
/// - `capture_blank` (ended by `camera_light` too): every frame one flat colour for `darkSeconds` (a
///   camera or driver delivering no picture); such frames are not tracked either,
/// - `source_opened`, `source_closed`, `source_failed`: as before.
///
/// SIGHUP (`requestReload`) reloads the configuration file and the overlay layout between two frames
/// without dropping clients: `reload_ok`, or `reload_failed` with the reason while the old configuration
/// stays. With `overlay` configured, every frame is drawn with the layout and written to the V4L2 output
/// device; without it no frame leaves the process.
public final class Daemon: @unchecked Sendable {
    let options: DaemonOptions
    let server: EventServer
    let predictor: ShapePredictor
    let environment: DaemonEnvironment
    let observer: DaemonObserver?
    let log: (EventServer.LogLevel, String) -> Void

    // Processing thread only.
    private(set) var pipeline: FramePipeline
    private(set) var configuration: Configuration
    private var renderer: OverlayRenderer?
    private var output: V4L2Output?
    private var outputFailed = false
    private var faces: [FaceObservation] = []
    private var lastInfo = FrameInfo(index: 0, time: 0, monotonicNanoseconds: 0)
    private var darkSince: UInt64?
    private var darkReported = false
    /// Opens a recording to play (`openMediaFile`); tests put a scripted source here before `run`.
    var openRecording: (String) throws -> FrameSource = { try openMediaFile(path: $0) }

    // Shared, under `wake`.
    private let wake = NSCondition()
    private var clients = 0
    private var stopping = false
    private var reloadRequested = false
    private var sessionOver = false
    private var captureRunning = false
    private var interrupted = false
    private var cameraSettings = V4L2Camera.Settings()

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
    public init(options: DaemonOptions, predictor: ShapePredictor? = nil, environment: DaemonEnvironment = .system,
                observer: DaemonObserver? = nil, serverListening: ((EventServer) -> Void)? = nil,
                log: @escaping @Sendable (EventServer.LogLevel, String) -> Void) throws {
        self.options = options
        self.log = log
        self.environment = environment
        self.observer = observer
        var configuration = options.configuration
        if options.mirroredFlag { configuration.mirrored = true }
        self.configuration = configuration
        cameraSettings = configuration.camera
        // Listen first, so clients can connect at once and are greeted at once; the model and the source are
        // checked next (clients wait for frames meanwhile), and a failure there says bye to them and
        // removes the socket again.
        let names = Self.eventNames(configuration)
        let serverOptions = EventServer.Options(mode: configuration.socketMode,
                                                maximumClients: configuration.maximumClients)
        // Until start-up succeeds the server stays quiet: a failed start prints its one error line only.
        let started = Mutex(false)
        let serverLog: @Sendable (EventServer.LogLevel, String) -> Void = { level, message in
            if started.withLock({ $0 }) { log(level, message) }
        }
        let server: EventServer
        if let fd = try SocketActivation.listeningSocket() {
            server = try EventServer(listeningFD: fd, eventNames: names, options: serverOptions, log: serverLog)
        } else {
            do {
                server = try EventServer(path: options.socketPath, eventNames: names, options: serverOptions, log: serverLog)
            } catch let error as EventServerError {
                throw Self.withSocketAdvice(error, socketPath: options.socketPath)
            }
        }
        self.server = server
        serverListening?(server)
        // Greet clients at once (hello, subscribe) while the model loads; frames wait for `run`.
        server.start()
        do {
            // Through the verified binary cache (about 7x faster than dlib's loader; see Models/README.md).
            let predictor = try predictor ?? ShapePredictor(path: options.modelPath, cache: ModelCache.standard())
            self.predictor = predictor
            let (personalised, prior) = try configuration.applyingProfile()
            pipeline = FramePipeline(configuration: personalised, predictor: predictor, prior: prior)
            renderer = try Self.loadRenderer(configuration)
            if options.sourceIsFile, let s = options.source {
                try openMediaFile(path: s).close()  // fail now (65/66), not when the first client arrives
            } else if let s = options.source {
                try Self.checkVideoDevice(s)
            }
        } catch {
            server.stop(reason: "startup_failed")
            throw error
        }
        started.withLock { $0 = true }
        server.onClientCountChange = { [weak self] n in
            guard let self else { return }
            wake.lock()
            clients = n
            wake.broadcast()
            wake.unlock()
            observer?.daemonClientsChanged(count: n)
        }
        // Clients that connected while the model loaded were counted before the handler existed.
        wake.lock()
        clients = server.clientCount
        wake.unlock()
    }

    /// A socket directory this user may not create or search: says how to choose another (`--socket`), and,
    /// for the system default `/run/winkd/events.sock` taken because `XDG_RUNTIME_DIR` is not set, that a
    /// login session's `XDG_RUNTIME_DIR` gives the per-user default.
    static func withSocketAdvice(_ error: EventServerError, socketPath: String,
                                 environment: [String: String] = ProcessInfo.processInfo.environment) -> EventServerError {
        guard case .system(let code) = error.code, [EACCES, EPERM, EROFS].contains(code) else { return error }
        var advice = "give winkd a socket path this user may create with --socket PATH"
        if socketPath == EventSocketPath.systemPath && (environment["XDG_RUNTIME_DIR"] ?? "").isEmpty {
            advice += ", or set XDG_RUNTIME_DIR (a login session does; the socket is then "
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

    /// The overlay renderer for a configuration with an output device, else nil.
    /// - Throws: `Configuration.Invalid` (78) naming `overlay.layout` when the layout or an image fails.
    static func loadRenderer(_ configuration: Configuration) throws -> OverlayRenderer? {
        guard configuration.overlayOutputConfigured, let path = configuration.overlayLayoutPath else { return nil }
        do {
            return try OverlayRenderer(layout: OverlayLayout.load(path: path))
        } catch let error as ExitCodeError {
            throw Configuration.Invalid(path: configuration.path ?? "configuration",
                                        problems: ["overlay.layout: \(error.description)"])
        }
    }

    // MARK: Requests from other threads

    /// Asks the daemon to end; `run` then says `bye` and returns 0 within about a second, even with the
    /// camera stalled. Thread-safe; callable from a signal handler's dispatch queue.
    public func requestStop() {
        wake.lock()
        stopping = true
        wake.broadcast()
        wake.unlock()
    }

    /// Asks for the configuration file and overlay layout to be read again (SIGHUP); done on the processing
    /// thread between two frames. Thread-safe.
    public func requestReload() {
        wake.lock()
        reloadRequested = true
        wake.broadcast()
        wake.unlock()
    }

    private var shouldStop: Bool {
        wake.lock()
        defer { wake.unlock() }
        return stopping
    }

    private var clientCount: Int {
        wake.lock()
        defer { wake.unlock() }
        return clients
    }

    /// Closes the socket (sending `bye`), for a stop from a signal handler thread.
    public func shutdown(reason: String) { server.stop(reason: reason) }

    func publish(_ status: StatusLine) {
        server.publish(status: status)
        observer?.daemonPublished(status: status)
        log(.info, "status \(status.state)\(status.source.map { " \($0)" } ?? "")\(status.message.map { ": \($0)" } ?? "")")
    }

    // MARK: Running

    /// Serves until stopped or, for a file without `--loop`, until its end.
    /// - Returns: the exit code (0).
    public func run() -> ExitCode {
        server.start()
        log(.notice, "listening on \(server.path ?? "an inherited socket")")
        observer?.daemonIsReady(socketPath: server.path)
        var backoff = environment.backoffInitial
        while waitForDemand() {
            if !options.sourceIsFile {
                liveSession()
                continue
            }
            do {
                let source = try openRecording(options.source!)
                backoff = environment.backoffInitial
                publish(StatusLine(state: "source_opened", source: source.name))
                let ended = try stream(source)
                source.close()
                closeOutput()
                if ended && !options.loop {
                    // The recording ends as it ends (no made-up faceLost); clients get bye.
                    observer?.daemonIsStopping()
                    server.stop(reason: "end_of_input")
                    return .ok
                }
                endFace()
                if !ended { publish(StatusLine(state: "source_closed", source: source.name)) }
            } catch {
                // A source that fails (a camera unplugged, a looped file gone) ends the face and whatever it
                // was doing: a client holding a key for `smile` must see it end.
                endFace()
                let message = (error as? ExitCodeError)?.description ?? "\(error)"
                log(.warning, message)
                // The line names the source already; the message says only what is wrong with it.
                let reason = options.source.flatMap { message.hasPrefix($0 + ": ") ? String(message.dropFirst($0.count + 2)) : nil }
                publish(StatusLine(state: "source_failed", source: options.source, message: reason ?? message))
                pause(seconds: backoff)
                backoff = min(backoff * 2, environment.backoffMaximum)
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
            wake.lock()
            if !stopping && clients == 0 && !options.alwaysOn && !reloadRequested {
                _ = wake.wait(until: Date(timeIntervalSinceNow: 1))
            }
            let stop = stopping, demand = clients > 0 || options.alwaysOn
            wake.unlock()
            observer?.daemonIsAlive()
            applyReloadIfRequested()
            if stop { return false }
            if demand { return true }
        }
    }

    /// Waits `seconds` or until a stop is requested.
    private func pause(seconds: Double) {
        wake.lock()
        if !stopping { _ = wake.wait(until: Date(timeIntervalSinceNow: seconds)) }
        wake.unlock()
    }

    /// True once nobody has listened for `linger` seconds (never with `--always-on`).
    private func lingerExpired(_ idleSince: inout UInt64?) -> Bool {
        guard clientCount == 0 && !options.alwaysOn else {
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

    // MARK: Recorded files: one thread

    /// Reads and processes frames until the source ends (true) or nobody has listened for `linger`
    /// seconds or a stop is requested (false). For `--loop`, a file restarts with indices and times
    /// continuing.
    private func stream(_ first: FrameSource) throws -> Bool {
        var source = first
        let buffer = PixelBuffer(wantsColor: renderer != nil)
        let clock = environment.clock
        let paced = options.pace == .realtime
        var pacer = RecordingPacer()
        var indexOffset = 0, timeOffset = 0.0, last: FrameInfo?
        var idleSince: UInt64?
        while !shouldStop {
            if lingerExpired(&idleSince) { return false }
            observer?.daemonIsAlive()
            applyReloadIfRequested()
            buffer.wantsColor = renderer != nil
            guard var info = try source.read(into: buffer) else {
                guard options.loop, let l = last else { return true }
                source.close()
                source = try openRecording(source.name)
                indexOffset = l.index + 1
                timeOffset = l.time + 1 / (source.nominalFrameRate ?? 30)
                pipeline.tracker.reset()
                continue
            }
            info.index += indexOffset
            info.time += timeOffset
            if paced {
                // Released at its own timestamp; a gap in the recording is waited out for at most a second
                // and the schedule goes on from there (see `RecordingPacer`).
                let now = clock.nanoseconds()
                let due = pacer.due(time: info.time, now: now)
                var remaining = due > now ? due - now : 0
                while remaining > 0 && !shouldStop {
                    usleep(UInt32(min(remaining, 100_000_000) / 1000))
                    observer?.daemonIsAlive()
                    let later = clock.nanoseconds()
                    remaining = due > later ? due - later : 0
                }
                // The release time, never later than the moment the frame's lines are written.
                info.monotonicNanoseconds = min(max(due, now), clock.nanoseconds())
            }
            last = info
            // A still image is one instant, judged as `winkctl analyze` judges it.
            try process(buffer, info: info, still: source is StillImageSource)
        }
        return false
    }

    // MARK: Cameras: a capture thread and the processing thread

    /// Why a camera's read loop ended.
    private enum ReadOutcome {
        case sessionOver, stalled, unplugged(CaptureError), failed(String)
    }

    /// Streams from the camera while there is demand, surviving every camera fault.
    private func liveSession() {
        let exchange = FrameExchange(wantsColor: renderer != nil)
        wake.lock()
        sessionOver = false
        captureRunning = true
        interrupted = false
        wake.unlock()
        let capture = Thread { [self] in
            captureLoop(exchange)
            wake.lock()
            captureRunning = false
            wake.broadcast()
            wake.unlock()
            exchange.close()
        }
        capture.name = "winkd capture"
        capture.start()

        var idleSince: UInt64?
        let wantedColor = renderer != nil, wantedSettings = configuration.camera
        while !shouldStop && !lingerExpired(&idleSince) {
            observer?.daemonIsAlive()
            applyReloadIfRequested()
            // A reload that switches colour or the camera settings restarts the session.
            if (renderer != nil) != wantedColor || configuration.camera != wantedSettings { break }
            if let frame = exchange.take(timeout: 0.2) {
                do {
                    try processLive(frame.buffer, info: frame.info)
                } catch {
                    log(.error, "\((error as? ExitCodeError)?.description ?? "\(error)")")
                }
                continue
            }
            wake.lock()
            let lost = interrupted, running = captureRunning
            interrupted = false
            wake.unlock()
            if lost { endFace() }
            if !running { break }
        }
        // Ask the capture thread to end; its reads wait at most `readSlice`, but a source that blocks
        // longer must not hold up a stop: give it half a second.
        wake.lock()
        sessionOver = true
        wake.broadcast()
        let deadline = Date(timeIntervalSinceNow: 0.5)
        while captureRunning && wake.wait(until: deadline) {}
        wake.unlock()
        exchange.close()
        endFace()
        closeOutput()
        darkSince = nil
        darkReported = false
    }

    private var captureShouldEnd: Bool {
        wake.lock()
        defer { wake.unlock() }
        return sessionOver || stopping
    }

    /// Waits `seconds` on the capture thread, or until the session ends.
    private func captureWait(_ seconds: Double) {
        wake.lock()
        if !sessionOver && !stopping { _ = wake.wait(until: Date(timeIntervalSinceNow: seconds)) }
        wake.unlock()
    }

    private func markInterrupted() {
        wake.lock()
        interrupted = true
        wake.unlock()
    }

    /// The capture thread: find, open, read, and recover, until the session ends.
    private func captureLoop(_ exchange: FrameExchange) {
        var backoff = environment.backoffInitial
        var lastState: String?
        func announce(_ state: String, _ source: String?, _ message: String?) {
            guard state != lastState else { return }
            lastState = state
            publish(StatusLine(state: state, source: source, message: message))
        }
        while !captureShouldEnd {
            let name: String
            do {
                name = try options.source ?? environment.defaultCamera()
            } catch {
                announce("camera_absent", nil, (error as? ExitCodeError)?.description ?? "\(error)")
                captureWait(environment.absentPollInterval)
                continue
            }
            guard environment.cameraIsPresent(name) else {
                if lastState != "camera_unplugged" { announce("camera_absent", name, "waiting for \(name)") }
                captureWait(environment.absentPollInterval)
                continue
            }
            wake.lock()
            var settings = cameraSettings
            wake.unlock()
            settings.timeout = environment.readSlice
            let camera: FrameSource
            do {
                camera = try environment.openCamera(name, settings, exchange.producerBuffer.wantsColor)
            } catch let error as CaptureError {
                switch error.code {
                case .busy:
                    publish(StatusLine(state: "camera_busy", source: name,
                                       message: "\(error.description); retrying in \(formatSeconds(backoff))"))
                    lastState = "camera_busy"
                    captureWait(backoff)
                    backoff = min(backoff * 2, environment.backoffMaximum)
                case .missing, .noDevice, .disconnected:
                    if lastState != "camera_unplugged" { announce("camera_absent", name, error.description) }
                    captureWait(environment.absentPollInterval)
                default:
                    publish(StatusLine(state: "source_failed", source: name, message: error.description))
                    lastState = "source_failed"
                    captureWait(backoff)
                    backoff = min(backoff * 2, environment.backoffMaximum)
                }
                continue
            } catch {
                publish(StatusLine(state: "source_failed", source: name, message: "\(error)"))
                captureWait(backoff)
                backoff = min(backoff * 2, environment.backoffMaximum)
                continue
            }
            backoff = environment.backoffInitial
            lastState = "source_opened"
            publish(StatusLine(state: "source_opened", source: name))
            let outcome = read(camera, into: exchange)
            camera.close()
            switch outcome {
            case .sessionOver:
                publish(StatusLine(state: "source_closed", source: name))
            case .stalled:
                markInterrupted()
                lastState = "camera_stalled"
                publish(StatusLine(state: "camera_stalled", source: name,
                                   message: "no frame for \(formatSeconds(environment.stallSeconds)); reopening"))
            case .unplugged(let error):
                markInterrupted()
                lastState = "camera_unplugged"
                publish(StatusLine(state: "camera_unplugged", source: name,
                                   message: "\(error.description); waiting for it to come back"))
                captureWait(environment.absentPollInterval)
            case .failed(let message):
                markInterrupted()
                lastState = "source_failed"
                publish(StatusLine(state: "source_failed", source: name, message: message))
                captureWait(backoff)
                backoff = min(backoff * 2, environment.backoffMaximum)
            }
        }
    }

    /// Reads frames into the exchange until the session ends or the camera fails.
    private func read(_ camera: FrameSource, into exchange: FrameExchange) -> ReadOutcome {
        let clock = environment.clock
        var lastFrame = clock.nanoseconds()
        let v4l2 = camera as? V4L2Camera
        var corruptReported = 0
        var corruptReportedAt: UInt64?
        while !captureShouldEnd {
            do {
                guard let info = try camera.read(into: exchange.producerBuffer) else {
                    return .failed("\(camera.name): the stream ended")
                }
                exchange.publish(info)
                lastFrame = clock.nanoseconds()
            } catch let error as CaptureError where error.code == .timeout {
                if Double(clock.nanoseconds() - lastFrame) / 1e9 >= environment.stallSeconds { return .stalled }
            } catch let error as CaptureError where error.code == .disconnected {
                return .unplugged(error)
            } catch {
                return .failed((error as? ExitCodeError)?.description ?? "\(error)")
            }
            if let v4l2, v4l2.corruptFrames > corruptReported {
                let now = clock.nanoseconds()
                if corruptReportedAt.map({ Double(now - $0) / 1e9 >= environment.corruptReportInterval }) ?? true {
                    corruptReported = v4l2.corruptFrames
                    corruptReportedAt = now
                    publish(StatusLine(state: "camera_corrupt_frames", source: camera.name,
                                       message: "\(corruptReported) corrupt frames dropped of \(v4l2.framesDequeued)"))
                }
            }
        }
        return .sessionOver
    }

    /// One camera frame on the processing thread. Dark and blank frames are not tracked (the pipeline
    /// skips them); darkness or a constant picture lasting `darkSeconds` is told once (`camera_dark`,
    /// `capture_blank`), and its end once (`camera_light`).
    private func processLive(_ buffer: PixelBuffer, info: FrameInfo) throws {
        try process(buffer, info: info)
        let usability = pipeline.lastUsability
        guard usability != .usable else {
            if darkReported { publish(StatusLine(state: "camera_light", source: nil, message: nil)) }
            darkSince = nil
            darkReported = false
            return
        }
        let since = darkSince ?? info.monotonicNanoseconds
        darkSince = since
        if !darkReported && info.monotonicNanoseconds >= since
            && Double(info.monotonicNanoseconds - since) / 1e9 >= environment.darkSeconds
        {
            darkReported = true
            let seconds = formatSeconds(environment.darkSeconds)
            publish(usability == .dark
                ? StatusLine(state: "camera_dark", source: nil,
                             message: "the picture has been nearly black for \(seconds); is the lens covered?")
                : StatusLine(state: "capture_blank", source: nil,
                             message: "every frame has been one flat colour for \(seconds); the camera or its driver delivers no picture"))
        }
    }

    // MARK: Per frame (processing thread)

    /// Tracks, publishes coefficients and events, and writes the overlaid frame when configured; then
    /// runs the tracker's deferred region check, once the frame's lines are out.
    private func process(_ buffer: PixelBuffer, info: FrameInfo, still: Bool = false) throws {
        try processAndPublish(buffer, info: info, still: still)
        try pipeline.tracker.completeFrame()
    }

    private func processAndPublish(_ buffer: PixelBuffer, info: FrameInfo, still: Bool) throws {
        lastInfo = info
        let face = try pipeline.process(buffer, info: info, still: still)
        if let line = pipeline.coefficientsLine(info: info) { server.publish(coefficients: line) }
        publishEvents()
        guard let renderer, let device = configuration.overlayDevice, buffer.wantsColor else { return }
        if output == nil && !outputFailed {
            do {
                output = try environment.openOutput(device, buffer.width, buffer.height)
                publish(StatusLine(state: "overlay_output_opened", source: device,
                                   message: "\(buffer.width)x\(buffer.height) \(output!.format.pixelFormat)"))
            } catch {
                outputFailed = true
                publish(StatusLine(state: "overlay_output_failed", source: device,
                                   message: (error as? ExitCodeError)?.description ?? "\(error)"))
            }
        }
        guard let output else { return }
        faces.removeAll(keepingCapacity: true)
        if let face { faces.append(face) }
        do {
            try renderer.render(faces, on: buffer, mirrored: configuration.mirrored)
            try output.write(buffer)
        } catch {
            closeOutput()
            outputFailed = true
            publish(StatusLine(state: "overlay_output_failed", source: device,
                               message: (error as? ExitCodeError)?.description ?? "\(error)"))
        }
    }

    private func publishEvents() {
        for event in pipeline.engine.events {
            server.publish(event: event)
            observer?.daemonPublished(event: event)
        }
    }

    /// Ends a present face with `faceLost` (the source went away or closed) and resets tracking.
    private func endFace() {
        pipeline.tracker.reset()
        guard pipeline.engine.facePresent else { return }
        var info = lastInfo
        info.monotonicNanoseconds = environment.clock.nanoseconds()
        pipeline.engine.endFace(frame: info)
        publishEvents()
    }

    private func closeOutput() {
        output?.close()
        output = nil
        outputFailed = false
    }

    // MARK: Reloading (processing thread)

    private func applyReloadIfRequested() {
        wake.lock()
        let requested = reloadRequested
        reloadRequested = false
        wake.unlock()
        guard requested else { return }
        observer?.daemonIsReloading()
        let ok = reload()
        observer?.daemonDidReload(ok: ok)
    }

    /// Reads the configuration file and overlay layout again; on any problem keeps the old ones.
    /// - Returns: whether the new configuration is in use.
    @discardableResult
    /// The names `hello` announces: the face's arrival and departure, then the analyzer table's events.
    static func eventNames(_ configuration: Configuration) -> [String] {
        [EventName.faceFound, EventName.faceLost] + configuration.analyzers.map(\.event)
    }

    func reload() -> Bool {
        guard let path = configuration.path else {
            publish(StatusLine(state: "reload_ok", message: "no configuration file; nothing to reload"))
            return true
        }
        do {
            var fresh = try Configuration.load(path: path)
            if options.mirroredFlag { fresh.mirrored = true }
            let freshRenderer = try Self.loadRenderer(fresh)
            try server.announce(eventNames: Self.eventNames(fresh))  // for clients connecting from now on
            endFace()  // the old engine ends a present face; the new one finds it again
            let (personalised, prior) = try fresh.applyingProfile()
            pipeline = FramePipeline(configuration: personalised, predictor: predictor, prior: prior)
            if fresh.overlayDevice != configuration.overlayDevice || freshRenderer == nil { closeOutput() }
            outputFailed = false
            let unchanged = fresh.socketMode != configuration.socketMode || fresh.maximumClients != configuration.maximumClients
                ? " (socket settings apply at the next start)" : ""
            configuration = fresh
            renderer = freshRenderer
            wake.lock()
            cameraSettings = fresh.camera
            wake.unlock()
            publish(StatusLine(state: "reload_ok", source: path, message: "configuration reloaded\(unchanged)"))
            return true
        } catch {
            let reason = ((error as? ExitCodeError)?.description ?? "\(error)").replacingOccurrences(of: "\n", with: "; ")
            log(.warning, "reload failed, keeping the old configuration: \(reason)")
            publish(StatusLine(state: "reload_failed", source: path, message: Self.shortened(reason)))
            return false
        }
    }
}

/// When a recording's frames are released under `--pace realtime`: at their own presentation times, like
/// a camera, on `CLOCK_MONOTONIC`.
///
/// The schedule is anchored at the first frame. A jump in presentation time between two frames larger than
/// `maximumPause` (a recording with a gap, a timestamp reset, time going backwards) is waited out for at
/// most `maximumPause`, and the schedule is anchored again at that frame; so is a frame released more than
/// `maximumPause` late (a stalled machine): the frames after it keep their own spacing instead of coming a
/// second apart, or in a burst. A value type with no I/O.
struct RecordingPacer {
    /// The longest pause between two frames, and the most a release may lag, in nanoseconds (1 s).
    static let maximumPause: UInt64 = 1_000_000_000

    /// The frame at `time` (s) is due at `nanoseconds`; nil before the first frame.
    private var anchor: (time: Double, nanoseconds: UInt64)?
    private var previous: (time: Double, due: UInt64) = (0, 0)

    /// When the frame with presentation time `time` (seconds) is due, given the clock reads `now`.
    mutating func due(time: Double, now: UInt64) -> UInt64 {
        var due: UInt64
        if let anchor {
            let step = time - previous.time
            if !(step >= 0) || step * 1e9 > Double(Self.maximumPause) {
                due = previous.due + (step > 0 ? Self.maximumPause : 0)
                self.anchor = (time, due)
            } else {
                due = anchor.nanoseconds + UInt64(((time - anchor.time) * 1e9).rounded())
            }
            if now > due && now - due > Self.maximumPause {
                due = now
                self.anchor = (time, due)
            }
        } else {
            due = now
            anchor = (time, now)
        }
        previous = (time, due)
        return due
    }
}

extension Daemon {
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

/// "2 s", "0.25 s".
private func formatSeconds(_ s: Double) -> String {
    s == s.rounded() ? "\(Int(s)) s" : "\(s) s"
}
