import Capture
import CaptureTestSupport
import EventServer
import FaceTracking
import Foundation
import Glibc
import TestSupport
import Testing
import WinkCore

@testable import WinkDaemon

/// Collects what the daemon publishes.
final class Recorder: DaemonObserver, @unchecked Sendable {
    private let lock = NSLock()
    private var statusLines: [StatusLine] = []
    private var eventNames: [String] = []
    private var logLines: [(level: EventServer.LogLevel, text: String)] = []
    /// What the daemon logged.
    var logs: [(level: EventServer.LogLevel, text: String)] { lock.withLock { logLines } }
    func log(_ level: EventServer.LogLevel, _ text: String) { lock.withLock { logLines.append((level, text)) } }
    private(set) var ready = false
    var statuses: [String] { lock.withLock { statusLines.map(\.state.rawValue) } }
    var lines: [StatusLine] { lock.withLock { statusLines } }
    /// faceFound / faceLost occurrences (the photo also smiles).
    var events: [String] { lock.withLock { eventNames.filter { $0.hasPrefix("face") } } }
    func daemonIsReady(socketPath: String?) { lock.withLock { ready = true } }
    func daemonPublished(status: StatusLine) { lock.withLock { statusLines.append(status) } }
    func daemonPublished(event: ExpressionEvent) {
        if event.isOccurrence { lock.withLock { eventNames.append(event.event) } }
    }

    /// Waits until `condition` holds, up to `seconds`; whether it held.
    func wait(_ seconds: Double = Wait.generous, until condition: () -> Bool) -> Bool {
        let end = Date(timeIntervalSinceNow: seconds)
        while Date() < end {
            if condition() { return true }
            usleep(20_000)
        }
        return condition()
    }
}

enum DaemonHarness {
    static let predictor: ShapePredictor = try! ShapePredictor(path: Fixtures.model)
    /// The face photo as a grey picture.
    static let face: PixelBuffer = {
        let buffer = PixelBuffer()
        let source = try! StillImageSource(path: Fixtures.path("images/expressions/single_face.jpg"))
        _ = try! source.read(into: buffer)
        return buffer
    }()

    static func environment(_ camera: FakeV4L2Device) -> DaemonEnvironment {
        var e = DaemonEnvironment(
            openCamera: { path, settings, color in
                try V4L2Camera(path: path, settings: settings, wantsColor: color, syscalls: camera)
            },
            defaultCamera: { camera.path },
            cameraIsPresent: { _ in camera.isPresent },
            openOutput: { path, w, h in try V4L2Output(path: path, width: w, height: h) })
        e.backoffInitial = 0.2
        e.backoffMaximum = 0.4
        e.absentPollInterval = 0.2
        e.stallSeconds = 0.6
        e.readSlice = 0.1
        e.darkSeconds = 0.5
        e.corruptReportInterval = 0.2
        return e
    }

    /// Runs a daemon (always on, so no client is needed) on `camera` in the background.
    static func start(_ camera: FakeV4L2Device, _ recorder: Recorder, environment: DaemonEnvironment? = nil)
        throws -> (Daemon, DispatchSemaphore)
    {
        let dir = try Scratch.directory("winkd")
        var options = DaemonOptions(source: camera.path, socketPath: dir.appendingPathComponent("s.sock").path)
        options.alwaysOn = true
        let daemon = try Daemon(
            options: options, predictor: predictor,
            environment: environment ?? Self.environment(camera), observer: recorder
        ) { level, text in recorder.log(level, text) }
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = daemon.run()
            done.signal()
        }
        return (daemon, done)
    }

    static func stop(_ daemon: Daemon, _ done: DispatchSemaphore) -> Bool {
        daemon.requestStop()
        return done.wait(timeout: .now() + Wait.generous) == .success
    }
}

