import Foundation
import TestSupport
import Testing

/// Issue 15's exit codes: outputs that cannot be created are 73 and say why, before any work; a full disk
/// is 74; a path that is not a socket says so.
@Suite struct ExitCodeTests {
    @Test func aPlotInAMissingDirectoryIs73BeforeTheVideoIsRead() throws {
        let started = Date()
        let r = try Binaries.run(
            "winkctl",
            [
                "analyze", Binaries.fixture("video/single_face_wink_left.mp4"),
                "--plot", "/nonexistent/plots/p.png",
            ])
        #expect(r.status == 73)
        #expect(r.stderrLines == ["winkctl: /nonexistent/plots/p.png: no such directory /nonexistent/plots"])
        #expect(r.stdout.isEmpty, "no frame was processed: \(r.stdout.prefix(200))")
        _ = started
    }

    @Test func overlayAndCalibrateOutputsInAMissingDirectoryAre73() throws {
        let layout = try Binaries.temporaryDirectory().appendingPathComponent("layout.json")
        try Data(#"{"layers": []}"#.utf8).write(to: layout)
        let overlay = try Binaries.run(
            "winkctl",
            [
                "overlay", "--layout", layout.path,
                Binaries.fixture("images/expressions/single_face.jpg"),
                "-o", "/nonexistent/out.png",
            ])
        #expect(
            overlay.status == 73
                && overlay.stderrLines == ["winkctl: /nonexistent/out.png: no such directory /nonexistent"],
            "\(overlay.stderr)")
        let calibrate = try Binaries.run(
            "winkctl",
            [
                "calibrate", "--source", Binaries.fixture("video/single_face.mp4"),
                "-o", "/nonexistent/profile.json",
            ])
        #expect(
            calibrate.status == 73
                && calibrate.stderrLines == ["winkctl: /nonexistent/profile.json: no such directory /nonexistent"],
            "\(calibrate.stderr)")
    }

    /// A path that is not a camera (/dev/null) given as one: libv4l2 printed two lines of its own ("libv4l2:
    /// error getting capabilities: Inappropriate ioctl for device") before winkctl's (a newcomer's finding).
    /// One line now, asked with a plain VIDIOC_QUERYCAP before libv4l2 opens it.
    @Test func aPathThatIsNotACameraIsOneLine() throws {
        let dir = try Binaries.temporaryDirectory()
        let r = try Binaries.run(
            "winkctl", ["calibrate", "--source", "/dev/null", "-o", dir.appendingPathComponent("p.json").path])
        #expect(r.status == 69)
        #expect(r.stderrLines == ["winkctl: /dev/null: not a V4L2 device"], "\(r.stderr)")
    }

    /// A newcomer's finding: calibrate took `--profile` (listed in its help) and `--seconds-per-step` beside
    /// `--segments` and ignored both without a word, a profile that did not exist included.
    @Test func calibrateRefusesOptionsItWouldIgnore() throws {
        let dir = try Binaries.temporaryDirectory()
        let base = ["calibrate", "--source", Binaries.fixture("video/single_face.mp4"), "-o",
                    dir.appendingPathComponent("p.json").path, "--segments", "neutral=0-0.6"]
        let profile = try Binaries.run("winkctl", base + ["--profile", "/nonexistent.json"])
        #expect(profile.status == 64 && profile.stderrLines.first == "winkctl: unknown option '--profile'",
                "\(profile.stderr)")
        let seconds = try Binaries.run("winkctl", base + ["--seconds-per-step", "5"])
        #expect(seconds.status == 64, "\(seconds.stderr)")
        #expect(seconds.stderrLines == [
            "winkctl: calibrate: give --seconds-per-step or --segments, not both (--segments says the seconds)"])
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("p.json").path))
        let help = try Binaries.run("winkctl", ["help", "calibrate"])
        #expect(help.status == 0 && !help.stdout.contains("--profile"), "\(help.stdout)")
    }

    @Test(.enabled(if: TinyDisk.available, Comment(rawValue: TinyDisk.unavailableReason)))
    func aPlotOnAFullDiskIs74() throws {
        let folder = try Binaries.temporaryDirectory()
        let disk = try TinyDisk(in: folder)
        defer { disk.unmount() }
        disk.fill()
        let r = try Binaries.run(
            "winkctl",
            [
                "analyze", Binaries.fixture("images/expressions/single_face.jpg"),
                "--plot", disk.path + "/p.png",
            ])
        #expect(r.status == 74, "\(r.stderr)")
        #expect(r.stderr.contains("No space left on device") || r.stderr.contains("no space left"), "\(r.stderr)")
    }

    @Test func aPathThatIsNotASocketSaysSo() throws {
        let folder = try Binaries.temporaryDirectory()
        let file = folder.appendingPathComponent("events.sock").path
        try #require(FileManager.default.createFile(atPath: file, contents: Data()))
        let r = try Binaries.run("winkctl", ["events", "--socket", file])
        #expect(
            r.status == 69
                && r.stderrLines == ["winkctl: \(file): not a socket (a regular file); give winkd's socket path"])
        let directory = try Binaries.run("winkctl", ["events", "--socket", folder.path])
        #expect(
            directory.stderrLines == ["winkctl: \(folder.path): not a socket (a directory); give winkd's socket path"])
    }
}
