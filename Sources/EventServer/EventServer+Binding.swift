import Foundation
import WinkCore

#if canImport(Glibc)
    import Glibc
#endif

extension EventServer {
    /// Creates the listening socket at `path` (see `init(path:eventNames:options:log:)` for the rules).
    /// - Returns: the fd and the (st_dev, st_ino) of the socket file.
    static func bindListening(path: String, options: Options, syscalls: any SocketSyscalls)
        throws -> (Int32, (dev: UInt64, ino: UInt64))
    {
        let length = path.utf8.count
        guard length > 0 else {
            throw EventServerError(.system(errno: EINVAL), subject: path, reason: "empty socket path")
        }
        guard length <= EventSocketPath.maximumLength else {
            throw EventServerError(
                .pathTooLong, subject: path,
                reason:
                    "socket path is \(length) bytes; a Unix socket address holds at most "
                    + "\(EventSocketPath.maximumLength)"
            )
        }
        func fail(_ error: Errno, _ what: String) -> EventServerError {
            EventServerError(.system(errno: error.code), subject: path, reason: "\(what): \(error)")
        }
        // A permission problem is the directory's: name it, and who asked.
        let directory = parentDirectory(of: path)
        func denied(_ error: Errno, _ what: String) -> EventServerError {
            EventServerError(
                .system(errno: error.code), subject: directory,
                reason: "\(what) as \(describeUser(geteuid())): \(error)")
        }
        do {
            try makeParentDirectories(of: path, mode: directoryMode(forSocketMode: options.mode), syscalls: syscalls)
        } catch let error as DirectoryError {
            throw EventServerError(
                .system(errno: error.errno.code), subject: error.directory,
                reason: "cannot create the socket's directory as \(describeUser(geteuid())): "
                    + "\(error.errno)")
        }
        do {
            try checkDirectory(directory, syscalls: syscalls)
        } catch let error as Errno {
            throw denied(error, "cannot search the socket's directory")
        }

        do {
            if let st = try syscalls.lstat(path) {
                guard st.st_mode & S_IFMT == S_IFSOCK else {
                    throw EventServerError(
                        .notASocket, subject: path, reason: "exists and is not a socket; refusing to replace it")
                }
                do {
                    let fd = try syscalls.connect(path: path)
                    syscalls.close(fd)
                    throw EventServerError(.inUse, subject: path, reason: "another winkd is listening")
                } catch let error as Errno {
                    switch error.code {
                    case ECONNREFUSED:
                        try syscalls.unlink(path)  // stale: left by a daemon that died without unlinking
                    case ENOENT:
                        break
                    case EAGAIN:
                        throw EventServerError(
                            .inUse, subject: path, reason: "another winkd is listening (backlog full)")
                    default:
                        throw fail(error, "cannot check the existing socket")
                    }
                }
            }
        } catch let error as Errno {
            if error.code == EACCES || error.code == EPERM {
                throw denied(error, "cannot search the socket's directory")
            }
            throw fail(error, "cannot inspect the existing socket")
        }

        let fd: Int32
        do {
            fd = try syscalls.bindListen(path: path, mode: options.mode & 0o777, backlog: options.backlog)
        } catch {
            if error.code == EADDRINUSE {
                throw EventServerError(.inUse, subject: path, reason: "another winkd is listening")
            }
            if error.code == EACCES || error.code == EPERM {
                throw denied(error, "cannot create the socket in its directory")
            }
            throw fail(error, "cannot bind")
        }
        guard let st = try? syscalls.lstat(path) else {
            syscalls.close(fd)
            throw EventServerError(
                .system(errno: ENOENT), subject: path, reason: "socket file vanished right after bind")
        }
        return (fd, (UInt64(st.st_dev), UInt64(st.st_ino)))
    }

