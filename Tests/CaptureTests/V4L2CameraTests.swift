import CaptureTestSupport
import Glibc
import Testing
import WinkCore

@testable import Capture

struct V4L2CameraTests {
    static let second: UInt64 = 1_000_000_000

    /// Two frames 1/30 s apart, starting 5 s after boot.
    static func twoFrames() -> [FakeV4L2Device.Step] {
        [
            .frame(sequence: 0, nanoseconds: 5 * second, fill: 10),
            .frame(sequence: 1, nanoseconds: 5 * second + 33_333_333, fill: 20),
        ]
    }

    /// Opens the fake and reads two frames, checking size, pixels and timestamps.
    func readTwoFrames(_ fake: FakeV4L2Device, expecting size: FrameSize) throws -> V4L2Camera {
        fake.script = Self.twoFrames()
        let camera = try V4L2Camera(path: "/dev/video0", syscalls: fake, clock: ManualClock(nanoseconds: 99))
        let buffer = PixelBuffer()
        let first = try #require(try camera.read(into: buffer))
        #expect(buffer.width == size.width && buffer.height == size.height)
        #expect(first == FrameInfo(index: 0, time: 0, monotonicNanoseconds: 5 * Self.second))
        #expect(buffer.gray[0] == 10 && buffer.gray[size.width + 3] == 14)
        #expect(
            buffer.gray[size.width * size.height - 1] == UInt8(truncatingIfNeeded: 10 + size.width + size.height - 2))
        let second = try #require(try camera.read(into: buffer))
        #expect(second.index == 1)
        #expect(abs(second.time - 0.033333333) < 1e-9)
        #expect(second.monotonicNanoseconds == 5 * Self.second + 33_333_333)
        #expect(buffer.gray[0] == 20)
        return camera
    }

    @Test func mjpegOnlyCameraIsConvertedToYUV420AtTheLargestSizeUpTo640x480() throws {
        let fake = FakeV4L2Device(formats: [
            FakeV4L2Device.offer(
                .mjpeg, "Motion-JPEG", compressed: true,
                [(1280, 720, [30]), (640, 480, [30, 15]), (320, 240, [30])])
        ])
        let camera = try readTwoFrames(fake, expecting: FrameSize(width: 640, height: 480))
        #expect(fake.requestedFormats == [V4L2ImageFormat(pixelFormat: .yuv420, width: 640, height: 480)])
        #expect(fake.requestedIntervals == [Fraction(1, 30)])
        #expect(camera.nominalFrameRate == 30)
        #expect(camera.format.pixelFormat == .yuv420)
        #expect(fake.mapCount == 4 && fake.streamOnCount == 1)
    }

    @Test func yuyvOnlyCameraPrefersASizeThatReaches30fps() throws {
        let fake = FakeV4L2Device(formats: [
            FakeV4L2Device.offer(.yuyv, "YUYV 4:2:2", [(640, 480, [15, 5]), (352, 288, [30]), (320, 240, [30])])
        ])
        _ = try readTwoFrames(fake, expecting: FrameSize(width: 352, height: 288))
        #expect(fake.requestedFormats.map(\.pixelFormat) == [.yuv420])
    }

    @Test func greyCameraIsReadInGreyWithoutConversion() throws {
        let fake = FakeV4L2Device(formats: [FakeV4L2Device.offer(.grey, "8-bit Greyscale", [(320, 240, [30])])])
        let camera = try readTwoFrames(fake, expecting: FrameSize(width: 320, height: 240))
        #expect(fake.requestedFormats.map(\.pixelFormat) == [.grey])
        #expect(
            camera.format
                == V4L2ImageFormat(
                    pixelFormat: .grey, width: 320, height: 240, bytesPerLine: 320,
                    sizeImage: 320 * 240))
    }

    static let vga = [FakeV4L2Device.offer(.yuyv, "YUYV 4:2:2", [(64, 48, [30])])]

    @Test func eagainPollsAgainThenDeliversTheFrame() throws {
        let fake = FakeV4L2Device(formats: Self.vga)
        fake.script = [.fail(EAGAIN), .frame(sequence: 0, nanoseconds: 7 * Self.second)]
        let camera = try V4L2Camera(path: "/dev/video0", syscalls: fake)
        let info = try #require(try camera.read(into: PixelBuffer()))
        #expect(info.index == 0 && info.monotonicNanoseconds == 7 * Self.second)
        #expect(fake.pollCount == 2 && fake.dequeueCount == 2)
    }

    @Test func eintrIsRetriedWithoutPollingAgain() throws {
        let fake = FakeV4L2Device(formats: Self.vga)
        fake.script = [.fail(EINTR), .fail(EINTR), .frame(sequence: 0, nanoseconds: 7 * Self.second)]
        let camera = try V4L2Camera(path: "/dev/video0", syscalls: fake)
        #expect(try camera.read(into: PixelBuffer()) != nil)
        #expect(fake.pollCount == 1 && fake.dequeueCount == 3)
    }

    @Test func vanishingCameraIsDisconnectedAndReleasesEverything() throws {
        let fake = FakeV4L2Device(path: "/dev/v4l/by-id/usb-Fake-video-index0", formats: Self.vga)
        fake.script = [.frame(sequence: 0, nanoseconds: Self.second), .fail(ENODEV)]
        let camera = try V4L2Camera(path: "/dev/v4l/by-id/usb-Fake-video-index0", syscalls: fake)
        let buffer = PixelBuffer()
        _ = try camera.read(into: buffer)
        let error = try #require(throws: CaptureError.self) { try camera.read(into: buffer) }
        #expect(error.code == .disconnected)
        #expect(error.exitCode == .unavailable)
        #expect(error.description.hasPrefix("/dev/v4l/by-id/usb-Fake-video-index0: camera disconnected"))
        #expect(fake.unmapCount == 4 && fake.mapCount == 4 && fake.closeCount == 1 && fake.released)
        // Later reads repeat the error; close stays idempotent.
        #expect(throws: error) { try camera.read(into: buffer) }
        camera.close()
        #expect(fake.closeCount == 1 && fake.unmapCount == 4)
    }

    @Test func busyCameraThrowsBusyWithExit69() throws {
        let fake = FakeV4L2Device(formats: Self.vga)
        fake.nodes["/dev/video0"]?.openError = EBUSY
        let error = try #require(throws: CaptureError.self) { try V4L2Camera(path: "/dev/video0", syscalls: fake) }
        #expect(error.code == .busy)
        #expect(error.exitCode.rawValue == 69)
        #expect(error.description == "/dev/video0: camera is in use by another program (open)")
    }

    @Test func openErrorsMapToCaptureCodes() throws {
        let fake = FakeV4L2Device(formats: Self.vga)
        let missing = try #require(throws: CaptureError.self) { try V4L2Camera(path: "/dev/video7", syscalls: fake) }
        #expect(missing.code == .missing && missing.description == "/dev/video7: no such device")
        fake.nodes["/dev/video0"]?.openError = EACCES
        let denied = try #require(throws: CaptureError.self) { try V4L2Camera(path: "/dev/video0", syscalls: fake) }
        #expect(denied.code == .unreadable && denied.exitCode == .noInput)
    }

    @Test func metadataNodeAndNoFormatsAreUnsupported() throws {
        let meta = FakeV4L2Device(nodes: [
            "/dev/video1": .init(
                capability: FakeV4L2Device.captureCapability(caps: [.metaCapture, .streaming]), formats: Self.vga)
        ])
        let error = try #require(throws: CaptureError.self) { try V4L2Camera(path: "/dev/video1", syscalls: meta) }
        #expect(error.code == .unsupported && meta.released)

        let empty = FakeV4L2Device(formats: [])
        let none = try #require(throws: CaptureError.self) { try V4L2Camera(path: "/dev/video0", syscalls: empty) }
        #expect(none.code == .unsupported && none.description == "/dev/video0: Fake Cam offers no capture format")
        #expect(empty.released)
    }

    @Test func formatLibV4L2CannotDeliverIsUnsupported() throws {
        let fake = FakeV4L2Device(formats: [FakeV4L2Device.offer(.init("S501"), "odd", [(64, 48, [30])])])
        fake.conversions = []
        let error = try #require(throws: CaptureError.self) { try V4L2Camera(path: "/dev/video0", syscalls: fake) }
        #expect(error.code == .unsupported)
        #expect(error.description == "/dev/video0: libv4l2 cannot deliver YU12 from S501 (got S501)")
        #expect(fake.released)
    }

    @Test func pollTimeoutThrowsTimeout() throws {
        let fake = FakeV4L2Device(formats: Self.vga)
        fake.pollScript = [false]
        let camera = try V4L2Camera(path: "/dev/video0", settings: .init(timeout: 2), syscalls: fake)
        let error = try #require(throws: CaptureError.self) { try camera.read(into: PixelBuffer()) }
        #expect(error.code == .timeout && error.exitCode == .unavailable)
        #expect(error.description == "/dev/video0: no frame within 2.0 s (Fake Cam)")
    }

    @Test func endlessEagainEndsInTimeoutAtTheDeadline() throws {
        let fake = FakeV4L2Device(formats: Self.vga)
        let clock = ManualClock(nanoseconds: Self.second)
        var timeouts: [Int32] = []
        fake.onPoll = { timeout in
            timeouts.append(timeout)
            clock.advance(seconds: 0.5)
        }
        let camera = try V4L2Camera(path: "/dev/video0", settings: .init(timeout: 2), syscalls: fake, clock: clock)
        let error = try #require(throws: CaptureError.self) { try camera.read(into: PixelBuffer()) }
        #expect(error.code == .timeout)
        #expect(timeouts == [2000, 1500, 1000, 500])
    }

    @Test func corruptBuffersAreDroppedAndCounted() throws {
        let fake = FakeV4L2Device(formats: Self.vga)
        fake.script = [
            .frame(sequence: 0, nanoseconds: Self.second, flags: [.timestampMonotonic, .error]),
            .frame(sequence: 1, nanoseconds: 2 * Self.second, bytesUsed: 0),
            .frame(sequence: 2, nanoseconds: 3 * Self.second, bytesUsed: 100),
            .frame(sequence: 5, nanoseconds: 4 * Self.second, fill: 1),
        ]
        let camera = try V4L2Camera(path: "/dev/video0", syscalls: fake)
        let buffer = PixelBuffer()
        let info = try #require(try camera.read(into: buffer))
        #expect(info.index == 3 && info.time == 0 && info.monotonicNanoseconds == 4 * Self.second)
        #expect(camera.corruptFramesDropped == 3)
        #expect(camera.droppedFrames == 2)
        #expect(camera.framesDequeued == 4)
        #expect(buffer.gray[0] == 1)
    }

    @Test func timestampWithoutMonotonicFlagComesFromTheClock() throws {
        let fake = FakeV4L2Device(formats: Self.vga)
        fake.script = [.frame(sequence: 0, nanoseconds: 123, flags: [])]
        let camera = try V4L2Camera(path: "/dev/video0", syscalls: fake, clock: ManualClock(nanoseconds: 42_000))
        #expect(try camera.read(into: PixelBuffer())?.monotonicNanoseconds == 42_000)
    }

    @Test func closeStopsStreamingUnmapsAndClosesOnce() throws {
        let fake = FakeV4L2Device(formats: Self.vga)
        let camera = try V4L2Camera(path: "/dev/video0", syscalls: fake)
        camera.close()
        camera.close()
        #expect(fake.streamOffCount == 1 && fake.unmapCount == 4 && fake.closeCount == 1 && fake.released)
        #expect(try camera.read(into: PixelBuffer()) == nil)
    }

    @Test func deinitReleasesTheDevice() throws {
        let fake = FakeV4L2Device(formats: Self.vga)
        do { _ = try V4L2Camera(path: "/dev/video0", syscalls: fake) }
        #expect(fake.released && fake.unmapCount == 4)
    }

    @Test func colourBufferSwitchesTheStreamToBGR24AndComputesLuma() throws {
        let fake = FakeV4L2Device(formats: Self.vga)
        fake.script = [.frame(sequence: 0, nanoseconds: Self.second, fill: 100)]
        let camera = try V4L2Camera(path: "/dev/video0", syscalls: fake)
        let buffer = PixelBuffer(wantsColor: true)
        _ = try #require(try camera.read(into: buffer))
        #expect(fake.requestedFormats.map(\.pixelFormat) == [.yuv420, .bgr24])
        #expect(fake.streamOffCount == 1 && fake.streamOnCount == 2 && fake.mapCount == 8 && fake.unmapCount == 4)
        #expect(buffer.bgr[0] == 100 && buffer.bgr[1] == 101 && buffer.bgr[2] == 102)
        // BT.601: (29 * 100 + 150 * 101 + 77 * 102 + 128) >> 8 = 101
        #expect(buffer.gray[0] == 101 && buffer.gray[64 * 48 - 1] == 101)
        camera.close()
        #expect(fake.released)
    }

    @Test func realLibV4L2ReportsMissingAndNonV4L2Files() throws {
        let missing = try #require(throws: CaptureError.self) { try V4L2Camera(path: "/dev/video-winkd-absent") }
        #expect(missing.code == .missing)
        let notV4L2 = try #require(throws: CaptureError.self) { try V4L2Camera(path: "/dev/null") }
        #expect(notV4L2.code == .unsupported && notV4L2.description == "/dev/null: not a V4L2 device")
    }
}

