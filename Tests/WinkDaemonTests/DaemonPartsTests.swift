import Capture
import Foundation
import Glibc
import TestSupport
import Testing
import WinkCore

@testable import WinkDaemon

/// `FrameExchange`, `V4L2Output` and the daemon's configuration keys.
struct DaemonPartsTests {
    static func info(_ i: Int) -> FrameInfo {
        FrameInfo(index: i, time: Double(i) / 30, monotonicNanoseconds: UInt64(i))
    }

    @Test func theNewestFrameWinsAndOlderWaitingFramesAreDroppedAndCounted() {
        let exchange = FrameExchange()
        for i in 0..<3 {
            let b = exchange.producerBuffer
            b.resize(width: 2, height: 1)
            b.gray[0] = UInt8(i)
            exchange.publish(Self.info(i))
        }
        let taken = exchange.take(timeout: 0)
        #expect(taken?.info.index == 2 && taken?.buffer.gray[0] == 2)
        #expect(exchange.droppedFrames == 2 && exchange.deliveredFrames == 1)
        #expect(exchange.take(timeout: 0.05) == nil, "nothing waits after a take")
    }

    @Test func threeBuffersRotateWithoutTheConsumersBufferBeingWritten() {
        let exchange = FrameExchange()
        exchange.producerBuffer.resize(width: 1, height: 1)
        exchange.producerBuffer.gray[0] = 7
        exchange.publish(Self.info(0))
        let held = exchange.take(timeout: 0)!.buffer
        for i in 1...5 {
            #expect(exchange.producerBuffer !== held)
            exchange.producerBuffer.resize(width: 1, height: 1)
            exchange.producerBuffer.gray[0] = UInt8(100 + i)
            exchange.publish(Self.info(i))
        }
        #expect(held.gray[0] == 7)
        #expect(exchange.take(timeout: 0)?.buffer.gray[0] == 105)
    }

