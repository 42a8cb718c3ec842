// CWinkSocket: the Unix-socket helpers the EventServer module needs and Glibc's Swift module hides or makes
// awkward (struct ucred, accept4, SO_PEERCRED, sockaddr_un, variadic fcntl, MSG_NOSIGNAL).
// Only the EventServer module imports this target. Every function returns -1 with errno set on failure
// and is safe to call from any thread, except cws_bind_listen (see there).
#ifndef CWINKSOCKET_H
#define CWINKSOCKET_H

#include <stddef.h>
#include <sys/types.h>

/// The peer's process, user and group ids of a connected Unix socket (getsockopt SO_PEERCRED, unix(7)).
/// Returns 0 on success, -1 with errno set.
int cws_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid);

/// accept4(2) with SOCK_NONBLOCK | SOCK_CLOEXEC. Returns the new fd, or -1 with errno set.
int cws_accept_nonblocking(int fd);

/// The number of path bytes a `sockaddr_un.sun_path` holds, including the terminating NUL (108 on Linux).
size_t cws_sun_path_capacity(void);

/// Creates a SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC AF_UNIX socket, binds it to `path` and listens with
/// `backlog`. The socket file is created with permissions `mode` (e.g. 0600): the process umask is set to
/// `~mode & 0777` around bind(2) and restored, so the file never exists with wider permissions. umask is
/// process-wide: call this before other threads create files. Returns the fd, or -1 with errno set
/// (ENAMETOOLONG when `path` does not fit in sun_path).
int cws_bind_listen(const char *path, mode_t mode, int backlog);

/// A blocking AF_UNIX SOCK_STREAM | SOCK_CLOEXEC connect(2) to `path`. Returns the fd, or -1 with errno set
/// (ENOENT: no such file; ECONNREFUSED: a socket file nobody listens on; ENAMETOOLONG: path too long).
int cws_connect(const char *path);

/// Whether `fd` is a listening AF_UNIX SOCK_STREAM socket (SO_DOMAIN, SO_TYPE, SO_ACCEPTCONN; socket(7)).
/// Returns 1 if so, 0 if not, -1 with errno set when `fd` is not open.
int cws_is_listening_unix_stream(int fd);

/// Sets or clears O_NONBLOCK and sets FD_CLOEXEC (fcntl(2)). Returns 0, or -1 with errno set.
int cws_set_nonblocking_cloexec(int fd, int nonblocking);

/// send(2) with MSG_NOSIGNAL | MSG_DONTWAIT: a closed peer gives EPIPE, never SIGPIPE.
/// Returns the bytes sent, or -1 with errno set (EAGAIN when the socket buffer is full).
ssize_t cws_send_nosignal(int fd, const void *bytes, size_t count);

/// The path a bound AF_UNIX socket has (getsockname(2)) into `buffer` (NUL-terminated). Returns the path
/// length (0 for an unnamed or abstract socket), or -1 with errno set.
int cws_socket_path(int fd, char *buffer, size_t capacity);

/// pipe2(2) with O_NONBLOCK | O_CLOEXEC: fds[0] is the read end, fds[1] the write end. Returns 0, or -1.
int cws_pipe_nonblocking(int fds[2]);

#endif
