import Foundation
import Glibc
import Testing

@testable import TestSupport

/// The tests' scratch space: fresh folders inside the process's root, and the root's removal at exit
/// (`removeAll()`, tried on roots of the tests' own so that the shared one stays for the tests running beside).
struct ScratchTests {
    func isDirectory(_ url: URL) -> Bool {
        var directory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &directory) && directory.boolValue
    }

    func mode(_ path: String) -> UInt32 {
        var status = stat()
        return lstat(path, &status) == 0 ? UInt32(status.st_mode & 0o7777) : 0
    }

    @Test func eachFolderIsFreshAndInsideTheProcesssRoot() throws {
        let root = try Scratch.shared.path()
        let parent = FileManager.default.temporaryDirectory.standardizedFileURL.path
        #expect(URL(fileURLWithPath: root).deletingLastPathComponent().standardizedFileURL.path == parent)
        #expect(URL(fileURLWithPath: root).lastPathComponent.hasPrefix("winkd-tests-\(getpid())-"))
        let a = try Scratch.directory("same")
        let b = try Scratch.directory("same")
        #expect(a != b)
        #expect(mode(root) == 0o755 && mode(a.path) == 0o755, "others may reach a test's folder")
        for folder in [a, b] {
            #expect(isDirectory(folder))
            #expect(folder.deletingLastPathComponent().path == root)
            #expect(folder.lastPathComponent.hasPrefix("same-"))
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
        }
        let file = try Scratch.file("p.png")
        #expect(file.lastPathComponent == "p.png" && !FileManager.default.fileExists(atPath: file.path))
        #expect(isDirectory(file.deletingLastPathComponent()))
        #expect(file.deletingLastPathComponent().deletingLastPathComponent().path == root)
    }

    @Test func theRootIsMadeOnceWhenTestsAskTogether() throws {
        let place = try Scratch.directory("together")
        let root = ScratchRoot(in: place.path, prefix: "r-")
        let lock = NSLock()
        var made: [URL] = []
        DispatchQueue.concurrentPerform(iterations: 32) { _ in
            if let folder = try? root.directory("d") { lock.withLock { made.append(folder) } }
        }
        #expect(made.count == 32 && Set(made).count == 32)
        #expect(Set(made.map { $0.deletingLastPathComponent() }).count == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: place.path).count == 1)
        root.removeAll()
    }

    /// What the atexit hook does: the whole tree goes, read-only folders and sockets too, and nothing a
    /// symbolic link in it points to.
    @Test func removeAllRemovesTheTreeAndNothingOutsideIt() throws {
        let place = try Scratch.directory("removal")
        let outside = place.appendingPathComponent("outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        let kept = outside.appendingPathComponent("kept.txt")
        try Data("kept".utf8).write(to: kept)

        let root = ScratchRoot(in: place.path, prefix: "r-")
        root.removeAll()  // never made: nothing to do
        let folder = try root.directory("tree")
        let nested = folder.appendingPathComponent("a/b/c")
        try FileManager.default.createDirectory(at: nested, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: nested.appendingPathComponent("file"))
        #expect(mkfifo(folder.appendingPathComponent("fifo").path, 0o600) == 0)
        try FileManager.default.createSymbolicLink(at: folder.appendingPathComponent("link"), withDestinationURL: kept)
        try FileManager.default.createSymbolicLink(
            at: folder.appendingPathComponent("dirlink"), withDestinationURL: outside)
        let locked = folder.appendingPathComponent("locked")
        try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: true)
        try Data("y".utf8).write(to: locked.appendingPathComponent("inside"))
        #expect(chmod(locked.path, 0o500) == 0)
        let second = try root.directory("second")
        let path = try root.path()

        root.removeAll()
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(!FileManager.default.fileExists(atPath: second.path))
        #expect(try String(contentsOf: kept, encoding: .utf8) == "kept")
        #expect(try FileManager.default.contentsOfDirectory(atPath: place.path) == ["outside"])

        // Used again, it makes a new root.
        let again = try root.directory("again")
        #expect(isDirectory(again) && again.deletingLastPathComponent().path != path)
        root.removeAll()
        #expect(!FileManager.default.fileExists(atPath: again.path))
    }
}
