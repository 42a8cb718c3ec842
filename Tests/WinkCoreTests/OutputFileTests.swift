import Foundation
import Testing
import WinkCore

/// Output paths are checked before any work, and failures say which of 73 or 74 they are in words.
@Suite struct OutputFileTests {
    func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("outputfile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func aFileInAnExistingDirectoryCanBeCreated() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try OutputFile.checkCreatable(dir.appendingPathComponent("plot.png").path)
        let old = dir.appendingPathComponent("old.png").path
        try #require(FileManager.default.createFile(atPath: old, contents: Data([1])))
        try OutputFile.checkCreatable(old)  // replaced: fine
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("plot.png").path))
    }

    @Test func eachReasonIsSaidAndIs73() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("file").path
        try #require(FileManager.default.createFile(atPath: file, contents: Data()))
        let cases: [(String, String)] = [
            ("/nonexistent/dir/p.png", "no such directory /nonexistent/dir"),
            (file + "/p.png", "\(file) is not a directory"),
            (dir.path, "is a directory"),
        ]
        for (path, reason) in cases {
            #expect(throws: OutputFileError(.cannotCreate, subject: path, reason: reason)) {
                try OutputFile.checkCreatable(path)
            }
            #expect(OutputFileError(.cannotCreate, subject: path, reason: reason).exitCode.rawValue == 73)
        }
    }

    /// A directory this process may not write: run as another user where we are root (setpriv), else as us.
    @Test func aDirectoryWithoutWritePermissionIsSaid() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: dir.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir.path) }
        guard getuid() != 0 else {
            // root may write anywhere: access(2) agrees, so the check passes, as the create would.
            try OutputFile.checkCreatable(dir.appendingPathComponent("p.png").path)
            return
        }
        #expect(throws: OutputFileError(.cannotCreate, subject: dir.appendingPathComponent("p.png").path,
                                        reason: "no permission to create files in \(dir.path)")) {
            try OutputFile.checkCreatable(dir.appendingPathComponent("p.png").path)
        }
    }

    @Test func aFullDiskIsAWriteErrorAndAMissingDirectoryACreateError() {
        #expect(OutputFile.error(for: "/tmp/x.png", errno: ENOSPC)
            == OutputFileError(.writeFailed, subject: "/tmp/x.png", reason: "no space left on the device"))
        #expect(OutputFile.error(for: "/tmp/x.png", errno: ENOSPC).exitCode.rawValue == 74)
        #expect(OutputFile.error(for: "/nonexistent/x.png", errno: ENOENT)
            == OutputFileError(.cannotCreate, subject: "/nonexistent/x.png", reason: "no such directory /nonexistent"))
    }

    /// Found by a newcomer: `calibrate -o /dev/full` replaced the device node with a regular file, and a FIFO
    /// or a symbolic link the same way. Only a regular file is replaced; a link is followed.
    @Test func onlyARegularFileIsReplacedAndALinkIsFollowed() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let device = OutputFileError(.cannotCreate, subject: "/dev/null", reason: "is a device, not a regular file")
        #expect(throws: device) { try OutputFile.checkCreatable("/dev/null") }
        let fifo = dir.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o644) == 0)
        #expect(throws: OutputFileError(.cannotCreate, subject: fifo, reason: "is a FIFO, not a regular file")) {
            try OutputFile.checkCreatable(fifo)
        }
        let target = dir.appendingPathComponent("target.json").path
        let link = dir.appendingPathComponent("link.json").path
        try #require(FileManager.default.createFile(atPath: target, contents: Data("old".utf8)))
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        try OutputFile.checkCreatable(link)
        #expect(OutputFile.resolved(link) == URL(fileURLWithPath: target).resolvingSymlinksInPath().path)
        #expect(OutputFile.resolved(target) == target)
    }

    /// Names in `dir` that a pending output left behind.
    func partials(in dir: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains(".partial-") }
    }

    /// Found by a newcomer: a stopped or failed `winkctl overlay -o OUT` destroyed the file already at OUT.
    /// Outputs are now written beside it and renamed over it only when complete.
    @Test func aPendingOutputReplacesTheFileOnlyWhenCommitted() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("clip.mp4").path
        try #require(FileManager.default.createFile(atPath: out, contents: Data("old".utf8)))
        #expect(chmod(out, 0o640) == 0)
        // Group 1 (daemon on Debian), which only root may give: the group kept is then checked too.
        let group: gid_t? = chown(out, getuid(), 1) == 0 ? 1 : nil

        let failed = try PendingOutput(destination: out)
        #expect(failed.temporary.hasPrefix(dir.path + "/.clip.partial-") && failed.temporary.hasSuffix(".mp4"))
        #expect(FileManager.default.fileExists(atPath: failed.temporary))
        try Data("half".utf8).write(to: URL(fileURLWithPath: failed.temporary))
        failed.discard()
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == Data("old".utf8))
        #expect(try partials(in: dir).isEmpty)

        do {  // dropped without a commit (an error thrown past it): the same
            let dropped = try PendingOutput(destination: out)
            try Data("half".utf8).write(to: URL(fileURLWithPath: dropped.temporary))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == Data("old".utf8))
        #expect(try partials(in: dir).isEmpty)

        let done = try PendingOutput(destination: out)
        try Data("new".utf8).write(to: URL(fileURLWithPath: done.temporary))
        try done.commit()
        done.discard()  // nothing after a commit
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == Data("new".utf8))
        var st = stat()
        #expect(stat(out, &st) == 0 && st.st_mode & 0o777 == 0o640, "the old file's permission bits are kept")
        if let group { #expect(st.st_gid == group && st.st_uid == getuid(), "the old file's group is kept") }
        #expect(try partials(in: dir).isEmpty)
    }

    @Test func aPendingOutputThroughALinkReplacesItsTargetAndKeepsTheLink() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let target = dir.appendingPathComponent("real.png").path
        let link = dir.appendingPathComponent("link.png").path
        try #require(FileManager.default.createFile(atPath: target, contents: Data("old".utf8)))
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let pending = try PendingOutput(destination: link)
        try Data("new".utf8).write(to: URL(fileURLWithPath: pending.temporary))
        try pending.commit()
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == Data("new".utf8))
        // A bare name is written in the working directory.
        let name = "plot-\(UUID().uuidString)"
        let bare = try PendingOutput(destination: name + ".png")
        #expect(bare.temporary.hasPrefix("./.\(name).partial-") && bare.temporary.hasSuffix(".png"))
        #expect(FileManager.default.fileExists(atPath: bare.temporary))
        bare.discard()
        #expect(!FileManager.default.fileExists(atPath: bare.temporary))
    }

    /// A newcomer's finding: a legal name of 234-255 bytes failed (the partial name added 22 bytes past
    /// NAME_MAX), and `-o .png` lost its extension in the partial name ("unsupported image extension").
    @Test func aPendingOutputWorksForAnyLegalName() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        for name in [String(repeating: "a", count: 251) + ".png", ".png", "noextension"] {
            let out = dir.appendingPathComponent(name).path
            let pending = try PendingOutput(destination: out)
            let last = pending.temporary.split(separator: "/").last.map(String.init) ?? ""
            #expect(last.utf8.count <= 255 && last.hasPrefix(".") && last.contains(".partial-"), "\(last)")
            #expect(name.hasSuffix(".png") == last.hasSuffix(".png"), "\(last)")
            try Data("new".utf8).write(to: URL(fileURLWithPath: pending.temporary))
            try pending.commit()
            #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == Data("new".utf8))
        }
        #expect(try partials(in: dir).isEmpty)
    }

    /// A newcomer's finding: an output on a read-only mount was said to lack permission. Needs root to
    /// mount one.
    @Test(.enabled(if: geteuid() == 0, "mounting a read-only tmpfs needs root: skipped"))
    func aReadOnlyFileSystemIsSaidToBeOne() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let mount = Process()
        mount.executableURL = URL(fileURLWithPath: "/bin/mount")
        mount.arguments = ["-t", "tmpfs", "-o", "ro,size=16k", "tmpfs", dir.path]
        mount.standardError = FileHandle.nullDevice
        try mount.run()
        mount.waitUntilExit()
        try #require(mount.terminationStatus == 0, "mount -o ro tmpfs failed")
        defer {
            let umount = Process()
            umount.executableURL = URL(fileURLWithPath: "/bin/umount")
            umount.arguments = [dir.path]
            try? umount.run()
            umount.waitUntilExit()
        }
        let out = dir.appendingPathComponent("x.png").path
        let readOnly = OutputFileError(.cannotCreate, subject: out, reason: "\(dir.path) is on a read-only file system")
        #expect(throws: readOnly) { try OutputFile.checkCreatable(out) }
    }

    @Test func aPendingOutputThatCannotBeCreatedIs73() throws {
        let missing = OutputFileError(
            .cannotCreate, subject: "/nonexistent/x.png", reason: "no such directory /nonexistent")
        #expect(throws: missing) { _ = try PendingOutput(destination: "/nonexistent/x.png") }
        let device = OutputFileError(.cannotCreate, subject: "/dev/null", reason: "is a device, not a regular file")
        #expect(throws: device) { _ = try PendingOutput(destination: "/dev/null") }
    }

    /// A stop a command's handler has taken (overlay's flag) discards the output at `commit()` too.
    @Test func aStopRequestedByTheCommandDiscardsTheOutput() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("still.png").path
        try #require(FileManager.default.createFile(atPath: out, contents: Data("old".utf8)))
        PendingOutput.stopRequested = { $0 == out ? SIGTERM : nil }  // only this test's output
        defer { PendingOutput.stopRequested = nil }
        let pending = try PendingOutput(destination: out)
        try Data("new".utf8).write(to: URL(fileURLWithPath: pending.temporary))
        #expect(throws: PendingOutput.Stopped(signal: SIGTERM)) { try pending.commit() }
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == Data("old".utf8))
        #expect(try partials(in: dir).isEmpty)
    }
}

