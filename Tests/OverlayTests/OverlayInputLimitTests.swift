import Capture
import Foundation
import Glibc
import Overlay
import Testing
import TestSupport
import WinkCore

/// Overlay images and layouts that are not regular files or are too large, and writes that fail (issue 13,
/// faults 1 and 2), each with the input that showed the fault. Inputs are built in a temporary folder.
struct OverlayInputLimitTests {
    /// A FIFO as the image used to block the loader forever (it read the whole file with no check).
    @Test func aFIFOImageIsRefusedWithoutBlocking() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let fifo = folder.appendingPathComponent("fifo.png").path
        #expect(mkfifo(fifo, 0o644) == 0)
        let error = try #require(withDeadline { decodeError(fifo) }, "decoding a FIFO blocked")
        #expect(error?.exitCode == .noInput, "\(String(describing: error))")
        #expect(error?.description == "\(fifo): not a regular file (a FIFO)")
    }

    /// `/dev/zero` as the image used to abort (`std::bad_alloc`) or run into the OOM killer.
    @Test func aCharacterDeviceImageIsRefused() throws {
        let error = try #require(withDeadline { decodeError("/dev/zero") }, "decoding /dev/zero did not end")
        #expect(error?.exitCode == .noInput)
        #expect(error?.description == "/dev/zero: not a regular file (a character device)")
    }

    /// A 30000x30000 PNG (a few MB of deflate) used to allocate 3.6 GB before it failed; it is refused from
    /// its header, before any decoding.
    @Test func aPNGOverThePixelLimitsIsRefusedFromItsHeader() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let huge = folder.appendingPathComponent("huge.png")
        try BlackPNG.data(width: 30000, height: 30000).write(to: huge)
        let error = try #require(decodeError(huge.path))
        #expect(error.exitCode == .dataError)
        #expect(error.description == "\(huge.path): 30000x30000 pixels, over the limit of 16384 pixels a side "
            + "for an overlay image", "\(error.description)")
        // Each side within 16384 but 20 megapixels in all.
        let wide = folder.appendingPathComponent("wide.png")
        try BlackPNG.data(width: 5000, height: 4000).write(to: wide)
        let tooMany = try #require(decodeError(wide.path))
        #expect(tooMany.exitCode == .dataError)
        #expect(tooMany.description == "\(wide.path): 5000x4000 pixels, over the limit of 16777216 pixels "
            + "(4096x4096) for an overlay image", "\(tooMany.description)")
    }

    /// Exactly at the limits still decodes.
    @Test func aPNGAtThePixelLimitsDecodes() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        for (w, h) in [(16384, 1), (4096, 4096)] {
            let path = folder.appendingPathComponent("\(w)x\(h).png")
            try BlackPNG.data(width: w, height: h).write(to: path)
            let image = try OverlayImage.decode(path: path.path)
            #expect(image.width == w && image.height == h)
            #expect(image[w - 1, h - 1] == SIMD4(0, 0, 0, 255))
        }
    }

    /// A file over 64 MiB is refused by its size, without reading it (a sparse file here).
    @Test func aFileOverTheSizeLimitIsRefused() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let big = folder.appendingPathComponent("big.png")
        try BlackPNG.data(width: 4, height: 4).write(to: big)
        let handle = try FileHandle(forWritingTo: big)
        try handle.truncate(atOffset: (64 << 20) + 1)
        try handle.close()
        let error = try #require(decodeError(big.path))
        #expect(error.exitCode == .dataError)
        #expect(error.description == "\(big.path): the file is 67108865 bytes, over the limit of 64 MiB "
            + "for an overlay image", "\(error.description)")
    }

    /// The renderer names the layer whose image is refused.
    @Test func theRendererNamesTheLayer() throws {
        let layout = OverlayLayout(layers: [
            OverlayLayer(feature: .eyes, image: Paths.overlay("sunglasses_rgba8.png")),
            OverlayLayer(feature: .mouth, image: "/dev/zero"),
        ])
        let error = try #require(withDeadline { () -> OverlayError? in
            do { _ = try OverlayRenderer(layout: layout) } catch let e as OverlayError { return e } catch {}
            return nil
        } ?? nil)
        #expect(error.description == "/dev/zero: not a regular file (a character device) (image of layers[1])")
    }

    /// A layout file that is a FIFO or a device blocked or read forever, like the images.
    @Test func aLayoutThatIsNotARegularFileIsRefused() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let fifo = folder.appendingPathComponent("layout.json").path
        #expect(mkfifo(fifo, 0o644) == 0)
        for (path, kind) in [(fifo, "a FIFO"), ("/dev/zero", "a character device")] {
            let error = try #require(withDeadline { () -> OverlayError? in
                do { _ = try OverlayLayout.load(path: path) } catch let e as OverlayError { return e } catch {}
                return nil
            }, "loading \(path) did not end")
            #expect(error?.exitCode == .noInput && error?.description == "\(path): not a regular file (\(kind))",
                    "\(String(describing: error))")
        }
    }

    /// A still written to a full disk used to exit 69 like an output that cannot be created, with libpng's
    /// own "libpng error" line; it is a write error (74) naming the cause. The file already there stays (it
    /// was removed with the incomplete one: a newcomer's finding), and nothing is left beside it.
    @Test(.enabled(if: TinyDisk.available, "mounting a 200 KiB tmpfs was refused (not root?): skipped"))
    func aStillWrittenToAFullDiskIsAWriteErrorAndKeepsTheOldFile() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let disk = try TinyDisk(in: folder)
        defer { disk.unmount() }
        let frame = solidFrame(width: 64, height: 48, bgr: [10, 200, 30])
        let old = Data(repeating: 7, count: 1000)
        for name in ["full.png", "full.jpg"] {
            try old.write(to: URL(fileURLWithPath: disk.path + "/" + name))
        }
        disk.fill()
        for name in ["full.png", "full.jpg"] {
            let path = disk.path + "/" + name
            #expect {
                try writeImage(frame, to: path)
            } throws: { error in
                let e = error as? OverlayError
                return e?.exitCode == .ioError && e?.description == "\(path): writing failed: No space left on device"
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == old)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.path).sorted()
                    == ["filler", "full.jpg", "full.png"])
        // A device is not an output file (the command-line checks said so already; now writeImage too).
        let device = folder.appendingPathComponent("device.png").path
        try FileManager.default.createSymbolicLink(atPath: device, withDestinationPath: "/dev/full")
        #expect(throws: OverlayError(.output, subject: device, reason: "is a device, not a regular file")) {
            try writeImage(frame, to: device)
        }
    }

    /// A video written to a full file system (a 200 KiB tmpfs): OpenCV's VideoWriter took every frame and
    /// left a file without its moov atom, and the run succeeded. Reading it back now fails the run (74) and
    /// removes the incomplete file; the file already at the path stays.
    @Test(.enabled(if: TinyDisk.available, "mounting a 200 KiB tmpfs was refused (not root?): skipped"))
    func aVideoWrittenToAFullDiskIsAWriteError() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let disk = try TinyDisk(in: folder)
        defer { disk.unmount() }
        let old = Data(repeating: 7, count: 1000)
        for name in ["out.mp4", "out.avi"] {
            let output = disk.path + "/" + name
            try old.write(to: URL(fileURLWithPath: output))
            let input = Paths.video.appendingPathComponent("single_face.mp4").path
            #expect {
                try OverlayRun.run(
                    source: try openMediaFile(path: input), output: output,
                    renderer: try OverlayRenderer(layers: [], images: []), readBack: readBack
                ) { _ in [] }
            } throws: { error in
                let e = error as? OverlayError
                return e?.exitCode == .ioError && e?.subject == output
                    && e?.reason.hasPrefix("writing failed: No space left on device (") == true
                    && e?.reason.hasSuffix("); the incomplete file was removed") == true
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == old, "the file already there stays")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.path).sorted() == ["out.avi", "out.mp4"])
    }

    /// A written video that reads back short is a write error naming the count, whatever the cause.
    @Test func aVideoThatReadsBackShortIsAWriteError() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("short.avi").path
        let writer = try OverlayVideoWriter(path: path, width: 32, height: 24, framesPerSecond: 30)
        let frame = solidFrame(width: 32, height: 24, bgr: [0, 0, 255])
        for _ in 0..<5 { try writer.write(frame) }
        #expect {
            try writer.finish { _ in ShortSource(frames: 3) }
        } throws: { error in
            (error as? OverlayError)?.description
                == "\(path): writing failed: the file holds 3 of 5 frames; the incomplete file was removed"
        }
        #expect(!FileManager.default.fileExists(atPath: path))
        // The real file reads back whole.
        let whole = try OverlayVideoWriter(path: path, width: 32, height: 24, framesPerSecond: 30)
        for _ in 0..<5 { try whole.write(frame) }
        try whole.finish(readBack: readBack)
        #expect(FileManager.default.fileExists(atPath: path))
    }

    // MARK: Helpers

    func decodeError(_ path: String) -> OverlayError? {
        do {
            _ = try OverlayImage.decode(path: path)
            return nil
        } catch {
            return error as? OverlayError
        }
    }
}

/// A source of `frames` black frames.
final class ShortSource: FrameSource {
    let name = "short"
    let isLive = false
    let nominalFrameRate: Double? = 30
    var left: Int
    init(frames: Int) { left = frames }
    func read(into buffer: PixelBuffer) throws -> FrameInfo? {
        guard left > 0 else { return nil }
        left -= 1
        buffer.resize(width: 32, height: 24)
        return FrameInfo(index: 0, time: 0, monotonicNanoseconds: 0)
    }
    func close() {}
}

/// Runs `body` on its own thread and waits up to `seconds` for it: nil if it did not return by then (the
/// thread is left blocked). For calls that used to block forever.
func withDeadline<T>(_ seconds: Double = 60, _ body: @escaping @Sendable () -> T) -> T? {
    let box = DeadlineBox<T>()
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        box.value = body()
        done.signal()
    }
    return done.wait(timeout: .now() + seconds) == .success ? box.value : nil
}

/// The result of a `withDeadline` body, handed from its thread.
final class DeadlineBox<T>: @unchecked Sendable {
    var value: T?
}
