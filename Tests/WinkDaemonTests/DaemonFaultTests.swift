import Capture
import EventServer
import FaceTracking
import Foundation
import Glibc
import Testing
import TestSupport
import WinkCore
@testable import WinkDaemon

/// A scripted grey camera behind `V4L2Syscalls`, safe to script from the test thread while the daemon's
/// capture thread reads it. Frames are a fixed grey picture (a face photo, or a flat level).
final class ScriptedCamera: V4L2Syscalls, @unchecked Sendable {
    enum Step {
        /// A frame of `picture` (or flat `level` when given), `V4L2_BUF_FLAG_ERROR` when `corrupt`.
        case frame(level: UInt8? = nil, corrupt: Bool = false)
        /// DQBUF fails with this errno.
        case fail(Int32)
    }

    let path: String
    let width: Int, height: Int
    private let picture: [UInt8]
    private let lock = NSLock()
    private var steps: [Step] = []
    private var present = true
    private var openError: Int32?
    private var openFDs: Set<Int32> = []
    private var mapped = 0
    private var nextFD: Int32 = 100
    private var memory: [UnsafeMutablePointer<UInt8>] = []
    private var queued: [Int] = []
    private var sequence: UInt32 = 0
    private(set) var opens = 0

    init(path: String = "/dev/video7", picture: PixelBuffer) {
        self.path = path
        width = picture.width
        height = picture.height
        self.picture = Array(UnsafeBufferPointer(start: picture.gray, count: width * height))
    }

    deinit { for m in memory { m.deallocate() } }

    func script(_ s: [Step]) { lock.withLock { steps += s } }
    func setPresent(_ p: Bool) { lock.withLock { present = p } }
    func setOpenError(_ e: Int32?) { lock.withLock { openError = e } }
    /// No descriptor open and nothing mapped.
    var released: Bool { lock.withLock { openFDs.isEmpty && mapped == 0 } }
    var isPresent: Bool { lock.withLock { present } }
    var openCount: Int { lock.withLock { opens } }

    func open(_ p: String) throws(Errno) -> Int32 {
        lock.lock()
        defer { lock.unlock() }
        guard p == path, present else { throw Errno(code: ENOENT) }
        if let e = openError { throw Errno(code: e) }
        opens += 1
        nextFD += 1
        openFDs.insert(nextFD)
        return nextFD
    }

    func close(_ fd: Int32) { lock.withLock { _ = openFDs.remove(fd) } }

    private func check(_ fd: Int32) throws(Errno) {
        let ok = lock.withLock { openFDs.contains(fd) && present }
        if !ok { throw Errno(code: ENODEV) }
    }

    func queryCapability(_ fd: Int32) throws(Errno) -> V4L2Capability {
        try check(fd)
        return V4L2Capability(driver: "uvcvideo", card: "Scripted Cam", busInfo: "usb-1",
                              capabilities: [.videoCapture, .streaming, .deviceCaps],
                              deviceCapabilities: [.videoCapture, .streaming])
    }

    func enumerateFormat(_ fd: Int32, index: Int) throws(Errno) -> V4L2FormatEntry? {
        try check(fd)
        return index == 0 ? V4L2FormatEntry(pixelFormat: .grey, description: "8-bit Greyscale") : nil
    }

    func enumerateFrameSize(_ fd: Int32, pixelFormat: PixelFormat, index: Int) throws(Errno) -> V4L2FrameSizeEntry? {
        try check(fd)
        return index == 0 ? .discrete(FrameSize(width: width, height: height)) : nil
    }

    func enumerateFrameInterval(_ fd: Int32, pixelFormat: PixelFormat, size: FrameSize, index: Int)
        throws(Errno) -> V4L2FrameIntervalEntry?
    {
        try check(fd)
        return index == 0 ? .discrete(Fraction(1, 30)) : nil
    }

