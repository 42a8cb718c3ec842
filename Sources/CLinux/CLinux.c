#include "CLinux.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

const unsigned long CLinux_VIDIOC_QUERYCAP = VIDIOC_QUERYCAP;
const unsigned long CLinux_VIDIOC_ENUM_FMT = VIDIOC_ENUM_FMT;
const unsigned long CLinux_VIDIOC_ENUM_FRAMESIZES = VIDIOC_ENUM_FRAMESIZES;
const unsigned long CLinux_VIDIOC_ENUM_FRAMEINTERVALS = VIDIOC_ENUM_FRAMEINTERVALS;
const unsigned long CLinux_VIDIOC_S_FMT = VIDIOC_S_FMT;
const unsigned long CLinux_VIDIOC_S_PARM = VIDIOC_S_PARM;
const unsigned long CLinux_VIDIOC_REQBUFS = VIDIOC_REQBUFS;
const unsigned long CLinux_VIDIOC_QUERYBUF = VIDIOC_QUERYBUF;
const unsigned long CLinux_VIDIOC_QBUF = VIDIOC_QBUF;
const unsigned long CLinux_VIDIOC_DQBUF = VIDIOC_DQBUF;
const unsigned long CLinux_VIDIOC_STREAMON = VIDIOC_STREAMON;
const unsigned long CLinux_VIDIOC_STREAMOFF = VIDIOC_STREAMOFF;

int CLinux_v4l2_open(const char *path, int flags) {
    // libv4l2 prints its own lines ("libv4l2: error getting capabilities: Inappropriate ioctl for device")
    // when what it opens is not a V4L2 device (/dev/null, a file): asked first with a plain VIDIOC_QUERYCAP,
    // such a path fails with that ioctl's errno (ENOTTY) and winkd's one line says what is wrong.
    int fd;
    do {
        fd = open(path, flags);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return -1;
    struct v4l2_capability cap;
    int r;
    do {
        r = ioctl(fd, VIDIOC_QUERYCAP, &cap);
    } while (r < 0 && errno == EINTR);
    if (r < 0 || v4l2_fd_open(fd, 0) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int CLinux_v4l2_ioctl(int fd, unsigned long request, void *argument) { return v4l2_ioctl(fd, request, argument); }