/// A run killed outright (SIGKILL) left its hidden `.NAME.partial-PID-RANDOM.EXT` behind, and each such run
/// another: the next output to the same destination removes those of processes that are gone.
@Suite struct PendingOutputLeftoverTests {
    /// A PID that no process has now: a child that has exited and been reaped.
    func deadPID() throws -> pid_t {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/true")
        try child.run()
        child.waitUntilExit()
        return child.processIdentifier
    }

    /// A destination name so long that the partial file's stem is shortened to fit 255 bytes: a leftover of a
    /// process whose pid has fewer digits is shortened less, and was never recognised.
    @Test func leftoversOfALongNameAreRecognisedWhateverThePidsLength() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("leftovers-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let stem = String(repeating: "a", count: 240)
        // A 3-digit pid that no process has.
        let pid = try #require((100...999).first { kill(pid_t($0), 0) == -1 && errno == ESRCH })
        let suffix = ".partial-\(pid)-deadbeef.png"
        let name = "." + stem.prefix(255 - 1 - suffix.utf8.count) + suffix
        let path = dir.appendingPathComponent(name).path
        try #require(FileManager.default.createFile(atPath: path, contents: Data([1])))
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -120)], ofItemAtPath: path)
        let output = try PendingOutput(destination: dir.appendingPathComponent(stem + ".png").path)
        defer { output.discard() }
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(FileManager.default.fileExists(atPath: output.temporary))
    }

    @Test func leftoversOfProcessesThatAreGoneAreRemoved() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("leftovers-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let dead = try deadPID()
        try #require(kill(dead, 0) == -1 && errno == ESRCH)
        let old = Date(timeIntervalSinceNow: -120)
        func make(_ name: String, modified: Date = old) throws -> String {
            let path = dir.appendingPathComponent(name).path
            try #require(FileManager.default.createFile(atPath: path, contents: Data([1, 2, 3])))
            try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: path)
            return path
        }
        let stale = try make(".out.partial-\(dead)-1a2b.mp4")
        let fresh = try make(".out.partial-\(dead)-3c4d.mp4", modified: Date())  // maybe a writer we cannot see
        let alive = try make(".out.partial-1-5e6f.mp4")  // PID 1 exists
        let mine = try make(".out.partial-\(getpid())-7a8b.mp4")
        let otherName = try make(".other.partial-\(dead)-9c0d.mp4")
        let otherExtension = try make(".out.partial-\(dead)-1a2b.mkv")
        let notOurs = try make(".out.partial-\(dead)-xyz.mp4")
        // Names winkctl never makes (a newcomer's finding: these were removed): a sign or a leading zero in the
        // pid, upper-case or full-width hex digits.
        let oddNames = try [".out.partial-+\(dead)-ab.mp4", ".out.partial-0\(dead)-ab.mp4",
                            ".out.partial-\(dead)-AB.mp4", ".out.partial-\(dead)-ＡＢ.mp4"].map { try make($0) }
        let output = try PendingOutput(destination: dir.appendingPathComponent("out.mp4").path)
        defer { output.discard() }
        #expect(!FileManager.default.fileExists(atPath: stale))
        for kept in [fresh, alive, mine, otherName, otherExtension, notOurs, output.temporary] + oddNames {
            #expect(FileManager.default.fileExists(atPath: kept), "\(kept) was removed")
        }
    }
}
