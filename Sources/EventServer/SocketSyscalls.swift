import CWinkSocket
import Foundation
import WinkCore
#if canImport(Glibc)
import Glibc
#endif

/// The one funnel for the socket system calls of the event server, its client and the systemd notifier
/// (STYLE.md "One funnel for syscalls", after swift-system's `Syscalls.swift`), so a test can put a fake
/// where the calls go. Each method is one call (or the few a socket helper makes, e.g. bind and listen)
/// and throws the `Errno` it left; every call but `close` and `poll` is retried on `EINTR`.
///
/// Descriptors are plain `Int32`s owned by the caller. The real implementation is `LinuxSocketSyscalls`;
/// implementations must be safe to call from any thread (the server thread and publishers share one).
public protocol SocketSyscalls: Sendable {
    /// A non-blocking, close-on-exec `AF_UNIX` stream socket bound to `path` and listening with `backlog`;
    /// the file gets the permission bits `mode` at bind time (the umask is set around bind: process-wide).
    /// - Returns: the listening descriptor.
    func bindListen(path: String, mode: UInt32, backlog: Int32) throws(Errno) -> Int32
    /// A blocking, close-on-exec `AF_UNIX` stream socket connected to `path` (`ENOENT`: no such file,
    /// `ECONNREFUSED`: nobody listens). - Returns: the connected descriptor.
    func connect(path: String) throws(Errno) -> Int32
    /// `accept4(2)`, the new descriptor non-blocking and close-on-exec; nil when nobody waits (`EAGAIN`).
    func accept(_ fd: Int32) throws(Errno) -> Int32?
    /// `send(2)` with `MSG_NOSIGNAL | MSG_DONTWAIT`: bytes sent, 0 when the socket buffer is full
    /// (`EAGAIN`). A closed peer gives `EPIPE`, never `SIGPIPE`.
    func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int
    /// `setsockopt(2)` `SO_SNDBUF` to `bytes` (socket(7): the kernel doubles it for its own bookkeeping).
    func setSendBufferSize(_ fd: Int32, bytes: Int32) throws(Errno)
    /// `read(2)` into `buffer`: bytes read, 0 at end of file, nil when nothing is available (`EAGAIN`).
    func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int?
    /// `write(2)` of `bytes` (the server's wake pipe): bytes written.
    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int
    /// `poll(2)`, waiting at most `timeoutMilliseconds` (-1: no limit): the number of ready descriptors, 0 on
    /// timeout or when a signal interrupted the wait (`EINTR` is not retried, so callers re-check their
    /// deadline and stop flags).
    func poll(_ fds: inout [pollfd], timeoutMilliseconds: Int32) throws(Errno) -> Int
    /// `close(2)`, never retried (on Linux the descriptor is released even when it fails with `EINTR`).
    func close(_ fd: Int32)
    /// `shutdown(2)` with `SHUT_WR`: nothing more will be sent; reading goes on.
    func shutDownSending(_ fd: Int32) throws(Errno)
    /// `pipe2(2)` with `O_NONBLOCK | O_CLOEXEC`. - Returns: (read end, write end).
    func pipe() throws(Errno) -> (Int32, Int32)
    /// The peer's pid, uid and gid (`SO_PEERCRED`, unix(7)); nil when they cannot be read.
    func peerCredentials(_ fd: Int32) -> PeerCredentials?
    /// Whether `fd` is a listening `AF_UNIX` stream socket (`SO_DOMAIN`, `SO_TYPE`, `SO_ACCEPTCONN`).
    func isListeningUnixStream(_ fd: Int32) throws(Errno) -> Bool
    /// Sets or clears `O_NONBLOCK` and sets `FD_CLOEXEC` (fcntl(2)).
    func setNonblockingCloexec(_ fd: Int32, _ nonblocking: Bool) throws(Errno)
    /// The path an `AF_UNIX` socket is bound to (getsockname(2)); nil when unnamed or abstract.
    func socketPath(_ fd: Int32) throws(Errno) -> String?
    /// Sends `payload` as one datagram from a new `AF_UNIX` `SOCK_DGRAM` socket to the address whose
    /// `sun_path` bytes are `address` (a path with its NUL, or a NUL and an abstract name), with
    /// `MSG_DONTWAIT | MSG_NOSIGNAL`, then closes the socket (sd_notify(3)). - Returns: bytes sent.
    func sendDatagram(_ payload: [UInt8], toAddress address: [UInt8]) throws(Errno) -> Int

    // The socket file and its directories.

