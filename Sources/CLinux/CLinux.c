#include "CLinux.h"

const unsigned long CLinux_VIDIOC_QUERYCAP = VIDIOC_QUERYCAP;
const unsigned long CLinux_VIDIOC_ENUM_FMT = VIDIOC_ENUM_FMT;
const unsigned long CLinux_VIDIOC_ENUM_FRAMESIZES = VIDIOC_ENUM_FRAMESIZES;
const unsigned long CLinux_VIDIOC_ENUM_FRAMEINTERVALS = VIDIOC_ENUM_FRAMEINTERVALS;
const unsigned long CLinux_VIDIOC_G_FMT = VIDIOC_G_FMT;
const unsigned long CLinux_VIDIOC_S_FMT = VIDIOC_S_FMT;
const unsigned long CLinux_VIDIOC_TRY_FMT = VIDIOC_TRY_FMT;
const unsigned long CLinux_VIDIOC_S_PARM = VIDIOC_S_PARM;
const unsigned long CLinux_VIDIOC_G_PARM = VIDIOC_G_PARM;
const unsigned long CLinux_VIDIOC_REQBUFS = VIDIOC_REQBUFS;
const unsigned long CLinux_VIDIOC_QUERYBUF = VIDIOC_QUERYBUF;
const unsigned long CLinux_VIDIOC_QBUF = VIDIOC_QBUF;
const unsigned long CLinux_VIDIOC_DQBUF = VIDIOC_DQBUF;
const unsigned long CLinux_VIDIOC_STREAMON = VIDIOC_STREAMON;
const unsigned long CLinux_VIDIOC_STREAMOFF = VIDIOC_STREAMOFF;

const uint32_t CLinux_V4L2_PIX_FMT_GREY = V4L2_PIX_FMT_GREY;
const uint32_t CLinux_V4L2_PIX_FMT_YUYV = V4L2_PIX_FMT_YUYV;
const uint32_t CLinux_V4L2_PIX_FMT_MJPEG = V4L2_PIX_FMT_MJPEG;
const uint32_t CLinux_V4L2_PIX_FMT_YUV420 = V4L2_PIX_FMT_YUV420;
const uint32_t CLinux_V4L2_PIX_FMT_BGR24 = V4L2_PIX_FMT_BGR24;
const uint32_t CLinux_V4L2_PIX_FMT_RGB24 = V4L2_PIX_FMT_RGB24;

int CLinux_v4l2_open(const char *path, int flags) { return v4l2_open(path, flags); }

int CLinux_v4l2_ioctl(int fd, unsigned long request, void *argument) { return v4l2_ioctl(fd, request, argument); }