@Suite(.serialized)
struct DaemonFaultTests {
    @Test func busyCameraIsReportedAndRetriedWithBackoffUntilFree() throws {
        let camera = FakeV4L2Device(picture: DaemonHarness.face)
        camera.setOpenError(EBUSY)
        let recorder = Recorder()
        let (daemon, done) = try DaemonHarness.start(camera, recorder)
        #expect(recorder.wait { recorder.statuses.filter { $0 == "camera_busy" }.count >= 3 })
        let busy = try #require(recorder.lines.first { $0.state == .cameraBusy })
        #expect(busy.source == camera.path && busy.message?.contains("in use") == true)
        // The device is the line's source; its message no longer names it again ("/dev/video7: /dev/video7: ...").
        #expect(busy.message?.contains(camera.path) == false, "\(busy.message ?? "")")
        // Logged as a warning, so a log read at warning shows it (a helper's finding, for a failed virtual
        // camera logged at info); a camera that opens is news at info.
        let warned = recorder.logs.contains { $0.level == .warning && $0.text.hasPrefix("status camera_busy \(camera.path)") }
        #expect(warned)
        #expect(FramePublisher.logLevel(of: .overlayOutputFailed) == .warning)
        #expect(FramePublisher.logLevel(of: .sourceFailed) == .warning, "a camera that cannot be opened (helper-34)")
        #expect(FramePublisher.logLevel(of: .overlayOutputOpened) == .info)
        camera.setOpenError(nil)
        camera.script(Array(repeating: .frame(), count: 5))
        #expect(recorder.wait { recorder.statuses.contains("source_opened") })
        #expect(recorder.wait { recorder.events.contains("faceFound") })
        #expect(recorder.logs.contains { $0.level == .info && $0.text.hasPrefix("status source_opened") })
        #expect(DaemonHarness.stop(daemon, done))
        #expect(camera.released)
    }

