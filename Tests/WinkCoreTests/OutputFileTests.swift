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
}
