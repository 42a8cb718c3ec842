import Capture
import EventServer
import Foundation
import WinkCore

/// Streams from a V4L2 camera: a capture thread reads into three reused `PixelBuffer`s and hands them to
/// the processing thread through a `FrameExchange` ("latest frame wins": a frame not yet taken when a newer
/// one arrives is dropped).
///
/// Camera faults never end the daemon; each becomes a `status` line to every client (`StatusState`):
/// - `camera_absent`: no camera (yet); looked for every `absentPollInterval` s while clients are connected,
/// - `camera_busy`: another program streams from it (`EBUSY`); retried after 1, 2, 4, 8, 10, 10... s,
/// - `camera_unplugged`: it went away mid-stream (`ENODEV`); `faceLost` if a face was present, buffers and
///   descriptor released, and streaming resumes when the same name (its `/dev/v4l/by-id` link) is back,
/// - `camera_stalled`: no frame for `stallSeconds`; the camera is closed and opened again,
/// - `camera_corrupt_frames`: corrupt (MJPEG) frames were dropped (at most every `corruptReportInterval` s),
/// - `camera_dark` / `camera_light`: mean brightness stayed below `FrameUsability.darkThreshold` for
///   `darkSeconds`, and came back; dark frames are not tracked, so darkness is not "no face" (no
///   `faceLost` storm) until it has lasted `quality.darkFaceLostAfter` (a covered lens: held keys let up),
/// - `capture_blank` (ended by `camera_light` too): every frame one flat colour for `darkSeconds`,
/// - `source_opened`, `source_closed`, `source_failed`.
///
/// `run()` belongs to the processing thread; the capture thread lives only while `run()` does.
final class CameraSession: SourceSession {
    /// The `--source` device, nil for the first V4L2 capture device.
    private let device: String?
    private let host: SessionHost

    // Under `host.signals`' lock: shared by the two threads.
    private var sessionOver = false
    private var captureRunning = false
    private var interrupted = false

    // Processing thread only.
    private var darkSince: UInt64?
    private var darkReported = false

    init(device: String?, host: SessionHost) {
        self.device = device
        self.host = host
    }

    /// Why a camera's read loop ended.
    private enum ReadOutcome {
        case sessionOver, stalled, unplugged(CaptureError), failed(String)
    }

    func run() -> SessionEnd {
        let publisher = host.publisher, signals = host.signals
        let exchange = FrameExchange(wantsColor: publisher.wantsColor)
        signals.withLock {
            sessionOver = false
            captureRunning = true
            interrupted = false
        }
        let capture = Thread { [self] in
            captureLoop(exchange)
            signals.change { captureRunning = false }
            exchange.close()
        }
        capture.name = "winkd capture"
        capture.start()

        var idleSince: UInt64?
        let wantedColor = publisher.wantsColor, wantedSettings = host.cameraSettings
        while host.keepStreaming(idleSince: &idleSince) {
            // A reload that switches colour or the camera settings restarts the session.
            if publisher.wantsColor != wantedColor || host.cameraSettings != wantedSettings { break }
            if let frame = exchange.take(timeout: 0.2) {
                do {
                    try process(frame.buffer, info: frame.info)
                } catch {
                    publisher.log(.error, describeError(error))
                }
                continue
            }
            let (lost, running) = signals.withLock {
                defer { interrupted = false }
                return (interrupted, captureRunning)
            }
            if lost { publisher.endFace() }
            if !running { break }
        }
        // Ask the capture thread to end; its reads wait at most `readSlice`, but a source that blocks
        // longer must not hold up a stop: give it half a second.
        signals.change { sessionOver = true }
        signals.wait(while: { captureRunning }, until: Date(timeIntervalSinceNow: 0.5))
        exchange.close()
        publisher.endFace()
        publisher.closeOutput()
        darkSince = nil
        darkReported = false
        return .idle
    }

    /// One camera frame on the processing thread. Dark and blank frames are not tracked (the pipeline
    /// skips them); darkness or a constant picture lasting `darkSeconds` is told once (`camera_dark`,
    /// `capture_blank`), and its end once (`camera_light`).
    private func process(_ buffer: PixelBuffer, info: FrameInfo) throws {
        let publisher = host.publisher
        let usability = try publisher.publish(frame: buffer, info: info)
        guard usability != .usable else {
            if darkReported { publisher.publish(status: StatusLine(state: .cameraLight)) }
            darkSince = nil
            darkReported = false
            return
        }
        let since = darkSince ?? info.monotonicNanoseconds
        darkSince = since
        let darkSeconds = host.environment.darkSeconds
        guard !darkReported && info.monotonicNanoseconds >= since
            && Double(info.monotonicNanoseconds - since) / 1e9 >= darkSeconds else { return }
        darkReported = true
        let seconds = formatSeconds(darkSeconds)
        publisher.publish(status: usability == .dark
            ? StatusLine(state: .cameraDark,
                         message: "the picture has been nearly black for \(seconds); is the lens covered?")
            : StatusLine(state: .captureBlank,
                         message: "every frame has been one flat colour for \(seconds); the camera or its driver "
                             + "delivers no picture"))
    }

