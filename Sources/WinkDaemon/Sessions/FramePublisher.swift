import Capture
import EventServer
import Expressions
import FaceTracking
import Foundation
import Overlay
import Synchronization
import WinkCore

/// What the daemon sends out: status lines, and for each frame its coefficient line, its events and, with
/// an overlay output configured, the frame drawn with the layout and written to the V4L2 output device
/// (without one, no frame leaves the process).
///
/// It also keeps what a client's `status` request is answered with (`sourceReport()`): the source's latest
/// state and the recent frame rate.
///
/// Thread-safety: `publish(status:)` and `sourceReport()` may be called from any thread (the capture
/// thread reports camera faults through the first, the event server's thread asks the second); everything
/// else belongs to the processing thread.
final class FramePublisher: @unchecked Sendable {
    let server: EventServer
    let observer: DaemonObserver?
    let log: @Sendable (EventServer.LogLevel, String) -> Void
    private let environment: DaemonEnvironment

    // Processing thread only.
    private(set) var pipeline: FramePipeline
    private(set) var configuration: Configuration
    private var renderer: OverlayRenderer?
    private var output: V4L2Output?
    private var outputFailed = false
    private var faces: [FaceObservation] = []
    private var lastInfo = FrameInfo(index: 0, time: 0, monotonicNanoseconds: 0)
    /// The source's latest state and the release times of the last 2 s of frames (ns, monotonic).
    private let reported = Mutex<(state: StatusState, source: String?, frameTimes: [UInt64])>((.idle, nil, []))

    init(server: EventServer, pipeline: FramePipeline, configuration: Configuration, renderer: OverlayRenderer?,
         environment: DaemonEnvironment, observer: DaemonObserver?,
         log: @escaping @Sendable (EventServer.LogLevel, String) -> Void) {
        self.server = server
        self.pipeline = pipeline
        self.configuration = configuration
        self.renderer = renderer
        self.environment = environment
        self.observer = observer
        self.log = log
    }

    /// Whether frames must be read in colour: only for the overlay output.
    var wantsColor: Bool { renderer != nil }

    /// Sends `status` to every client, tells the observer and logs it. Thread-safe.
    func publish(status: StatusLine) {
        reported.withLock { report in
            switch status.state {
            case .sourceClosed:
                report = (.idle, nil, [])
            case .cameraLight:
                report.state = .sourceOpened  // frames are tracked again
            case let news where !news.concernsTheSource:
                break  // not the source's state
            default:
                report.state = status.state
                report.source = status.source ?? report.source
            }
        }
        server.publish(status: status)
        observer?.daemonPublished(status: status)
        log(Self.logLevel(of: status.state), "status \(status.state.rawValue)\(status.source.map { " \($0)" } ?? "")"
            + "\(status.message.map { ": \($0)" } ?? "")")
    }

    /// The level a status line is logged at: warning where something the user set up does not work (the
    /// source failed; the camera in use by another program, unplugged or silent; the overlay output device
    /// failed), so a log read at warning shows it; info for the rest (a virtual camera that failed, or a
    /// camera that could not be opened, was logged at info, unseen).
    static func logLevel(of state: StatusState) -> EventServer.LogLevel {
        switch state {
        case .sourceFailed, .cameraBusy, .cameraUnplugged, .cameraStalled, .overlayOutputFailed: .warning
        default: .info
        }
    }

    /// Processes one frame and sends what it gave: the coefficient line, the rows line (only built while a
    /// client asked for rows), the events, the overlaid frame;
    /// then ends the frame (`FramePipeline.completeFrame()`), once its lines are out.
    /// - Parameter still: the frame is a still image, one instant.
    /// - Returns: whether the frame could show a face (dark and blank frames are skipped).
    /// - Throws: `FaceTrackingError.internal` if dlib fails. A failing overlay output is a status line, not
    ///   a throw.
    @discardableResult
    func publish(frame buffer: PixelBuffer, info: FrameInfo, still: Bool = false) throws -> FrameUsability {
        lastInfo = info
        let now = environment.clock.nanoseconds()
        reported.withLock { report in
            report.frameTimes.removeFirst(report.frameTimes.prefix { now &- $0 > Self.rateWindow }.count)
            report.frameTimes.append(now)
        }
        let outcome = try pipeline.process(buffer, info: info, still: still)
        server.publish(coefficients: self.pipeline.coefficientsLine(info: info))
        let engine = pipeline.engine
        server.publish(rows: { RowsLine(table: engine.table, info: info, face: engine.facePresent) })
        send(outcome.events)
        writeOverlay(buffer, face: outcome.face)
        try pipeline.completeFrame()
        return outcome.usability
    }

