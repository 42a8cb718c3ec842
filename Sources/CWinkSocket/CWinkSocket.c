#include "CWinkSocket.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

_Static_assert(sizeof(((struct sockaddr_un *)0)->sun_path) == 108, "Linux sun_path is 108 bytes");

int cws_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid) {
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
    if (pid) *pid = cred.pid;
    if (uid) *uid = cred.uid;
    if (gid) *gid = cred.gid;
    return 0;
}

int cws_accept_nonblocking(int fd) { return accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC); }

size_t cws_sun_path_capacity(void) { return sizeof(((struct sockaddr_un *)0)->sun_path); }

static int fill_address(struct sockaddr_un *address, const char *path) {
    size_t length = strlen(path);
    if (length == 0 || length >= sizeof address->sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memset(address, 0, sizeof *address);
    address->sun_family = AF_UNIX;
    memcpy(address->sun_path, path, length + 1);
    return 0;
}

int cws_bind_listen(const char *path, mode_t mode, int backlog) {
    struct sockaddr_un address;
    if (fill_address(&address, path) != 0) return -1;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    mode_t previous = umask(~mode & 0777);
    int status = bind(fd, (struct sockaddr *)&address, sizeof address);
    int saved = errno;
    umask(previous);
    if (status != 0 || listen(fd, backlog) != 0) {
        if (status == 0) saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int cws_connect(const char *path) {
    struct sockaddr_un address;
    if (fill_address(&address, path) != 0) return -1;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int status;
    do {
        status = connect(fd, (struct sockaddr *)&address, sizeof address);
    } while (status != 0 && errno == EINTR);
    if (status != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int cws_is_listening_unix_stream(int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0) return -1;
    if (!S_ISSOCK(st.st_mode)) return 0;
    int value = 0;
    socklen_t len = sizeof value;
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &value, &len) != 0 || value != AF_UNIX) return 0;
    len = sizeof value;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &value, &len) != 0 || value != SOCK_STREAM) return 0;
    len = sizeof value;
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &value, &len) != 0 || value != 1) return 0;
    return 1;
}

int cws_set_nonblocking_cloexec(int fd, int nonblocking) {
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0) return -1;
    flags = nonblocking ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK);
    if (fcntl(fd, F_SETFL, flags) != 0) return -1;
    int fdflags = fcntl(fd, F_GETFD);
    if (fdflags < 0) return -1;
    return fcntl(fd, F_SETFD, fdflags | FD_CLOEXEC);
}

ssize_t cws_send_nosignal(int fd, const void *bytes, size_t count) {
    ssize_t sent;
    do {
        sent = send(fd, bytes, count, MSG_NOSIGNAL | MSG_DONTWAIT);
    } while (sent < 0 && errno == EINTR);
    return sent;
}

int cws_socket_path(int fd, char *buffer, size_t capacity) {
    struct sockaddr_un address;
    socklen_t len = sizeof address;
    memset(&address, 0, sizeof address);
    if (getsockname(fd, (struct sockaddr *)&address, &len) != 0) return -1;
    if (address.sun_family != AF_UNIX || address.sun_path[0] == '\0') {
        if (capacity > 0) buffer[0] = '\0';
        return 0;
    }
    size_t length = strnlen(address.sun_path, sizeof address.sun_path);
    if (length + 1 > capacity) {
        errno = ERANGE;
        return -1;
    }
    memcpy(buffer, address.sun_path, length);
    buffer[length] = '\0';
    return (int)length;
}

int cws_pipe_nonblocking(int fds[2]) { return pipe2(fds, O_NONBLOCK | O_CLOEXEC); }