    // MARK: The capture thread

    private var captureShouldEnd: Bool {
        host.signals.withLock { sessionOver } || host.signals.stopRequested
    }

    /// Waits `seconds` on the capture thread, or until the session ends.
    private func captureWait(_ seconds: Double) {
        host.signals.wait(seconds: seconds, unless: { sessionOver })
    }

    /// Find, open, read, and recover, until the session ends.
    private func captureLoop(_ exchange: FrameExchange) {
        let environment = host.environment
        var backoff = environment.backoffInitial
        var lastState: StatusState?
        func announce(_ state: StatusState, _ source: String?, _ message: String?, always: Bool = false) {
            guard always || state != lastState else { return }
            lastState = state
            host.publisher.publish(status: StatusLine(state: state, source: source, message: message))
        }
        func retryLater() {
            captureWait(backoff)
            backoff = min(backoff * 2, environment.backoffMaximum)
        }
        while !captureShouldEnd {
            let name: String
            do {
                name = try device ?? environment.defaultCamera()
            } catch {
                announce(.cameraAbsent, nil, describeError(error))
                captureWait(environment.absentPollInterval)
                continue
            }
            guard environment.cameraIsPresent(name) else {
                if lastState != .cameraUnplugged { announce(.cameraAbsent, name, "waiting for it to appear") }
                captureWait(environment.absentPollInterval)
                continue
            }
            var settings = host.cameraSettings
            settings.timeout = environment.readSlice
            let camera: FrameSource
            do {
                camera = try environment.openCamera(name, settings, exchange.producerBuffer.wantsColor)
            } catch let error as CaptureError {
                switch error.code {
                case .busy:
                    announce(.cameraBusy, name,
                             "\(describeError(error, besides: name)); retrying in \(formatSeconds(backoff))",
                             always: true)
                    retryLater()
                case .missing, .noDevice, .disconnected:
                    if lastState != .cameraUnplugged {
                        announce(.cameraAbsent, name, describeError(error, besides: name))
                    }
                    captureWait(environment.absentPollInterval)
                default:
                    announce(.sourceFailed, name, describeError(error, besides: name), always: true)
                    retryLater()
                }
                continue
            } catch {
                announce(.sourceFailed, name, "\(error)", always: true)
                retryLater()
                continue
            }
            backoff = environment.backoffInitial
            announce(.sourceOpened, name, nil, always: true)
            let outcome = read(camera, into: exchange)
            camera.close()
            switch outcome {
            case .sessionOver:
                announce(.sourceClosed, name, nil, always: true)
            case .stalled:
                markInterrupted()
                announce(.cameraStalled, name,
                         "no frame for \(formatSeconds(environment.stallSeconds)); reopening", always: true)
            case .unplugged(let error):
                markInterrupted()
                announce(.cameraUnplugged, name, "\(describeError(error, besides: name)); waiting for it to come back",
                         always: true)
                captureWait(environment.absentPollInterval)
            case .failed(let message):
                markInterrupted()
                announce(.sourceFailed, name, message, always: true)
                retryLater()
            }
        }
    }

    private func markInterrupted() {
        host.signals.withLock { interrupted = true }
    }

    /// Reads frames into the exchange until the session ends or the camera fails.
    private func read(_ camera: FrameSource, into exchange: FrameExchange) -> ReadOutcome {
        let environment = host.environment
        let clock = environment.clock
        var lastFrame = clock.nanoseconds()
        var corruptReported = 0
        var corruptReportedAt: UInt64?
        while !captureShouldEnd {
            do {
                guard let info = try camera.read(into: exchange.producerBuffer) else {
                    return .failed("the stream ended")
                }
                exchange.publish(info)
                lastFrame = clock.nanoseconds()
            } catch let error as CaptureError where error.code == .timeout {
                if Double(clock.nanoseconds() - lastFrame) / 1e9 >= environment.stallSeconds { return .stalled }
            } catch let error as CaptureError where error.code == .disconnected {
                return .unplugged(error)
            } catch {
                return .failed(describeError(error, besides: camera.name))
            }
            if camera.corruptFramesDropped > corruptReported {
                let now = clock.nanoseconds()
                if corruptReportedAt.map({ Double(now - $0) / 1e9 >= environment.corruptReportInterval }) ?? true {
                    corruptReported = camera.corruptFramesDropped
                    corruptReportedAt = now
                    host.publisher.publish(status: StatusLine(
                        state: .cameraCorruptFrames, source: camera.name,
                        message: "\(corruptReported) corrupt frames dropped of \(camera.framesDequeued)"))
                }
            }
        }
        return .sessionOver
    }
}
