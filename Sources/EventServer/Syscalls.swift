import CWinkSocket
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An `errno` value from a failed system call.
struct Errno: Error, Equatable {
    var code: Int32
    var description: String { String(cString: strerror(code)) }
    static var current: Errno { Errno(code: errno) }
}

/// The one funnel for the event socket's system calls (STYLE.md "One funnel for syscalls", after
/// swift-system's `Syscalls.swift`): each returns its value or throws `Errno`, retrying `EINTR`.
enum Syscalls {
    static var sunPathCapacity: Int { Int(cws_sun_path_capacity()) }

    private static func retrying<T: BinaryInteger>(_ call: () -> T) throws -> T {
        while true {
            let result = call()
            if result >= 0 { return result }
            if errno != EINTR { throw Errno.current }
        }
    }

    static func bindListen(path: String, mode: UInt32, backlog: Int32) throws -> Int32 {
        try retrying { cws_bind_listen(path, mode_t(mode), backlog) }
    }

    static func connect(path: String) throws -> Int32 {
        try retrying { cws_connect(path) }
    }

    /// `accept4` non-blocking; nil when no connection is waiting (EAGAIN).
    static func accept(_ fd: Int32) throws -> Int32? {
        do {
            return try retrying { cws_accept_nonblocking(fd) }
        } catch let error as Errno where error.code == EAGAIN || error.code == EWOULDBLOCK {
            return nil
        }
    }

    /// Bytes sent, 0 when the socket buffer is full (EAGAIN). Never raises SIGPIPE.
    static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws -> Int {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return 0 }
        let sent = cws_send_nosignal(fd, base, bytes.count)
        if sent >= 0 { return sent }
        if errno == EAGAIN || errno == EWOULDBLOCK { return 0 }
        throw Errno.current
    }

    /// Bytes read into `buffer`; 0 at end of file; nil when nothing is available (EAGAIN).
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws -> Int? {
        do {
            return try retrying { Glibc.read(fd, buffer.baseAddress, buffer.count) }
        } catch let error as Errno where error.code == EAGAIN || error.code == EWOULDBLOCK {
            return nil
        }
    }

    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)  // close(2): never retry on EINTR on Linux
    }

    /// poll(2); returns the number of ready descriptors, 0 on timeout or EINTR.
    static func poll(_ fds: inout [pollfd], timeoutMilliseconds: Int32) throws -> Int {
        let result = fds.withUnsafeMutableBufferPointer { Glibc.poll($0.baseAddress, nfds_t($0.count), timeoutMilliseconds) }
        if result >= 0 { return Int(result) }
        if errno == EINTR { return 0 }
        throw Errno.current
    }

    /// A non-blocking, close-on-exec pipe: (read end, write end).
    static func pipe() throws -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        _ = try retrying { cws_pipe_nonblocking(&fds) }
        return (fds[0], fds[1])
    }

    static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
        Glibc.write(fd, bytes.baseAddress, bytes.count)
    }

    /// lstat(2); nil when the path does not exist.
    static func lstat(_ path: String) throws -> stat? {
        var st = stat()
        if Glibc.lstat(path, &st) == 0 { return st }
        if errno == ENOENT { return nil }
        throw Errno.current
    }

    static func chmod(_ path: String, mode: UInt32) throws {
        if Glibc.chmod(path, mode_t(mode)) != 0 { throw Errno.current }
    }

    /// realpath(3): the absolute path with every symlink resolved.
    static func realpath(_ path: String) throws -> String {
        guard let resolved = Glibc.realpath(path, nil) else { throw Errno.current }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    static func unlink(_ path: String) throws {
        if Glibc.unlink(path) != 0 && errno != ENOENT { throw Errno.current }
    }

    static func mkdir(_ path: String, mode: UInt32) throws {
        if Glibc.mkdir(path, mode_t(mode)) != 0 && errno != EEXIST { throw Errno.current }
    }

    static func peerCredentials(_ fd: Int32) -> PeerCredentials? {
        var pid: pid_t = 0
        var uid: uid_t = 0
        var gid: gid_t = 0
        guard cws_peer_credentials(fd, &pid, &uid, &gid) == 0 else { return nil }
        return PeerCredentials(pid: pid, uid: uid, gid: gid)
    }

    static func isListeningUnixStream(_ fd: Int32) throws -> Bool {
        try retrying { cws_is_listening_unix_stream(fd) } == 1
    }

    static func setNonblockingCloexec(_ fd: Int32, _ nonblocking: Bool) throws {
        _ = try retrying { cws_set_nonblocking_cloexec(fd, nonblocking ? 1 : 0) }
    }

    /// The path an AF_UNIX socket is bound to; nil when unnamed.
    static func socketPath(_ fd: Int32) throws -> String? {
        var buffer = [CChar](repeating: 0, count: sunPathCapacity + 1)
        let length = try retrying { cws_socket_path(fd, &buffer, buffer.count) }
        return length > 0 ? String(cString: buffer) : nil
    }

    /// Seconds on CLOCK_MONOTONIC.
    static func monotonicSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// The process, user and group ids of a connected client, read with `SO_PEERCRED` (unix(7)) on accept.
public struct PeerCredentials: Sendable, Equatable, CustomStringConvertible {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32

    public var description: String { "pid \(pid), uid \(uid), gid \(gid)" }
}
