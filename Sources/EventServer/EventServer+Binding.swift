import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension EventServer {
    /// Creates the listening socket at `path` (see `init(path:eventNames:options:log:)` for the rules).
    /// - Returns: the fd and the (st_dev, st_ino) of the socket file.
    static func bindListening(path: String, options: Options) throws -> (Int32, (dev: UInt64, ino: UInt64)) {
        let length = path.utf8.count
        guard length > 0 else {
            throw EventServerError(.system(errno: EINVAL), subject: path, reason: "empty socket path")
        }
        guard length <= EventSocketPath.maximumLength else {
            throw EventServerError(.pathTooLong, subject: path,
                                   reason: "socket path is \(length) bytes; a Unix socket address holds at most \(EventSocketPath.maximumLength)")
        }
        func fail(_ error: Errno, _ what: String) -> EventServerError {
            EventServerError(.system(errno: error.code), subject: path, reason: "\(what): \(error.description)")
        }
        do {
            try makeParentDirectories(of: path)
        } catch let error as Errno {
            throw fail(error, "cannot create the socket's directory")
        }

        do {
            if let st = try Syscalls.lstat(path) {
                guard st.st_mode & S_IFMT == S_IFSOCK else {
                    throw EventServerError(.notASocket, subject: path, reason: "exists and is not a socket; refusing to replace it")
                }
                do {
                    let fd = try Syscalls.connect(path: path)
                    Syscalls.close(fd)
                    throw EventServerError(.inUse, subject: path, reason: "another winkd is listening")
                } catch let error as Errno {
                    switch error.code {
                    case ECONNREFUSED:
                        try Syscalls.unlink(path)  // stale: left by a daemon that died without unlinking
                    case ENOENT:
                        break
                    case EAGAIN:
                        throw EventServerError(.inUse, subject: path, reason: "another winkd is listening (backlog full)")
                    default:
                        throw fail(error, "cannot check the existing socket")
                    }
                }
            }
        } catch let error as Errno {
            throw fail(error, "cannot inspect the existing socket")
        }

        let fd: Int32
        do {
            fd = try Syscalls.bindListen(path: path, mode: options.mode & 0o777, backlog: options.backlog)
        } catch let error as Errno {
            if error.code == EADDRINUSE {
                throw EventServerError(.inUse, subject: path, reason: "another winkd is listening")
            }
            throw fail(error, "cannot bind")
        }
        guard let st = try? Syscalls.lstat(path) else {
            Syscalls.close(fd)
            throw EventServerError(.system(errno: ENOENT), subject: path, reason: "socket file vanished right after bind")
        }
        return (fd, (UInt64(st.st_dev), UInt64(st.st_ino)))
    }

    /// mkdir -p of the path's parent, creating missing directories with mode 0700.
    private static func makeParentDirectories(of path: String) throws {
        var components = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        components.removeLast()
        var current = path.hasPrefix("/") ? "" : "."
        for component in components {
            current += "/" + component
            if try Syscalls.lstat(current) == nil { try Syscalls.mkdir(current, mode: 0o700) }
        }
    }
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
    /// - Parameter firstDescriptor: where the passed descriptors start; 3 except in tests.
    /// - Throws: `EventServerError` `.notASocket` when descriptors were passed but none is a listening Unix
    ///   stream socket (a unit file mistake, e.g. `ListenDatagram=`), `.system(errno: EINVAL)` when the
    ///   variables are malformed.
    public static func listeningSocket(environment: [String: String] = ProcessInfo.processInfo.environment,
                                       processID: Int32 = getpid(),
                                       firstDescriptor: Int32 = SocketActivation.firstDescriptor) throws -> Int32? {
        guard let pidText = environment["LISTEN_PID"], let countText = environment["LISTEN_FDS"] else { return nil }
        guard let pid = Int32(pidText), let count = Int32(countText), count >= 0, count < 4096 else {
            throw EventServerError(.system(errno: EINVAL), subject: "LISTEN_FDS",
                                   reason: "malformed LISTEN_PID='\(pidText)' LISTEN_FDS='\(countText)'")
        }
        guard pid == processID, count > 0 else { return nil }
        var found: Int32?
        for fd in firstDescriptor..<(firstDescriptor + count) {
            if (try? Syscalls.isListeningUnixStream(fd)) == true {
                found = fd
                break
            }
        }
        guard let found else {
            throw EventServerError(.notASocket, subject: "fd \(firstDescriptor)",
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
