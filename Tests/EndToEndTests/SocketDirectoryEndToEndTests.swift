import Foundation
import Glibc
import TestSupport
import Testing

/// Issue 13, fault 6, as winkd and its clients meet it: a `"socket": {"mode": "0660"}` socket in a
/// directory winkd creates (under systemd's UMask=0077) kept group members out with EACCES; a user
/// without `XDG_RUNTIME_DIR` was told "cannot inspect the existing socket: Permission denied" instead of
/// which directory and what to do; a directory anyone could replace the socket in was accepted.
///
/// The other user is `nobody` through `setpriv` (util-linux), so these run only as root.
@Suite(
    .serialized,
    .enabled(
        if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
        "needs root and setpriv to act as another user"))
struct SocketDirectoryEndToEndTests {
    /// Runs `program` as `nobody` (group `nogroup`, plus `groups`) with `environment` replacing the parent's.
    func runAsNobody(
        _ program: String, _ arguments: [String], groups: [String] = [],
        environment: [String: String]
    ) throws -> Binaries.Result {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        p.arguments =
            ["--reuid=nobody", "--regid=nogroup"]
            + (groups.isEmpty ? ["--clear-groups"] : ["--groups=" + groups.joined(separator: ",")])
            + [Binaries.directory.appendingPathComponent(program).path] + arguments
        p.environment = environment
        return try Binaries.capture(p)
    }

    /// A temporary directory others may enter (Binaries' own is 0755 too; this makes it explicit).
    func openTemporaryDirectory() throws -> URL {
        let dir = try Binaries.temporaryDirectory()
        chmod(dir.path, 0o755)
        return dir
    }

    @Test func aGroupSocketInADirectoryWinkdCreatesUnderUmask077LetsTheGroupIn() throws {
        let dir = try openTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = dir.appendingPathComponent("winkd.json")
        try Data(#"{"socket": {"mode": "0660"}}"#.utf8).write(to: config)
        let socket = dir.appendingPathComponent("run/winkd/events.sock").path
        // As the units start it: UMask=0077.
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = [
            "-c", #"umask 077 && exec "$0" "$@""#, Binaries.directory.appendingPathComponent("winkd").path,
            "--source", Binaries.fixture("video/single_face.mp4"), "--socket", socket, "--config", config.path,
        ]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        defer {
            p.terminate()
            p.waitUntilExit()
        }
        #expect(Wait.forFile(socket))
        var st = stat()
        #expect(
            lstat(dir.appendingPathComponent("run/winkd").path, &st) == 0 && st.st_mode & 0o7777 == 0o750,
            "mode \(String(st.st_mode & 0o7777, radix: 8))")
        #expect(lstat(socket, &st) == 0 && st.st_mode & 0o777 == 0o660)
        // A member of the socket's group (root's, gid 0) connects and is greeted: asking for an event
        // winkd does not have proves the hello came (exit 64 naming it), where it got EACCES (69) before.
        let member = try runAsNobody(
            "winkctl", ["events", "--socket", socket, "--events", "noSuchEvent"],
            groups: ["\(st.st_gid)"], environment: [:])
        #expect(member.status == 64 && member.stderr.contains("has no event 'noSuchEvent'"), "\(member.stderr)")
        // Someone outside the group still may not.
        let outsider = try runAsNobody("winkctl", ["events", "--socket", socket], environment: [:])
        #expect(outsider.status == 69 && outsider.stderr.contains("Permission denied"), "\(outsider.stderr)")
    }

    @Test func withoutXDGRuntimeDirTheLineNamesRunWinkdAndWhatToDo() throws {
        // Not run as root, /run/winkd cannot be created (or, if it exists, entered or written).
        let result = try runAsNobody(
            "winkd", ["--source", Binaries.fixture("video/single_face.mp4")],
            environment: ["PATH": "/usr/bin:/bin"])
        #expect(result.status == 69)
        #expect(result.stderrLines.count == 1, "\(result.stderr)")
        let line = result.stderrLines.first ?? ""
        #expect(line.hasPrefix("winkd: /run/winkd: cannot "), "\(line)")
        #expect(line.contains("as uid 65534 (nobody): EACCES: Permission denied"), "\(line)")
        #expect(line.contains("--socket PATH") && line.contains("set XDG_RUNTIME_DIR"), "\(line)")
    }

    @Test func aDirectoryTheUserMayNotEnterIsNamed() throws {
        // The issue's case: a socket directory that exists but is not this user's to enter.
        let dir = try openTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let locked = dir.appendingPathComponent("winkd")
        try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: false)
        chmod(locked.path, 0o700)
        let socket = locked.appendingPathComponent("events.sock").path
        let result = try runAsNobody("winkd", ["--socket", socket], environment: ["PATH": "/usr/bin:/bin"])
        #expect(result.status == 69)
        #expect(
            result.stderr == "winkd: \(locked.path): cannot search the socket's directory as uid 65534 (nobody): "
                + "EACCES: Permission denied; give winkd a socket path this user may create with --socket PATH\n",
            "\(result.stderr)")
    }

    /// A newcomer's reading: a socket directory that cannot be made at all (under /proc, or below a file) got
    /// no advice, unlike one the user may not create.
    @Test func aDirectoryThatCannotBeMadeIsNamedWithAdvice() throws {
        for (socket, directory, errno) in [
            ("/proc/winkd-nope/events.sock", "/proc/winkd-nope", "ENOENT: No such file or directory"),
            ("/etc/hostname/winkd/events.sock", "/etc/hostname/winkd", "ENOTDIR: Not a directory"),
        ] {
            let result = try Binaries.run("winkd", ["--socket", socket])
            #expect(result.status == 69, "\(result.stderr)")
            #expect(
                result.stderr.hasPrefix("winkd: \(directory): cannot create the socket's directory as uid ")
                    && result.stderr.hasSuffix(
                        "): \(errno); give winkd a socket path this user may create with --socket PATH\n")
                    && result.stderrLines.count == 1, "\(result.stderr)")
        }
    }

    @Test func anUnsafeDirectoryExits78NamingIt() throws {
        let dir = try openTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let open = dir.appendingPathComponent("open")
        try FileManager.default.createDirectory(at: open, withIntermediateDirectories: false)
        chmod(open.path, 0o777)
        let socket = open.appendingPathComponent("events.sock").path
        let p = Process()
        p.executableURL = Binaries.directory.appendingPathComponent("winkd")
        p.arguments = ["--socket", socket]
        let log = dir.appendingPathComponent("stderr.txt")
        try #require(FileManager.default.createFile(atPath: log.path, contents: nil))
        p.standardError = try FileHandle(forWritingTo: log)
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        // It exits at once; a winkd that accepted the directory (the old one) is listening there instead.
        Wait.until { !p.isRunning || FileManager.default.fileExists(atPath: socket) }
        if p.isRunning {
            p.terminate()
            p.waitUntilExit()
            Issue.record("winkd accepted a world-writable directory")
        }
        let stderr = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        let result = Binaries.Result(status: p.terminationStatus, stdout: "", stderr: stderr)
        #expect(result.status == 78)
        #expect(
            result.stderrLines == [
                "winkd: \(open.path): the socket's directory is writable by everyone without the "
                    + "sticky bit (mode 0777), so any user could replace the socket; chmod o-w \(open.path) (or chmod "
                    + "+t), or "
                    + "give winkd a directory of its own user (winkd --socket PATH, e.g. under $XDG_RUNTIME_DIR)"
            ], "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: socket))
    }
}