    /// The directory a socket at `path` is created in: "/run/winkd" for "/run/winkd/events.sock", "." for
    /// "events.sock".
    static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let parent = String(path[..<slash])
        return parent.isEmpty ? "/" : parent
    }

    /// The mode of a directory winkd creates for a socket of `mode`: rwx for the owner, and r-x for the group
    /// or others when the socket lets them in (0660 -> 0750, 0666 -> 0755, 0600 -> 0700); without the search
    /// bit the socket's own mode would be undone.
    static func directoryMode(forSocketMode mode: UInt32) -> UInt32 {
        var directory: UInt32 = 0o700
        if mode & 0o070 != 0 { directory |= 0o050 }
        if mode & 0o007 != 0 { directory |= 0o005 }
        return directory
    }

    /// A directory of the socket's path could not be created.
    struct DirectoryError: Error {
        var directory: String
        var errno: Errno
    }

    /// mkdir -p of the path's parent; each directory it creates gets exactly `mode` (chmod after mkdir, as
    /// the umask, e.g. systemd's UMask=0077, would take the group's bits away again).
    private static func makeParentDirectories(of path: String, mode: UInt32, syscalls: any SocketSyscalls) throws {
        var components = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        components.removeLast()
        var current = path.hasPrefix("/") ? "" : "."
        for component in components {
            current += "/" + component
            do {
                if try syscalls.lstat(current) == nil {
                    try syscalls.mkdir(current, mode: mode)
                    try syscalls.chmod(current, mode: mode)
                }
            } catch {
                throw DirectoryError(directory: current, errno: error)
            }
        }
    }

    /// Refuses a socket directory where another user could put their own socket in winkd's place (README
    /// "Running winkd"): the directory itself a symbolic link; a symbolic link on the way owned by anyone
    /// but this user or root; any directory of the resolved path owned by anyone but this user or root, or
    /// writable by everyone without the sticky bit (`/tmp`, mode 1777, is fine).
    /// - Throws: `EventServerError` `.unsafeDirectory` naming the directory, why, and what to do; `Errno`
    ///   when a directory cannot be examined (EACCES).
    static func checkDirectory(_ directory: String, syscalls: any SocketSyscalls = LinuxSocketSyscalls()) throws {
        let me = geteuid()
        let trusted: (UInt32) -> Bool = { $0 == me || $0 == 0 }
        let advice = "give winkd a directory of its own user (winkd --socket PATH, e.g. under $XDG_RUNTIME_DIR)"
        guard let own = try syscalls.lstat(directory) else { throw Errno(code: ENOENT) }
        if own.st_mode & S_IFMT == S_IFLNK {
            let target = (try? syscalls.realpath(directory)) ?? "?"
            throw EventServerError(
                .unsafeDirectory, subject: directory,
                reason: "the socket's directory is a symbolic link (to \(target)), which could be "
                    + "pointed elsewhere; use the real directory in the socket path, or \(advice)")
        }
        let absolute = directory.hasPrefix("/") ? directory : FileManager.default.currentDirectoryPath + "/" + directory
        var prefix = ""
        for component in absolute.split(separator: "/") where component != "." {
            prefix += "/" + component
            if let st = try syscalls.lstat(prefix), st.st_mode & S_IFMT == S_IFLNK, !trusted(st.st_uid) {
                throw EventServerError(
                    .unsafeDirectory, subject: directory,
                    reason: "the socket's directory is reached through the symbolic link \(prefix), "
                        + "owned by \(describeUser(st.st_uid)), who could point it elsewhere; \(advice)")
            }
        }
        let real = try syscalls.realpath(directory)
        var path = ""
        for component in [""] + real.split(separator: "/").map(String.init) {
            path += component.isEmpty ? "" : "/" + component
            let shown = path.isEmpty ? "/" : path
            guard let st = try syscalls.lstat(shown) else { throw Errno(code: ENOENT) }
            let octal = String(st.st_mode & 0o7777, radix: 8)
            let mode = String(repeating: "0", count: max(0, 4 - octal.count)) + octal
            if !trusted(st.st_uid) {
                throw EventServerError(
                    .unsafeDirectory, subject: shown,
                    reason: "the socket's directory\(shown == real ? "" : " lies in this one, which") is owned by "
                        + "\(describeUser(st.st_uid)), not by this user (\(describeUser(me)))"
                        + "\(me == 0 ? "" : " or root"), "
                        + "who could replace the socket; \(advice)")
            }
            if st.st_mode & 0o002 != 0 && st.st_mode & S_ISVTX == 0 {
                throw EventServerError(
                    .unsafeDirectory, subject: shown,
                    reason: "the socket's directory\(shown == real ? "" : " lies in this one, which") is "
                        + "writable by everyone without the sticky bit (mode \(mode)), so any user "
                        + "could replace the socket; chmod o-w \(shown) (or chmod +t), or \(advice)")
            }
        }
    }
}