    @Test func unpluggedCameraLosesTheFaceReleasesEverythingAndResumesWhenBack() throws {
        let camera = FakeV4L2Device(picture: DaemonHarness.face)
        camera.script(Array(repeating: .frame(), count: 4) + [.fail(ENODEV)])
        let recorder = Recorder()
        let (daemon, done) = try DaemonHarness.start(camera, recorder)
        #expect(recorder.wait { recorder.statuses.contains("camera_unplugged") })
        let unplugged = try #require(recorder.lines.first { $0.state == .cameraUnplugged })
        #expect(unplugged.source == camera.path && unplugged.message?.contains(camera.path) == false,
                "the device is named once: \(unplugged.message ?? "")")
        #expect(unplugged.message?.hasSuffix("waiting for it to come back") == true, "\(unplugged.message ?? "")")
        #expect(recorder.wait { recorder.events == ["faceFound", "faceLost"] }, "\(recorder.events)")
        #expect(recorder.wait { camera.released }, "descriptor and buffers released while unplugged")
        usleep(500_000)
        #expect(camera.openCount == 1, "no reopen while the camera is away")
        camera.script(Array(repeating: .frame(), count: 4))
        camera.setPresent(true)
        #expect(
            recorder.wait { camera.openCount == 2 && recorder.statuses.filter { $0 == "source_opened" }.count == 2 })
        #expect(recorder.wait { recorder.events == ["faceFound", "faceLost", "faceFound"] }, "\(recorder.events)")
        #expect(DaemonHarness.stop(daemon, done))
        #expect(camera.released)
    }

    @Test func aCameraThatStopsSendingIsReopened() throws {
        let camera = FakeV4L2Device(picture: DaemonHarness.face)
        camera.script([.frame(level: 128)])
        let recorder = Recorder()
        let (daemon, done) = try DaemonHarness.start(camera, recorder)
        #expect(recorder.wait { recorder.statuses.contains("camera_stalled") })
        #expect(recorder.wait { camera.openCount >= 2 })
        #expect(DaemonHarness.stop(daemon, done))
        #expect(camera.released)
    }

    @Test func corruptFramesAreDroppedAndCountedInAStatusLine() throws {
        let camera = FakeV4L2Device(picture: DaemonHarness.face)
        let corrupt = FakeV4L2Device.Step.frame(flags: [.timestampMonotonic, .error], level: 128)
        camera.script([.frame(level: 128), corrupt, corrupt, corrupt, .frame(level: 128)])
        let recorder = Recorder()
        let (daemon, done) = try DaemonHarness.start(camera, recorder)
        #expect(
            recorder.wait {
                recorder.lines.contains {
                    $0.state == .cameraCorruptFrames && $0.message?.hasPrefix("3 corrupt") == true
                }
            }, "\(recorder.lines)")
        #expect(DaemonHarness.stop(daemon, done))
    }

    @Test func aDarkPictureIsReportedOnceAndIsNotAFaceLost() throws {
        let camera = FakeV4L2Device(picture: DaemonHarness.face)
        camera.script(Array(repeating: .frame(), count: 4) + Array(repeating: .frame(level: 3), count: 30))
        let recorder = Recorder()
        let (daemon, done) = try DaemonHarness.start(camera, recorder)
        #expect(recorder.wait { recorder.statuses.contains("camera_dark") })
        usleep(300_000)
        #expect(recorder.events == ["faceFound"], "darkness is not 'no face'")
        #expect(recorder.statuses.filter { $0 == "camera_dark" }.count == 1)
        camera.script(Array(repeating: .frame(), count: 3))
        #expect(recorder.wait { recorder.statuses.contains("camera_light") })
        #expect(DaemonHarness.stop(daemon, done))
        #expect(recorder.events == ["faceFound", "faceLost"], "the stop ends the face once")
    }

    @Test func anAbsentCameraIsAwaitedWithTheSocketUp() throws {
        let camera = FakeV4L2Device(picture: DaemonHarness.face)
        camera.setPresent(false)
        let recorder = Recorder()
        let (daemon, done) = try DaemonHarness.start(camera, recorder)
        #expect(recorder.wait { recorder.ready && recorder.statuses.contains("camera_absent") })
        usleep(500_000)
        #expect(recorder.statuses.filter { $0 == "camera_absent" }.count == 1, "announced once, not every poll")
        let absent = try #require(recorder.lines.first { $0.state == .cameraAbsent })
        #expect(absent.source == camera.path && absent.message == "waiting for it to appear", "\(absent)")
        camera.script(Array(repeating: .frame(), count: 3))
        camera.setPresent(true)
        #expect(recorder.wait { recorder.events.contains("faceFound") })
        #expect(DaemonHarness.stop(daemon, done))
    }

    /// A source whose read blocks until released: the daemon must stop anyway.
    final class StuckSource: FrameSource, @unchecked Sendable {
        let name = "/dev/video9"
        let isLive = true
        let nominalFrameRate: Double? = 30
        let release = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        func read(into buffer: PixelBuffer) throws -> FrameInfo? {
            entered.signal()
            release.wait()
            return nil
        }
        func close() {}
    }

    @Test func stopEndsRunWithinTwoSecondsWhileTheCameraReadIsBlocked() throws {
        let camera = FakeV4L2Device(picture: DaemonHarness.face)
        let stuck = StuckSource()
        var environment = DaemonHarness.environment(camera)
        environment.openCamera = { _, _, _ in stuck }
        let recorder = Recorder()
        let (daemon, done) = try DaemonHarness.start(camera, recorder, environment: environment)
        #expect(stuck.entered.wait(timeout: .now() + Wait.generous) == .success)
        let start = Date()
        daemon.requestStop()
        #expect(done.wait(timeout: .now() + 2) == .success)
        #expect(Date().timeIntervalSince(start) < 2)
        #expect(!FileManager.default.fileExists(atPath: daemon.server.path!), "socket removed")
        stuck.release.signal()
    }
}