    /// `lstat(2)`; nil when the path does not exist.
    func lstat(_ path: String) throws(Errno) -> stat?
    /// `chmod(2)` to the permission bits `mode`.
    func chmod(_ path: String, mode: UInt32) throws(Errno)
    /// `realpath(3)`: the absolute path with every symbolic link resolved.
    func realpath(_ path: String) throws(Errno) -> String
    /// `unlink(2)`; a path that does not exist is not an error.
    func unlink(_ path: String) throws(Errno)
    /// `mkdir(2)` with `mode`; a path that exists is not an error.
    func mkdir(_ path: String, mode: UInt32) throws(Errno)
}

/// The number of path bytes a `sockaddr_un.sun_path` holds, including the terminating NUL (108 on Linux).
let sunPathCapacity = Int(cws_sun_path_capacity())

/// Seconds on `CLOCK_MONOTONIC`.
func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// `SocketSyscalls` on Glibc and the `CWinkSocket` helpers. Stateless; safe to share between threads.
public struct LinuxSocketSyscalls: SocketSyscalls {
    /// Glibc's and CWinkSocket's calls.
    public init() {}

    /// `cws_bind_listen`. - Throws: its `Errno` (`EADDRINUSE`, `ENAMETOOLONG`, ...).
    public func bindListen(path: String, mode: UInt32, backlog: Int32) throws(Errno) -> Int32 {
        try valueOrErrno(retryOnInterrupt: true) { cws_bind_listen(path, mode_t(mode), backlog) }
    }

    /// `cws_connect`. - Throws: its `Errno` (`ENOENT`, `ECONNREFUSED`, ...).
    public func connect(path: String) throws(Errno) -> Int32 {
        try valueOrErrno(retryOnInterrupt: true) { cws_connect(path) }
    }

    /// `cws_accept_nonblocking`; nil on `EAGAIN`. - Throws: any other `Errno`.
    public func accept(_ fd: Int32) throws(Errno) -> Int32? {
        do {
            return try valueOrErrno(retryOnInterrupt: true) { cws_accept_nonblocking(fd) }
        } catch where error.wouldBlock {
            return nil
        }
    }

