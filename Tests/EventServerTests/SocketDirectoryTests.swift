import Foundation
import Glibc
import Testing

@testable import EventServer

/// Issue 13, fault 6: the socket's directory. One winkd creates gets the socket mode's search bits (a 0660
/// socket in a 0700 directory kept the group out); one that another user could replace the socket in (a
/// symbolic link, writable by everyone without the sticky bit, owned by someone else) is refused, naming
/// the directory; it used to be accepted silently.
@Suite(.serialized)
struct SocketDirectoryTests {
    static let names = ["smile"]

    final class Sandbox {
        let directory: String
        init() {
            var template = Array("/tmp/wsd-XXXXXX".utf8CString)
            directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        }
        deinit { try? FileManager.default.removeItem(atPath: directory) }
    }

    func mode(_ path: String) -> UInt32 {
        var st = stat()
        return lstat(path, &st) == 0 ? UInt32(st.st_mode & 0o7777) : 0
    }

    /// The `.unsafeDirectory` error binding at `path` gives (nil if it binds or fails otherwise).
    func refusal(_ path: String) -> EventServerError? {
        do {
            let server = try EventServer(path: path, eventNames: Self.names)
            server.stop()
            Issue.record("bound \(path)")
            return nil
        } catch let error as EventServerError {
            #expect(error.code == .unsafeDirectory && error.exitCode == .configuration, "\(error)")
            #expect(!error.description.contains("\n"))
            #expect(!FileManager.default.fileExists(atPath: path), "no socket left behind")
            return error
        } catch {
            Issue.record("\(error)")
            return nil
        }
    }

    @Test func aDirectoryWinkdCreatesLetsInWhomTheSocketModeLetsIn() throws {
        let sandbox = Sandbox()
        for (socketMode, directoryMode): (UInt32, UInt32) in [
            (0o660, 0o750), (0o600, 0o700), (0o666, 0o755), (0o606, 0o705),
        ] {
            let top = sandbox.directory + "/m\(String(socketMode, radix: 8))"
            let path = top + "/winkd/events.sock"
            let server = try EventServer(path: path, eventNames: Self.names, options: .init(mode: socketMode))
            defer { server.stop() }
            #expect(mode(path) == socketMode)
            #expect(mode(top + "/winkd") == directoryMode, "socket \(String(socketMode, radix: 8))")
            #expect(mode(top) == directoryMode, "every directory created on the way")
        }
        #expect(EventServer.directoryMode(forSocketMode: 0o660) == 0o750)
    }

    @Test func aWorldWritableDirectoryWithoutTheStickyBitIsRefused() throws {
        let sandbox = Sandbox()
        let open = sandbox.directory + "/open"
        try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: false)
        chmod(open, 0o777)
        let error = try #require(refusal(open + "/events.sock"))
        #expect(error.subject == open)
        #expect(
            error.reason.hasPrefix("the socket's directory is writable by everyone without the sticky bit (mode 0777)"))
        #expect(error.reason.contains("chmod o-w \(open)") && error.reason.contains("--socket"))
        // Beneath it, too: the directory winkd owns could be renamed away.
        let below = try #require(refusal(open + "/mine/events.sock"))
        #expect(below.subject == open && below.reason.contains("lies in this one"))
        // With the sticky bit (like /tmp) nobody can remove or rename another's file: accepted.
        chmod(open, 0o1777)
        let server = try EventServer(path: open + "/events.sock", eventNames: Self.names)
        server.stop()
    }

    @Test(.enabled(if: geteuid() == 0, "chown needs root"))
    func aDirectoryOwnedByAnotherUserIsRefused() throws {
        let sandbox = Sandbox()
        let theirs = sandbox.directory + "/theirs"
        try FileManager.default.createDirectory(atPath: theirs, withIntermediateDirectories: false)
        #expect(chown(theirs, 65534, 65534) == 0)
        let error = try #require(refusal(theirs + "/events.sock"))
        #expect(error.subject == theirs)
        #expect(error.reason.hasPrefix("the socket's directory is owned by uid 65534"), "\(error.reason)")
        #expect(error.reason.contains("who could replace the socket"))
    }

    @Test func aSymbolicLinkAsTheDirectoryIsRefused() throws {
        let sandbox = Sandbox()
        let real = sandbox.directory + "/real"
        let link = sandbox.directory + "/link"
        try FileManager.default.createDirectory(atPath: real, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: real)
        let error = try #require(refusal(link + "/events.sock"))
        #expect(error.subject == link)
        #expect(error.reason.hasPrefix("the socket's directory is a symbolic link (to \(real))"), "\(error.reason)")
        // The real directory is fine.
        let server = try EventServer(path: real + "/events.sock", eventNames: Self.names)
        server.stop()
    }

    @Test func ownTemporaryAndRelativeDirectoriesAreAccepted() throws {
        let sandbox = Sandbox()
        let server = try EventServer(path: sandbox.directory + "/events.sock", eventNames: Self.names)
        server.stop()
        #expect(EventServer.parentDirectory(of: "events.sock") == ".")
        #expect(EventServer.parentDirectory(of: "/events.sock") == "/")
        #expect(EventServer.parentDirectory(of: "/run/winkd/events.sock") == "/run/winkd")
        #expect(throws: Never.self) { try EventServer.checkDirectory(sandbox.directory) }
        #expect(throws: Never.self) { try EventServer.checkDirectory("/tmp") }
    }
}
