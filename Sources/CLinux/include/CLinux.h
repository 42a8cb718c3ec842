// CLinux: V4L2 ioctl request numbers and constants for Swift (the VIDIOC_* macros do not import),
// libv4l2 entry points, with struct-size checks. Only the Capture module imports this target.
#ifndef CLINUX_H
#define CLINUX_H

#include <linux/videodev2.h>
#include <libv4l2.h>
#include <stdint.h>

/// VIDIOC_QUERYCAP: query device capabilities (struct v4l2_capability).
extern const unsigned long CLinux_VIDIOC_QUERYCAP;
/// VIDIOC_ENUM_FMT: enumerate pixel formats (struct v4l2_fmtdesc).
extern const unsigned long CLinux_VIDIOC_ENUM_FMT;
/// VIDIOC_ENUM_FRAMESIZES: enumerate frame sizes for a format (struct v4l2_frmsizeenum).
extern const unsigned long CLinux_VIDIOC_ENUM_FRAMESIZES;
/// VIDIOC_ENUM_FRAMEINTERVALS: enumerate frame intervals (struct v4l2_frmivalenum).
extern const unsigned long CLinux_VIDIOC_ENUM_FRAMEINTERVALS;
/// VIDIOC_S_FMT: set the format (struct v4l2_format).
extern const unsigned long CLinux_VIDIOC_S_FMT;
/// VIDIOC_S_PARM: set the streaming parameters, the frame interval (struct v4l2_streamparm).
extern const unsigned long CLinux_VIDIOC_S_PARM;
/// VIDIOC_REQBUFS, VIDIOC_QUERYBUF, VIDIOC_QBUF, VIDIOC_DQBUF: the mmap buffer queue.
extern const unsigned long CLinux_VIDIOC_REQBUFS;
extern const unsigned long CLinux_VIDIOC_QUERYBUF;
extern const unsigned long CLinux_VIDIOC_QBUF;
extern const unsigned long CLinux_VIDIOC_DQBUF;
/// VIDIOC_STREAMON / VIDIOC_STREAMOFF: start and stop streaming (an int buffer type).
extern const unsigned long CLinux_VIDIOC_STREAMON;
extern const unsigned long CLinux_VIDIOC_STREAMOFF;

/// v4l2_open(3) without the variadic mode argument (variadic C functions do not import into Swift): open(2),
/// then a plain VIDIOC_QUERYCAP (a path that is not a V4L2 device fails with its errno, ENOTTY, before
/// libv4l2 can print its own error lines), then v4l2_fd_open(3). Open and ioctl are retried on EINTR.
/// Returns the descriptor, or -1 with errno set (the descriptor closed).
int CLinux_v4l2_open(const char *path, int flags);
/// v4l2_ioctl(3) with a pointer argument (variadic C functions do not import into Swift).
/// Returns 0 (or a non-negative value), or -1 with errno set.
int CLinux_v4l2_ioctl(int fd, unsigned long request, void *argument);

_Static_assert(sizeof(struct v4l2_capability) == 104, "struct v4l2_capability layout");
_Static_assert(sizeof(struct v4l2_fmtdesc) == 64, "struct v4l2_fmtdesc layout");
_Static_assert(sizeof(struct v4l2_format) == 208, "struct v4l2_format layout");
_Static_assert(sizeof(struct v4l2_buffer) == 88, "struct v4l2_buffer layout (64-bit)");
_Static_assert(sizeof(struct v4l2_frmsizeenum) == 44, "struct v4l2_frmsizeenum layout");
_Static_assert(sizeof(struct v4l2_frmivalenum) == 52, "struct v4l2_frmivalenum layout");
_Static_assert(sizeof(struct v4l2_requestbuffers) == 20, "struct v4l2_requestbuffers layout");
_Static_assert(sizeof(struct v4l2_streamparm) == 204, "struct v4l2_streamparm layout");

#endif