    func setFormat(_ fd: Int32, _ format: V4L2ImageFormat) throws(Errno) -> V4L2ImageFormat {
        try check(fd)
        return V4L2ImageFormat(pixelFormat: .grey, width: width, height: height, bytesPerLine: width,
                               sizeImage: width * height)
    }

    func setFrameInterval(_ fd: Int32, _ interval: Fraction) throws(Errno) -> Fraction { interval }

    func requestBuffers(_ fd: Int32, count: Int) throws(Errno) -> Int {
        try check(fd)
        lock.withLock {
            for m in memory { m.deallocate() }
            memory = (0..<count).map { _ in .allocate(capacity: width * height) }
            queued = []
        }
        return count
    }

    func queryBuffer(_ fd: Int32, index: Int) throws(Errno) -> V4L2BufferLocation {
        try check(fd)
        return V4L2BufferLocation(offset: index * width * height, length: width * height)
    }

    func queueBuffer(_ fd: Int32, index: Int) throws(Errno) {
        try check(fd)
        lock.withLock { queued.append(index) }
    }

    func dequeueBuffer(_ fd: Int32) throws(Errno) -> V4L2DequeuedBuffer {
        try check(fd)
        lock.lock()
        defer { lock.unlock() }
        guard !steps.isEmpty, !queued.isEmpty else { throw Errno(code: EAGAIN) }
        switch steps.removeFirst() {
        case .fail(let e):
            if e == ENODEV { present = false }
            throw Errno(code: e)
        case .frame(let level, let corrupt):
            let index = queued.removeFirst()
            if let level {
                memory[index].update(repeating: level, count: width * height)
            } else {
                picture.withUnsafeBufferPointer { memory[index].update(from: $0.baseAddress!, count: width * height) }
            }
            sequence += 1
            var ts = timespec()
            clock_gettime(CLOCK_MONOTONIC, &ts)
            let ns = UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
            return V4L2DequeuedBuffer(index: index, bytesUsed: width * height,
                                      flags: corrupt ? [.timestampMonotonic, .error] : .timestampMonotonic,
                                      sequence: sequence, timestampNanoseconds: ns)
        }
    }

    func streamOn(_ fd: Int32) throws(Errno) { try check(fd) }
    func streamOff(_ fd: Int32) throws(Errno) {
        try check(fd)
        lock.withLock { queued = [] }
    }

    func mapBuffer(_ fd: Int32, length: Int, offset: Int) throws(Errno) -> UnsafeMutableRawPointer {
        try check(fd)
        return lock.withLock {
            mapped += 1
            return UnsafeMutableRawPointer(memory[offset / (width * height)])
        }
    }

    func unmapBuffer(_ address: UnsafeMutableRawPointer, length: Int) { lock.withLock { mapped -= 1 } }

    /// Ready when a step waits (frames come ~30 a second), else sleeps out a short timeout like a real poll.
    func poll(_ fd: Int32, timeoutMilliseconds: Int32) throws(Errno) -> Bool {
        let ready = lock.withLock { !steps.isEmpty }
        if ready {
            usleep(33_000)
            return true
        }
        usleep(UInt32(min(timeoutMilliseconds, 50)) * 1000)
        return false
    }
}

/// Collects what the daemon publishes.
final class Recorder: DaemonObserver, @unchecked Sendable {
    private let lock = NSLock()
    private var statusLines: [StatusLine] = []
    private var eventNames: [String] = []
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

