import Capture
import EventServer
import Expressions
import FaceTracking
import Foundation
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
    /// Seconds the source stays open after the last client leaves.
    public var linger: Double = 3

    /// Parses `winkd [--source DEVICE|FILE] [--socket PATH] [--config FILE] [--model FILE] [--mirrored]
    /// [--pace realtime|fast] [--loop] [--always-on]`.
    /// - Throws: `UsageError` (64), `Configuration.Invalid` (78).
    public init(_ args: inout Arguments, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
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
}

/// The daemon: an event server whose clients switch the source on and off, and one processing thread.
///
/// The source opens when the first client connects (or at once with `--always-on`) and closes `linger`
/// seconds after the last leaves. A recorded file plays once (or loops) and at its end every client gets
/// `bye` with reason `end_of_input` and the daemon exits 0. Camera faults become `status` lines and the
/// camera is retried with backoff.
public final class Daemon: @unchecked Sendable {
    let options: DaemonOptions
    let server: EventServer
    let pipeline: FramePipeline
    let log: (EventServer.LogLevel, String) -> Void
    private let clock = SystemClock()
    private let wake = NSCondition()
    private var clients = 0
    private var stopping = false

    /// Loads the model, checks a file source, binds the socket.
    /// - Throws: `FaceTrackingError` (78) for the model, `CaptureError` (65/66) for an unreadable file
    ///   source, `EventServerError` for the socket.
    public init(options: DaemonOptions, log: @escaping @Sendable (EventServer.LogLevel, String) -> Void) throws {
        self.options = options
        self.log = log
        let predictor = try ShapePredictor(path: options.modelPath)
        pipeline = FramePipeline(configuration: options.configuration, predictor: predictor)
        if let s = options.source, !s.hasPrefix("/dev/") {
            try openMediaFile(path: s).close()  // fail now (65/66), not when the first client arrives
        }
        let names = [EventName.faceFound, EventName.faceLost] + options.configuration.analyzers.map(\.event)
        if let fd = try SocketActivation.listeningSocket() {
            server = try EventServer(listeningFD: fd, eventNames: names, log: log)
        } else {
            server = try EventServer(path: options.socketPath, eventNames: names, log: log)
        }
        server.onClientCountChange = { [weak self] n in
            guard let self else { return }
            wake.lock()
            clients = n
            wake.broadcast()
            wake.unlock()
        }
    }

    static func isRegularFile(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
            && !path.hasPrefix("/dev/")
    }

    /// Asks the processing loop to end; `run` then says `bye` and returns. Thread-safe.
    public func requestStop() {
        wake.lock()
        stopping = true
        wake.broadcast()
        wake.unlock()
    }

    private var shouldStop: Bool {
        wake.lock()
        defer { wake.unlock() }
        return stopping
    }

    /// Waits until a client is connected (or `alwaysOn`), or a stop is requested. Returns false on stop.
    private func waitForDemand() -> Bool {
        wake.lock()
        defer { wake.unlock() }
        while !stopping && clients == 0 && !options.alwaysOn { wake.wait() }
        return !stopping
    }

    /// Serves until stopped or, for a file without `--loop`, until its end.
    /// - Returns: the exit code (0).
    public func run() -> ExitCode {
        server.start()
        log(.notice, "listening on \(server.path ?? "an inherited socket")")
        var backoff = 1.0
        while waitForDemand() {
            do {
                let source = try openSource()
                backoff = 1
                server.publish(status: StatusLine(state: "source_opened", source: source.name))
                log(.info, "opened \(source.name)")
                let ended = try stream(source)
                source.close()
                pipeline.tracker.reset()
                if ended && !options.loop && !source.isLive {
                    server.stop(reason: "end_of_input")
                    return .ok
                }
                if !ended { server.publish(status: StatusLine(state: "source_closed", source: source.name)) }
            } catch let error as ExitCodeError {
                log(.warning, error.description)
                server.publish(status: StatusLine(state: "source_failed", source: options.source, message: error.description))
                pause(seconds: backoff)
                backoff = min(backoff * 2, 10)
            } catch {
                log(.error, "\(error)")
                pause(seconds: backoff)
                backoff = min(backoff * 2, 10)
            }
        }
        server.stop(reason: "shutdown")
        return .ok
    }

    private func pause(seconds: Double) {
        wake.lock()
        _ = wake.wait(until: Date(timeIntervalSinceNow: seconds))
        wake.unlock()
    }

    private func openSource() throws -> FrameSource {
        if let s = options.source, !s.hasPrefix("/dev/") { return try openMediaFile(path: s) }
        let device = try options.source ?? V4L2Discovery.defaultDevice()
        return try V4L2Camera(path: device)
    }

    /// Reads and processes frames until the source ends (true) or nobody has listened for `linger`
    /// seconds or a stop is requested (false). For `--loop`, a file restarts with indices and times
    /// continuing.
    private func stream(_ first: FrameSource) throws -> Bool {
        var source = first
        let buffer = PixelBuffer()
        let paced = !source.isLive && options.pace == .realtime
        var start = clock.nanoseconds()
        var indexOffset = 0, timeOffset = 0.0, last: FrameInfo?
        var idleSince: UInt64?
        while !shouldStop {
            wake.lock()
            let n = clients
            wake.unlock()
            if n == 0 && !options.alwaysOn {
                let now = clock.nanoseconds()
                if let since = idleSince {
                    if Double(now - since) / 1e9 >= options.linger { return false }
                } else {
                    idleSince = now
                }
            } else {
                idleSince = nil
            }
            guard var info = try source.read(into: buffer) else {
                guard options.loop, !source.isLive, let l = last else { return true }
                source.close()
                source = try openMediaFile(path: source.name)
                indexOffset = l.index + 1
                timeOffset = l.time + 1 / (source.nominalFrameRate ?? 30)
                pipeline.tracker.reset()
                continue
            }
            info.index += indexOffset
            info.time += timeOffset
            if paced {
                if last == nil { start = clock.nanoseconds() }
                let target = start + UInt64(max(0, info.time) * 1e9)
                let now = clock.nanoseconds()
                if target > now { usleep(UInt32(min(Double(target - now) / 1e3, 1e6))) }
                info.monotonicNanoseconds = max(target, now)
            }
            last = info
            try pipeline.process(buffer, info: info)
            if let line = pipeline.coefficientsLine(info: info) { server.publish(coefficients: line) }
            for event in pipeline.engine.events { server.publish(event: event) }
        }
        return false
    }

    /// Closes the socket (sending `bye`), for a stop from a signal handler thread.
    public func shutdown(reason: String) { server.stop(reason: reason) }
}