/// "uid 1000 (alice)", or "uid 1000" when the user has no name.
func describeUser(_ uid: uid_t) -> String {
    var entry = passwd()
    var result: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 4096)
    guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return "uid \(uid)" }
    return "uid \(uid) (\(String(cString: entry.pw_name)))"
}

/// systemd socket activation (sd_listen_fds(3)): systemd binds the socket and passes it to the daemon as
/// fd 3 (`SD_LISTEN_FDS_START`), naming the receiving process in `LISTEN_PID` and the count in `LISTEN_FDS`.
/// The protocol is documented as stable for independent implementations.
public enum SocketActivation {
    /// `SD_LISTEN_FDS_START`: the first inherited descriptor.
    public static let firstDescriptor: Int32 = 3

    /// The inherited listening socket, if systemd passed one to this process.
    ///
    /// Returns nil when `LISTEN_PID` is unset or names another process (the variables were meant for a
    /// parent) or `LISTEN_FDS` is unset or 0. Otherwise returns the first of the passed descriptors that is
    /// a listening Unix stream socket (`EventServer(listeningFD:)` then marks it close-on-exec and non-blocking).
    /// - Parameters:
    ///   - firstDescriptor: where the passed descriptors start; 3 except in tests.
    ///   - syscalls: where the socket calls go; a fake in tests.
    /// - Throws: `EventServerError` `.notASocket` when descriptors were passed but none is a listening Unix
    ///   stream socket (a unit file mistake, e.g. `ListenDatagram=`), `.system(errno: EINVAL)` when the
    ///   variables are malformed.
    public static func listeningSocket(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        processID: Int32 = getpid(),
        firstDescriptor: Int32 = SocketActivation.firstDescriptor,
        syscalls: any SocketSyscalls = LinuxSocketSyscalls()
    ) throws -> Int32? {
        guard let pidText = environment["LISTEN_PID"], let countText = environment["LISTEN_FDS"] else { return nil }
        guard let pid = Int32(pidText), let count = Int32(countText), count >= 0, count < 4096 else {
            throw EventServerError(
                .system(errno: EINVAL), subject: "LISTEN_FDS",
                reason: "malformed LISTEN_PID='\(pidText)' LISTEN_FDS='\(countText)'")
        }
        guard pid == processID, count > 0 else { return nil }
        var found: Int32?
        for fd in firstDescriptor..<(firstDescriptor + count) {
            if (try? syscalls.isListeningUnixStream(fd)) == true {
                found = fd
                break
            }
        }
        guard let found else {
            throw EventServerError(
                .notASocket, subject: "fd \(firstDescriptor)",
                reason: "systemd passed \(count) descriptor(s) but none is a listening Unix stream socket")
        }
        return found
    }

    /// Removes `LISTEN_PID`, `LISTEN_FDS` and `LISTEN_FDNAMES` from the environment so child processes do
    /// not mistake them for their own (what sd_listen_fds(3) does with `unset_environment`).
    public static func unsetEnvironment() {
        for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { unsetenv(name) }
    }
}
