#include "CLinux.h"

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

int CLinux_v4l2_open(const char *path, int flags) { return v4l2_open(path, flags); }

int CLinux_v4l2_ioctl(int fd, unsigned long request, void *argument) { return v4l2_ioctl(fd, request, argument); }