    /// `cws_send_nosignal`; 0 for empty `bytes` or on `EAGAIN`. - Throws: any other `Errno` (`EPIPE`).
    public func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return 0 }
        do {
            return try valueOrErrno(retryOnInterrupt: true) { cws_send_nosignal(fd, base, bytes.count) }
        } catch where error.wouldBlock {
            return 0
        }
    }

    /// `setsockopt(SO_SNDBUF)`. - Throws: its `Errno`.
    public func setSendBufferSize(_ fd: Int32, bytes: Int32) throws(Errno) {
        var value = bytes
        _ = try valueOrErrno(retryOnInterrupt: true) {
            Glibc.setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &value, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    /// `read(2)`; nil on `EAGAIN`. - Throws: any other `Errno`.
    public func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int? {
        do {
            return try valueOrErrno(retryOnInterrupt: true) { Glibc.read(fd, buffer.baseAddress, buffer.count) }
        } catch where error.wouldBlock {
            return nil
        }
    }

    /// `write(2)`. - Throws: its `Errno` (`EAGAIN` included).
    public func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
        try valueOrErrno(retryOnInterrupt: true) { Glibc.write(fd, bytes.baseAddress, bytes.count) }
    }

    /// `poll(2)`; 0 on `EINTR`. - Throws: any other `Errno`.
    public func poll(_ fds: inout [pollfd], timeoutMilliseconds: Int32) throws(Errno) -> Int {
        do {
            return Int(try fds.withUnsafeMutableBufferPointer { (buffer) throws(Errno) in
                try valueOrErrno(retryOnInterrupt: false) {
                    Glibc.poll(buffer.baseAddress, nfds_t(buffer.count), timeoutMilliseconds)
                }
            })
        } catch where error.isInterrupted {
            return 0
        }
    }

    /// `close(2)`, not retried; its result is ignored.
    public func close(_ fd: Int32) {
        _ = Glibc.close(fd)  // close(2): never retried on EINTR on Linux
    }

    /// `shutdown(fd, SHUT_WR)`. - Throws: its `Errno`.
    public func shutDownSending(_ fd: Int32) throws(Errno) {
        _ = try valueOrErrno(retryOnInterrupt: true) { Glibc.shutdown(fd, Int32(SHUT_WR)) }
    }

    /// `cws_pipe_nonblocking`. - Returns: (read end, write end). - Throws: its `Errno`.
    public func pipe() throws(Errno) -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        _ = try valueOrErrno(retryOnInterrupt: true) { cws_pipe_nonblocking(&fds) }
        return (fds[0], fds[1])
    }

    /// `cws_peer_credentials`; nil when it fails.
    public func peerCredentials(_ fd: Int32) -> PeerCredentials? {
        var pid: pid_t = 0
        var uid: uid_t = 0
        var gid: gid_t = 0
        guard cws_peer_credentials(fd, &pid, &uid, &gid) == 0 else { return nil }
        return PeerCredentials(pid: pid, uid: uid, gid: gid)
    }

    /// `cws_is_listening_unix_stream`. - Throws: its `Errno` (`EBADF` for a descriptor not open).
    public func isListeningUnixStream(_ fd: Int32) throws(Errno) -> Bool {
        try valueOrErrno(retryOnInterrupt: true) { cws_is_listening_unix_stream(fd) } == 1
    }

    /// `cws_set_nonblocking_cloexec`. - Throws: its `Errno`.
    public func setNonblockingCloexec(_ fd: Int32, _ nonblocking: Bool) throws(Errno) {
        _ = try valueOrErrno(retryOnInterrupt: true) { cws_set_nonblocking_cloexec(fd, nonblocking ? 1 : 0) }
    }

    /// `cws_socket_path`; nil for an unnamed or abstract socket. - Throws: its `Errno`.
    public func socketPath(_ fd: Int32) throws(Errno) -> String? {
        var buffer = [CChar](repeating: 0, count: sunPathCapacity + 1)
        let length = try valueOrErrno(retryOnInterrupt: true) { cws_socket_path(fd, &buffer, buffer.count) }
        return length > 0 ? String(cString: buffer) : nil
    }

    /// One datagram to `address` (at most `sun_path`'s 108 bytes) from a new close-on-exec socket, closed after.
    /// - Throws: `Errno` `ENAMETOOLONG` for a longer address, else that of `socket(2)` or `sendto(2)`.
    public func sendDatagram(_ payload: [UInt8], toAddress address: [UInt8]) throws(Errno) -> Int {
        var storage = sockaddr_un()
        guard address.count <= MemoryLayout.size(ofValue: storage.sun_path) else { throw Errno(code: ENAMETOOLONG) }
        storage.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &storage.sun_path) { $0.copyBytes(from: address) }
        let length = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)! + address.count
        let fd = try valueOrErrno(retryOnInterrupt: true) {
            socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        defer { close(fd) }
        return try valueOrErrno(retryOnInterrupt: true) {
            withUnsafePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                    payload.withUnsafeBytes { bytes in
                        sendto(fd, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL),
                               socketAddress, socklen_t(length))
                    }
                }
            }
        }
    }

    /// `lstat(2)`; nil on `ENOENT`. - Throws: any other `Errno`.
    public func lstat(_ path: String) throws(Errno) -> stat? {
        var st = stat()
        do {
            _ = try valueOrErrno(retryOnInterrupt: true) { Glibc.lstat(path, &st) }
            return st
        } catch where error.code == ENOENT {
            return nil
        }
    }

    /// `chmod(2)`. - Throws: its `Errno`.
    public func chmod(_ path: String, mode: UInt32) throws(Errno) {
        _ = try valueOrErrno(retryOnInterrupt: true) { Glibc.chmod(path, mode_t(mode)) }
    }

    /// `realpath(3)` (not retried on `EINTR`). - Throws: its `Errno`.
    public func realpath(_ path: String) throws(Errno) -> String {
        guard let resolved = Glibc.realpath(path, nil) else { throw Errno.current }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `unlink(2)`; `ENOENT` is not an error. - Throws: any other `Errno`.
    public func unlink(_ path: String) throws(Errno) {
        do {
            _ = try valueOrErrno(retryOnInterrupt: true) { Glibc.unlink(path) }
        } catch where error.code == ENOENT {}
    }

    /// `mkdir(2)`; `EEXIST` is not an error (whatever the existing file is). - Throws: any other `Errno`.
    public func mkdir(_ path: String, mode: UInt32) throws(Errno) {
        do {
            _ = try valueOrErrno(retryOnInterrupt: true) { Glibc.mkdir(path, mode_t(mode)) }
        } catch where error.code == EEXIST {}
    }
}

/// The process, user and group ids of a connected client, read with `SO_PEERCRED` (unix(7)) on accept.
public struct PeerCredentials: Sendable, Equatable, CustomStringConvertible {
    /// The peer's process id.
    public var pid: Int32
    /// The peer's effective user id.
    public var uid: UInt32
    /// The peer's effective group id.
    public var gid: UInt32

    /// "pid P, uid U, gid G".
    public var description: String { "pid \(pid), uid \(uid), gid \(gid)" }
}