    @Test func closeWakesAWaitingTakeAndAFrameFromAnotherThreadWakesItToo() {
        let exchange = FrameExchange()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) {
            exchange.producerBuffer.resize(width: 1, height: 1)
            exchange.publish(Self.info(4))
        }
        #expect(exchange.take(timeout: 5)?.info.index == 4)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) { exchange.close() }
        let start = Date()
        #expect(exchange.take(timeout: 5) == nil)
        #expect(Date().timeIntervalSince(start) < 2)
    }

    // MARK: V4L2Output

    final class FakeOutput: V4L2OutputSyscalls {
        var output = true
        var accepted: Set<PixelFormat> = [.yuyv, .bgr24]
        var formats: [V4L2ImageFormat] = []
        var written: [[UInt8]] = []
        var closed = 0
        var writeError: Int32?
        func open(_ path: String) throws(Errno) -> Int32 {
            guard path == "/dev/video10" else { throw Errno(code: ENOENT) }
            return 5
        }
        func close(_ fd: Int32) { closed += 1 }
        func queryCapability(_ fd: Int32) throws(Errno) -> V4L2Capability {
            V4L2Capability(
                driver: "v4l2 loopback", card: "Dummy", busInfo: "platform:v4l2loopback-000",
                capabilities: [.deviceCaps], deviceCapabilities: output ? [.videoOutput] : [.videoCapture])
        }
        func setOutputFormat(_ fd: Int32, _ format: V4L2ImageFormat) throws(Errno) -> V4L2ImageFormat {
            formats.append(format)
            guard accepted.contains(format.pixelFormat) else { throw Errno(code: EINVAL) }
            return format
        }
        func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
            if let writeError { throw Errno(code: writeError) }
            written.append(Array(bytes))
            return bytes.count
        }
    }

    static func colourBuffer(b: UInt8, g: UInt8, r: UInt8) -> PixelBuffer {
        let buffer = PixelBuffer(wantsColor: true)
        buffer.resize(width: 4, height: 2)
        for i in 0..<8 {
            buffer.bgr[3 * i] = b
            buffer.bgr[3 * i + 1] = g
            buffer.bgr[3 * i + 2] = r
        }
        return buffer
    }

    @Test func outputWritesYUYVConvertedWithBT601() throws {
        let fake = FakeOutput()
        let output = try V4L2Output(path: "/dev/video10", width: 4, height: 2, syscalls: fake)
        #expect(fake.formats.map(\.pixelFormat) == [.yuyv])
        try output.write(Self.colourBuffer(b: 255, g: 255, r: 255))
        try output.write(Self.colourBuffer(b: 0, g: 0, r: 0))
        try output.write(Self.colourBuffer(b: 0, g: 0, r: 255))
        #expect(fake.written.count == 3 && fake.written.allSatisfy { $0.count == 4 * 2 * 2 })
        #expect(Array(fake.written[0].prefix(4)) == [235, 128, 235, 128])  // white: Y 235, neutral chroma
        #expect(Array(fake.written[1].prefix(4)) == [16, 128, 16, 128])  // black: Y 16
        #expect(Array(fake.written[2].prefix(4)) == [82, 90, 82, 240])  // red: Y 82, Cb 90, Cr 240 (BT.601)
        #expect(output.framesWritten == 3)
        output.close()
        #expect(fake.closed == 1)
    }

    @Test func outputFallsBackToBGR24AndRefusesACaptureNode() throws {
        let fake = FakeOutput()
        fake.accepted = [.bgr24]
        let output = try V4L2Output(path: "/dev/video10", width: 4, height: 2, syscalls: fake)
        #expect(output.format.pixelFormat == .bgr24)
        try output.write(Self.colourBuffer(b: 1, g: 2, r: 3))
        #expect(Array(fake.written[0].prefix(6)) == [1, 2, 3, 1, 2, 3])

        let capture = FakeOutput()
        capture.output = false
        #expect(throws: CaptureError.self) {
            try V4L2Output(path: "/dev/video10", width: 4, height: 2, syscalls: capture)
        }
        #expect(capture.closed == 1)
        let none = FakeOutput()
        none.accepted = []
        do {
            _ = try V4L2Output(path: "/dev/video10", width: 4, height: 2, syscalls: none)
            Issue.record("no format accepted")
        } catch let error as CaptureError {
            #expect(error.code == .unsupported && error.description.contains("YUYV"))
        }
        #expect(throws: CaptureError(.missing, subject: "/dev/video11", reason: "no such device")) {
            try V4L2Output(path: "/dev/video11", width: 4, height: 2, syscalls: FakeOutput())
        }
    }

    @Test func aFrameOfAnotherSizeOrWithoutColourIsRefusedAndAGoneDeviceIsDisconnected() throws {
        let fake = FakeOutput()
        let output = try V4L2Output(path: "/dev/video10", width: 4, height: 2, syscalls: fake)
        let grey = PixelBuffer()
        grey.resize(width: 4, height: 2)
        #expect(throws: CaptureError.self) { try output.write(grey) }
        fake.writeError = EAGAIN
        try output.write(Self.colourBuffer(b: 0, g: 0, r: 0))
        #expect(output.framesSkipped == 1)
        fake.writeError = ENODEV
        do {
            try output.write(Self.colourBuffer(b: 0, g: 0, r: 0))
            Issue.record("ENODEV must throw")
        } catch let error as CaptureError {
            #expect(error.code == .disconnected)
        }
    }

    // MARK: Configuration keys

    @Test func cameraSocketAndOverlayKeysAreReadAndCheckedOneLineEach() throws {
        let c = try Configuration.parse(
            Data(
                #"""
                {"camera": {"width": 320, "height": 240, "fps": 15}, "socket": {"mode": "0660", "maximumClients": 8},
                 "overlay": {"layout": "/tmp/l.json", "device": "/dev/video10"}}
                """#.utf8))
        #expect(c.camera.width == 320 && c.camera.height == 240 && c.camera.framesPerSecond == 15)
        #expect(c.socketMode == 0o660 && c.maximumClients == 8)
        #expect(c.overlayLayoutPath == "/tmp/l.json" && c.overlayDevice == "/dev/video10" && c.overlayOutputConfigured)
        #expect(!Configuration().overlayOutputConfigured && Configuration().socketMode == 0o600)
        do {
            _ = try Configuration.parse(
                Data(
                    #"""
                    {"camera": {"width": 320, "fps": true, "rate": 1},
                     "socket": {"mode": "rw", "maximumClients": 0, "x": 1},
                     "overlay": {"device": 5}}
                    """#.utf8), path: "c.json")
            Issue.record("must be invalid")
        } catch let error as Configuration.Invalid {
            #expect(error.exitCode == .configuration)
            let lines = error.description.split(separator: "\n").map(String.init)
            #expect(
                lines == [
                    "c.json: camera.rate: unknown key (known: fps, height, width)",
                    "c.json: camera: give both width and height, or neither",
                    "c.json: camera.fps: expected a number of frames per second above 0 and at most 1000",
                    "c.json: socket.x: unknown key (known: maximumClients, mode)",
                    "c.json: socket.mode: expected an octal permission string such as \"0660\"",
                    "c.json: socket.maximumClients: expected a whole number from 1 to 4096",
                    "c.json: overlay.layout: required",
                    "c.json: overlay.device: expected a path",
                ], "\(lines)")
        }
        // A newcomer's finding: "0000" was taken, a socket even winkd's own user could not connect to, and
        // `winkctl config` printed it "00".
        for mode in ["0000", "0400", "0066"] {
            do {
                _ = try Configuration.parse(Data(#"{"socket": {"mode": "\#(mode)"}}"#.utf8), path: "c.json")
                Issue.record("\(mode) taken")
            } catch let error as Configuration.Invalid {
                #expect(error.problems == [
                    "socket.mode: \"\(mode)\" leaves the owner without read and write, so nobody of winkd's user "
                        + "could connect (\"0600\" is the owner alone, \"0660\" the socket's group too)",
                ], "\(error.problems)")
            }
        }
        #expect(ConfigurationReport.octal(0o600) == "0600" && ConfigurationReport.octal(0) == "0000")
        let notObject = #expect(throws: Configuration.Invalid.self) {
            try Configuration.parse(Data(#"{"socket": 3}"#.utf8), path: "c.json")
        }
        #expect(notObject?.description == "c.json: socket: expected an object")
    }

    @Test func aRelativeLayoutIsResolvedAgainstTheConfigurationFolder() throws {
        let dir = try Scratch.directory("winkd-c")
        let file = dir.appendingPathComponent("winkd.json")
        try Data(#"{"overlay": {"layout": "glasses.json", "device": "/dev/video10"}}"#.utf8).write(to: file)
        let c = try Configuration.load(path: file.path)
        #expect(c.overlayLayoutPath == dir.appendingPathComponent("glasses.json").path)
    }

    @Test func framesAreClassifiedDarkBlankOrUsableFromTheGreyPlane() {
        let b = PixelBuffer()
        b.resize(width: 16, height: 16)
        b.gray.update(repeating: 40, count: 256)
        #expect(FrameUsability.statistics(b).mean == 40 && FrameUsability.statistics(b).deviation == 0)
        #expect(FrameUsability(b) == .blank, "one flat grey")
        b.gray.update(repeating: 0, count: 256)
        #expect(FrameUsability(b) == .dark)
        for i in 0..<256 { b.gray[i] = UInt8((i % 16) * 12) }  // a ramp: a picture
        #expect(FrameUsability(b) == .usable)
        for i in 0..<256 { b.gray[i] = UInt8(120 + (i * 7919) % 3) }  // flat with sensor noise
        #expect(FrameUsability(b) == .blank)
    }
}
