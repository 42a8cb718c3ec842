import Foundation
import Glibc
import Synchronization
import Testing
import TestSupport

/// `winkctl overlay` and winkd's overlay with bad images and a full disk (issue 13, faults 1 and 2), each
/// with the input that showed the fault, built in a temporary folder.
@Suite(.serialized)
struct OverlayRobustnessTests {
    static let still = Binaries.fixture("images/expressions/0-f1-su-ph.jpg")
    static let sunglasses = Binaries.fixture("overlays/sunglasses_rgba8.png")

    /// The issue's inputs in `dir`: a FIFO named like a PNG, and a valid 30000x30000 PNG (5.7 MB).
    func badImages(in dir: URL) throws -> (fifo: String, huge: URL) {
        let fifo = dir.appendingPathComponent("fifo.png").path
        #expect(mkfifo(fifo, 0o644) == 0)
        let huge = dir.appendingPathComponent("huge.png")
        try BlackPNG.data(width: 30000, height: 30000).write(to: huge)
        return (fifo, huge)
    }

    /// A FIFO, `/dev/zero` and a 30000x30000 PNG as a layer's image: `winkctl overlay` blocked forever, aborted
    /// with `std::bad_alloc` (or met the OOM killer), and allocated 3.6 GB (4.5 GB peak) before exiting 65.
    /// Now each is one line naming the image and the problem, exit 66 or 65, before anything is decoded.
    @Test func overlayRefusesImagesThatAreNotRegularFilesOrTooLarge() throws {
        let dir = try Binaries.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (fifo, huge) = try badImages(in: dir)
        let cases: [(String, Int32, String)] = [
            (fifo, 66, "not a regular file (a FIFO)"),
            ("/dev/zero", 66, "not a regular file (a character device)"),
            (huge.path, 65, "30000x30000 pixels, over the limit of 16384 pixels a side for an overlay image"),
        ]
        for (image, status, reason) in cases {
            let layout = try writeLayout(image: image, in: dir)
            let out = dir.appendingPathComponent("out.png").path
            let r = try #require(
                try Binaries.runWithDeadline("winkctl", ["overlay", "--layout", layout, Self.still, "-o", out]),
                "winkctl overlay with \(image) did not end")
            #expect(r.status == status, "\(image): \(r.stderr.prefix(400))")
            #expect(r.stderrLines == ["winkctl: \(image): \(reason) (image of layers[0])"], "\(r.stderr.prefix(400))")
        }
    }

    /// `winkctl overlay --layout L single_face.mp4 -o out.mp4` on a nearly full file system said "72 frame(s)
    /// ... drawn" and exited 0, leaving a file without its moov atom. Now it exits 74 with one line, and the
    /// incomplete file is removed. The full disk is a 200 KiB tmpfs (tests run as root here and in CI).
    @Test(.enabled(if: TinyDisk.available, Comment(rawValue: TinyDisk.unavailableReason)))
    func overlayVideoToAFullDiskIsAWriteError() throws {
        let dir = try Binaries.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let layout = try writeLayout(image: Self.sunglasses, in: dir)
        for name in ["out.mp4", "out.avi"] {
            let disk = try TinyDisk(in: dir)
            defer { disk.unmount() }
            let out = disk.path + "/" + name
            let r = try Binaries.run(
                "winkctl", ["overlay", "--layout", layout, Binaries.fixture("video/single_face.mp4"), "-o", out])
            #expect(r.status == 74, "\(name): \(r.stderr)")
            #expect(r.stderrLines.count == 1 && r.stderrLines.first?.hasPrefix(
                "winkctl: \(out): writing failed: No space left on device") == true, "\(r.stderr)")
            #expect(!r.stderr.contains("drawn") && r.stdout.isEmpty)
            #expect(!FileManager.default.fileExists(atPath: out), "the incomplete \(name) was left behind")
        }
    }

    /// A still written to a full file system (or, before outputs had to be regular files, /dev/full) exited 69
    /// ("cannot write the image file", the
    /// code for an output that cannot be created) after libpng's own "libpng error: Write Error" line.
    @Test(.enabled(if: TinyDisk.available, Comment(rawValue: TinyDisk.unavailableReason)))
    func overlayStillToAFullDiskIsAWriteError() throws {
        let dir = try Binaries.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let layout = try writeLayout(image: Self.sunglasses, in: dir)
        let disk = try TinyDisk(in: dir)
        defer { disk.unmount() }
        disk.fill()
        let symlink = dir.appendingPathComponent("full.png").path
        try FileManager.default.createSymbolicLink(atPath: symlink, withDestinationPath: "/dev/full")
        for out in [disk.path + "/out.png", disk.path + "/out.jpg"] {
            let r = try Binaries.run("winkctl", ["overlay", "--layout", layout, Self.still, "-o", out])
            #expect(r.status == 74, "\(out): \(r.stderr)")
            #expect(r.stderrLines == ["winkctl: \(out): writing failed: No space left on device"], "\(r.stderr)")
        }
        // A link to a device is not a file to replace (a newcomer's `calibrate -o /dev/full` replaced the
        // node): refused before any work, 73.
        let r = try Binaries.run("winkctl", ["overlay", "--layout", layout, Self.still, "-o", symlink])
        #expect(r.status == 73 && r.stderrLines == ["winkctl: \(symlink): is a device, not a regular file"],
                "\(r.stderr)")
    }

    /// winkd with an overlay layout, then SIGHUP with the layer's image a FIFO (the processing thread blocked
    /// forever: clients got `hello` and no more lines), `/dev/zero` (`std::bad_alloc` abort) or a 30000x30000
    /// PNG (3.6 GB allocated): each is `reload_failed` naming the image and the problem, the old layout stays
    /// and frames keep coming.
    @Test func aReloadWithABadOverlayImageFailsAndKeepsServing() throws {
        let dir = try Binaries.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (fifo, huge) = try badImages(in: dir)
        _ = try writeLayout(image: Self.sunglasses, in: dir)
        let config = dir.appendingPathComponent("winkd.json")
        let device = dir.appendingPathComponent("no-such-output").path  // the output fails; the layout still loads
        try Data(#"{"overlay": {"layout": "layout.json", "device": "\#(device)"}}"#.utf8).write(to: config)
        let socket = dir.appendingPathComponent("s.sock").path
        let daemon = Process()
        daemon.executableURL = Binaries.directory.appendingPathComponent("winkd")
        daemon.arguments = ["--source", Binaries.fixture("video/single_face.mp4"), "--socket", socket, "--loop",
                            "--config", config.path]
        daemon.standardError = FileHandle.nullDevice
        daemon.standardOutput = FileHandle.nullDevice
        try daemon.run()
        defer {
            if daemon.isRunning {
                kill(daemon.processIdentifier, SIGKILL)
                daemon.waitUntilExit()
            }
        }
        let client = try #require(Wait.value { RawClient(path: socket) })
        #expect(client.subscribeToEverything())
        let first = client.read(until: { $0.contains { $0.contains("\"coefficients\"") } })
        #expect(first.contains { $0.contains("\"coefficients\"") }, "\(first.suffix(3))")

        let cases = [
            ("/dev/zero", "not a regular file (a character device)"),
            (fifo, "not a regular file (a FIFO)"),
            (huge.path, "30000x30000 pixels, over the limit of 16384 pixels a side for an overlay image"),
        ]
        for (image, reason) in cases {
            _ = try writeLayout(image: image, in: dir)
            let reload = client.reload(daemon)
            let failure = try #require(reload.status, "\(image): \(reload.lines)")
            #expect(failure.contains("\"reload_failed\""), "\(failure)")
            #expect(failure.contains("overlay.layout: \(image): \(reason) (image of layers[0])"), "\(failure)")
            #expect(reload.framesAfter, "no frames after \(image)")
        }
        // The old layout is still in use: putting the good image back reloads.
        _ = try writeLayout(image: Self.sunglasses, in: dir)
        let good = client.reload(daemon)
        #expect(good.status?.contains("\"reload_ok\"") == true, "\(good.lines)")
        daemon.terminate()
        daemon.waitUntilExit()
        #expect(daemon.terminationStatus == 0)
    }

    // MARK: Helpers

    /// Writes `layout.json` in `dir` with one `eyes` layer showing `image`; returns its path.
    func writeLayout(image: String, in dir: URL) throws -> String {
        let layout = dir.appendingPathComponent("layout.json")
        try Data(#"{"layers": [{"feature": "eyes", "image": "\#(image)"}]}"#.utf8).write(to: layout)
        return layout.path
    }
}