    /// Nanoseconds of frames the frame rate is measured over.
    static let rateWindow: UInt64 = 2_000_000_000

    /// What a `status` request is answered with: the source's latest state (`idle` before the source
    /// opens and after it closes) and device or file, and the frames processed per second over the last
    /// 2 s (0 when the last frame is over 2 s old), to 2 decimals. Thread-safe.
    func sourceReport() -> EventServer.SourceReport {
        let now = environment.clock.nanoseconds()
        return reported.withLock { report in
            let recent = report.frameTimes.filter { now &- $0 <= Self.rateWindow }
            var fps = 0.0
            if recent.count >= 2, let first = recent.first, let last = recent.last, last > first {
                fps = (Double(recent.count - 1) / (Double(last - first) / 1e9) * 100).rounded() / 100
            }
            return EventServer.SourceReport(state: report.state, source: report.source, fps: fps)
        }
    }

    /// Ends a present face with `faceLost` (the source went away, closed or is replaced), dated at the last
    /// frame and stamped now, and starts tracking afresh.
    func endFace() {
        send(pipeline.endFace(at: lastFrameNow()))
    }

    /// The last frame processed, stamped now: what happens between frames (the source ending, a reload) is
    /// dated at it.
    private func lastFrameNow() -> FrameInfo {
        var info = lastInfo
        info.monotonicNanoseconds = environment.clock.nanoseconds()
        return info
    }

    /// The recording ended: a face already unseen (within its grace, or behind dark frames) is lost, dated
    /// at its first frame without it, as `winkctl analyze` decides; a face still in view stays. winkd
    /// dropped these last `ended` and `faceLost` lines (a `began` without its `ended` before `bye`).
    func finishInput() {
        pipeline.finish()
        send(pipeline.engine.events)
    }

    /// A looped recording starts again: tracking starts afresh, expressions go on.
    func restartTracking() {
        pipeline.restartTracking()
    }

    /// Closes the overlay output device; the next frame opens it again.
    func closeOutput() {
        output?.close()
        output = nil
        outputFailed = false
    }

    /// Puts a reloaded configuration in use, with its overlay renderer (nil: no overlay) and a pipeline that
    /// `makePipeline` makes to carry on from the current one (`FramePipeline(continuing:)`) at the last frame,
    /// stamped now; sends the events that ends (held expressions whose rows changed).
    func reconfigure(
        _ configuration: Configuration, renderer: OverlayRenderer?,
        makePipeline: (_ current: FramePipeline, _ at: FrameInfo) -> FramePipeline
    ) {
        if configuration.overlayDevice != self.configuration.overlayDevice || renderer == nil { closeOutput() }
        outputFailed = false
        pipeline = makePipeline(pipeline, lastFrameNow())
        send(pipeline.engine.events)
        self.configuration = configuration
        self.renderer = renderer
    }

    private func send(_ events: [ExpressionEvent]) {
        for event in events {
            server.publish(event: event)
            observer?.daemonPublished(event: event)
        }
    }

    /// Draws the layout on the frame and writes it to the output device, opening the device at the first
    /// frame; a device that fails is reported once (`overlay_output_failed`) and left closed.
    private func writeOverlay(_ buffer: PixelBuffer, face: FaceObservation?) {
        guard let renderer, let device = configuration.overlayDevice, buffer.wantsColor else { return }
        if output == nil && !outputFailed {
            do {
                let opened = try environment.openOutput(device, buffer.width, buffer.height)
                output = opened
                publish(status: StatusLine(state: .overlayOutputOpened, source: device,
                                           message: "\(buffer.width)x\(buffer.height) \(opened.format.pixelFormat)"))
            } catch {
                outputFailed = true
                publish(status: StatusLine(state: .overlayOutputFailed, source: device,
                                           message: describeError(error, besides: device)))
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
            publish(status: StatusLine(state: .overlayOutputFailed, source: device,
                                       message: describeError(error, besides: device)))
        }
    }
}