    static func environment(_ camera: ScriptedCamera) -> DaemonEnvironment {
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
    static func start(_ camera: ScriptedCamera, _ recorder: Recorder, environment: DaemonEnvironment? = nil)
        throws -> (Daemon, DispatchSemaphore)
    {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("winkd-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        var options = DaemonOptions(source: camera.path, socketPath: dir.appendingPathComponent("s.sock").path)
        options.alwaysOn = true
        let daemon = try Daemon(options: options, predictor: predictor,
                                environment: environment ?? Self.environment(camera), observer: recorder) { _, _ in }
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
        let camera = ScriptedCamera(picture: DaemonHarness.face)
        camera.setOpenError(EBUSY)
        let recorder = Recorder()
        let (daemon, done) = try DaemonHarness.start(camera, recorder)
        #expect(recorder.wait { recorder.statuses.filter { $0 == "camera_busy" }.count >= 3 })
        let busy = try #require(recorder.lines.first { $0.state == .cameraBusy })
        #expect(busy.source == camera.path && busy.message?.contains("in use") == true)
        camera.setOpenError(nil)
        camera.script(Array(repeating: .frame(), count: 5))
        #expect(recorder.wait { recorder.statuses.contains("source_opened") })
        #expect(recorder.wait { recorder.events.contains("faceFound") })
        #expect(DaemonHarness.stop(daemon, done))
        #expect(camera.released)
    }

    @Test func unpluggedCameraLosesTheFaceReleasesEverythingAndResumesWhenBack() throws {
        let camera = ScriptedCamera(picture: DaemonHarness.face)
        camera.script(Array(repeating: .frame(), count: 4) + [.fail(ENODEV)])
        let recorder = Recorder()
        let (daemon, done) = try DaemonHarness.start(camera, recorder)
        #expect(recorder.wait { recorder.statuses.contains("camera_unplugged") })
        #expect(recorder.wait { recorder.events == ["faceFound", "faceLost"] }, "\(recorder.events)")
        #expect(recorder.wait { camera.released }, "descriptor and buffers released while unplugged")
        usleep(500_000)
        #expect(camera.openCount == 1, "no reopen while the camera is away")
        camera.script(Array(repeating: .frame(), count: 4))
        camera.setPresent(true)
        #expect(recorder.wait { camera.openCount == 2 && recorder.statuses.filter { $0 == "source_opened" }.count == 2 })
        #expect(recorder.wait { recorder.events == ["faceFound", "faceLost", "faceFound"] }, "\(recorder.events)")
        #expect(DaemonHarness.stop(daemon, done))
        #expect(camera.released)
    }

    @Test func aCameraThatStopsSendingIsReopened() throws {
        let camera = ScriptedCamera(picture: DaemonHarness.face)
        camera.script([.frame(level: 128)])
        let recorder = Recorder()
        let (daemon, done) = try DaemonHarness.start(camera, recorder)
        #expect(recorder.wait { recorder.statuses.contains("camera_stalled") })
        #expect(recorder.wait { camera.openCount >= 2 })
        #expect(DaemonHarness.stop(daemon, done))
        #expect(camera.released)
    }

    @Test func corruptFramesAreDroppedAndCountedInAStatusLine() throws {
        let camera = ScriptedCamera(picture: DaemonHarness.face)
        camera.script([.frame(level: 128), .frame(level: 128, corrupt: true), .frame(level: 128, corrupt: true),
                       .frame(level: 128, corrupt: true), .frame(level: 128)])
        let recorder = Recorder()
        let (daemon, done) = try DaemonHarness.start(camera, recorder)
        #expect(recorder.wait {
            recorder.lines.contains { $0.state == .cameraCorruptFrames && $0.message?.hasPrefix("3 corrupt") == true }
        }, "\(recorder.lines)")
        #expect(DaemonHarness.stop(daemon, done))
    }

    @Test func aDarkPictureIsReportedOnceAndIsNotAFaceLost() throws {
        let camera = ScriptedCamera(picture: DaemonHarness.face)
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
        let camera = ScriptedCamera(picture: DaemonHarness.face)
        camera.setPresent(false)
        let recorder = Recorder()
        let (daemon, done) = try DaemonHarness.start(camera, recorder)
        #expect(recorder.wait { recorder.ready && recorder.statuses.contains("camera_absent") })
        usleep(500_000)
        #expect(recorder.statuses.filter { $0 == "camera_absent" }.count == 1, "announced once, not every poll")
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
        let camera = ScriptedCamera(picture: DaemonHarness.face)
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
