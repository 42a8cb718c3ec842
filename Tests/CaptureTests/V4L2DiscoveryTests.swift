import CaptureTestSupport
import Foundation
import Glibc
import Testing

@testable import Capture

/// Discovery over a scratch directory laid out like `/dev`: `video0` (a camera with a by-id link),
/// `video1` (its metadata node), `video2` (no permission), `video10` (a second camera without a by-id link).
final class FakeDevDirectory {
    let root: String
    let stableName: String

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("winkd-dev-\(UUID().uuidString)").path
        let byID = "\(root)/v4l/by-id"
        try FileManager.default.createDirectory(atPath: byID, withIntermediateDirectories: true)
        for node in ["video0", "video1", "video2", "video10", "vbi0"] {
            _ = FileManager.default.createFile(atPath: "\(root)/\(node)", contents: nil)
        }
        stableName = "\(byID)/usb-Fake_Cam_123-video-index0"
        try FileManager.default.createSymbolicLink(atPath: stableName, withDestinationPath: "../../video0")
        try FileManager.default.createSymbolicLink(
            atPath: "\(byID)/usb-Fake_Cam_123-video-index1",
            withDestinationPath: "../../video1")
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    static let camera = [
        FakeV4L2Device.offer(.mjpeg, "Motion-JPEG", compressed: true, [(1280, 720, [30, 15]), (640, 480, [30])]),
        V4L2FormatOffer(
            format: V4L2FormatEntry(pixelFormat: .yuyv, description: "YUYV 4:2:2"),
            sizes: [
                V4L2FrameSizeOffer(
                    entry: .discrete(FrameSize(width: 640, height: 480)),
                    intervals: [.discrete(Fraction(1, 30)), .discrete(Fraction(2, 15))])
            ]),
        V4L2FormatOffer(format: V4L2FormatEntry(pixelFormat: .bgr24, description: "BGR3", isEmulated: true), sizes: []),
        V4L2FormatOffer(
            format: V4L2FormatEntry(pixelFormat: .yuv420, description: "YU12", isEmulated: true), sizes: []),
    ]

    func fake() -> FakeV4L2Device {
        FakeV4L2Device(nodes: [
            "\(root)/video0": .init(capability: FakeV4L2Device.captureCapability(), formats: Self.camera),
            "\(root)/video1": .init(
                capability: FakeV4L2Device.captureCapability(caps: [.metaCapture, .streaming]),
                formats: []),
            "\(root)/video2": .init(
                capability: FakeV4L2Device.captureCapability(), formats: [], openError: EACCES,
                access: DeviceAccess(
                    user: .init(1000, "alice"), groups: [.init(1000, "alice")],
                    node: .init(
                        owner: .init(0, "root"), group: .init(44, "video"),
                        mode: UInt32(S_IFCHR) | 0o660),
                    underSystemd: false)),
            "\(root)/video10": .init(
                capability: FakeV4L2Device.captureCapability(card: "Second Cam"),
                formats: [FakeV4L2Device.offer(.grey, "Greyscale", [(320, 240, [60])])]),
        ])
    }
}

struct V4L2DiscoveryTests {
    @Test func listsCaptureNodesWithStableNamesSkippingMetadataNodes() throws {
        let dev = try FakeDevDirectory()
        let fake = dev.fake()
        let list = V4L2Discovery.captureDevices(devDirectory: dev.root, syscalls: fake)
        #expect(list.devices.map(\.path) == ["\(dev.root)/video0", "\(dev.root)/video10"])
        #expect(list.devices.map(\.stableName) == [dev.stableName, nil])
        #expect(list.devices[0].formats == FakeDevDirectory.camera)
        #expect(list.problems.map(\.code) == [.unreadable])
        #expect(fake.released)
    }

    @Test func listingText() throws {
        let dev = try FakeDevDirectory()
        let text = V4L2Discovery.listing(V4L2Discovery.captureDevices(devDirectory: dev.root, syscalls: dev.fake()))
        let expected = """
            \(dev.stableName) -> \(dev.root)/video0
              card: Fake Cam, driver: uvcvideo, bus: usb-0000:00:14.0-1
              MJPG  Motion-JPEG (compressed)
                1280x720: 30, 15 fps
                640x480: 30 fps
              YUYV  YUYV 4:2:2
                640x480: 30, 7.5 fps
              converted by libv4l2: BGR3, YU12

            \(dev.root)/video10
              card: Second Cam, driver: uvcvideo, bus: usb-0000:00:14.0-1
              GREY  Greyscale
                320x240: 60 fps
            \(dev.root)/video2: permission denied for uid 1000 (alice) with groups 1000 (alice); \
            the device is crw-rw---- root:video (uid 0, gid 44); \
            add alice to group 'video' (sudo usermod -aG video alice), then log in again

            """
        #expect(text == expected)
    }

    @Test func listingWithoutDevices() throws {
        #expect(V4L2Discovery.listing(V4L2DeviceList(devices: [])) == "no V4L2 capture devices found\n")
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("winkd-empty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: empty) }
        let list = V4L2Discovery.captureDevices(devDirectory: empty.path)  // real libv4l2: no nodes at all
        #expect(list.devices.isEmpty && list.problems.isEmpty)
    }

    @Test func stepwiseSizesAndRatesAreListedAsRanges() {
        let offer = V4L2FrameSizeOffer(
            entry: .stepwise(
                minimum: FrameSize(width: 160, height: 120), maximum: FrameSize(width: 1280, height: 720),
                step: FrameSize(width: 8, height: 8)),
            intervals: [.stepwise(minimum: Fraction(1, 30), maximum: Fraction(1, 5), step: Fraction(1, 1))])
        #expect(V4L2Discovery.describe(offer) == "160x120 to 1280x720 step 8x8: 5 to 30 fps")
        #expect(V4L2Discovery.rate(29.97) == "29.97" && V4L2Discovery.rate(30) == "30")
    }

    @Test func defaultDeviceIsTheFirstCameraByItsStableName() throws {
        let dev = try FakeDevDirectory()
        #expect(try V4L2Discovery.defaultDevice(devDirectory: dev.root, syscalls: dev.fake()) == dev.stableName)
    }

    @Test func noCameraIsNoDevice() throws {
        let dev = try FakeDevDirectory()
        let error = try #require(throws: CaptureError.self) {
            try V4L2Discovery.defaultDevice(devDirectory: dev.root, syscalls: FakeV4L2Device(nodes: [:]))
        }
        // The nodes exist on disk but the fake knows none: each open fails with ENOENT.
        #expect(error.code == .missing)
        let empty = try #require(throws: CaptureError.self) {
            try V4L2Discovery.defaultDevice(devDirectory: dev.root + "/v4l", syscalls: FakeV4L2Device(nodes: [:]))
        }
        #expect(empty.code == .noDevice && empty.exitCode == .unavailable)
        #expect(empty.description == "\(dev.root)/v4l/video*: no V4L2 capture device found (is a camera plugged in?)")
    }

    @Test func stableNameResolvesToTheCurrentNodeAndToNilWhenUnplugged() throws {
        let dev = try FakeDevDirectory()
        #expect(V4L2Discovery.currentPath(of: dev.stableName) == V4L2Discovery.canonicalPath("\(dev.root)/video0"))
        try FileManager.default.removeItem(atPath: "\(dev.root)/video0")
        #expect(V4L2Discovery.currentPath(of: dev.stableName) == nil)
    }
}
