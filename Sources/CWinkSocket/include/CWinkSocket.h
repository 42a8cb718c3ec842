// CWinkSocket: the socket helpers Glibc's Swift module hides without _GNU_SOURCE (struct ucred,
// accept4, SO_PEERCRED). Only the EventServer module imports this target.
#ifndef CWINKSOCKET_H
#define CWINKSOCKET_H

#include <sys/types.h>

/// The peer's process, user and group ids of a connected Unix socket (getsockopt SO_PEERCRED, unix(7)).
/// Returns 0 on success, -1 with errno set.
int cws_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid);

/// accept4(2) with SOCK_NONBLOCK | SOCK_CLOEXEC. Returns the new fd, or -1 with errno set.
int cws_accept_nonblocking(int fd);

#endif