struct V4L2SizeSelectionTests {
    static let several = [
        FakeV4L2Device.offer(
            .mjpeg, "Motion-JPEG",
            [
                (1280, 720, [30]), (800, 600, [30]), (640, 480, [15]),
                (640, 360, [30]), (320, 240, [30]),
            ]),
        FakeV4L2Device.offer(.yuyv, "YUYV", [(640, 480, [10]), (424, 240, [30])]),
    ]

    @Test func largestAtOrBelow640x480ThatReaches30fps() {
        #expect(V4L2Camera.chooseSize(Self.several, settings: .init()) == FrameSize(width: 640, height: 360))
    }

    @Test func withoutAny30fpsSizeTheLargestWithinBoundsWins() {
        let settings = V4L2Camera.Settings(framesPerSecond: 60)
        #expect(V4L2Camera.chooseSize(Self.several, settings: settings) == FrameSize(width: 640, height: 480))
    }

    @Test func onlyLargeSizesGiveTheSmallest() {
        let big = [FakeV4L2Device.offer(.mjpeg, "Motion-JPEG", [(1920, 1080, [30]), (1280, 720, [30])])]
        #expect(V4L2Camera.chooseSize(big, settings: .init()) == FrameSize(width: 1280, height: 720))
    }

    @Test func explicitSizeIsTakenOrTheNearestOffered() {
        #expect(
            V4L2Camera.chooseSize(Self.several, settings: .init(width: 800, height: 600))
                == FrameSize(width: 800, height: 600))
        // |1280 - 1024| + |720 - 768| = 304 beats |800 - 1024| + |600 - 768| = 392.
        #expect(
            V4L2Camera.chooseSize(Self.several, settings: .init(width: 1024, height: 768))
                == FrameSize(width: 1280, height: 720))
        #expect(
            V4L2Camera.chooseSize(Self.several, settings: .init(width: 330, height: 250))
                == FrameSize(width: 320, height: 240))
    }

    @Test func stepwiseSizesOfferCommonSizesOnTheirGrid() {
        let stepwise = [
            V4L2FormatOffer(
                format: V4L2FormatEntry(pixelFormat: .yuyv, description: "YUYV"),
                sizes: [
                    V4L2FrameSizeOffer(
                        entry: .stepwise(
                            minimum: FrameSize(width: 160, height: 120), maximum: FrameSize(width: 1280, height: 720),
                            step: FrameSize(width: 8, height: 8)),
                        intervals: [.stepwise(minimum: Fraction(1, 30), maximum: Fraction(1, 5), step: Fraction(1, 1))])
                ])
        ]
        #expect(V4L2Camera.chooseSize(stepwise, settings: .init()) == FrameSize(width: 640, height: 480))
    }

    @Test func noEnumeratedSizesAsksForTheMaximum() {
        let bare = [V4L2FormatOffer(format: V4L2FormatEntry(pixelFormat: .yuyv, description: "YUYV"), sizes: [])]
        #expect(V4L2Camera.chooseSize(bare, settings: .init()) == FrameSize(width: 640, height: 480))
    }
}

struct PixelFormatTests {
    @Test func fourCCMatchesVideodev2() {
        // v4l2_fourcc('M','J','P','G') etc. from <linux/videodev2.h>.
        #expect(PixelFormat.mjpeg.rawValue == 0x4750_4A4D)
        #expect(PixelFormat.yuyv.rawValue == 0x5659_5559)
        #expect(PixelFormat.grey.rawValue == 0x5945_5247)
        #expect(PixelFormat.bgr24.rawValue == 0x3352_4742)
        #expect(PixelFormat(rawValue: 0x3231_5559) == .yuv420)
        #expect(PixelFormat.mjpeg.fourCC == "MJPG")
        #expect(PixelFormat(rawValue: 0x0000_4142).fourCC == "BA??")
    }

    @Test func bufferTimestampClock() {
        #expect(V4L2BufferFlags(rawValue: 0x2000).hasMonotonicTimestamp)
        #expect(!V4L2BufferFlags(rawValue: 0x4000).hasMonotonicTimestamp)
        #expect(!V4L2BufferFlags(rawValue: 0x6000).hasMonotonicTimestamp)
    }
}
