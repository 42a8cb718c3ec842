// CVideoCaptureReference: OpenCV's own VideoCapture (FFmpeg backend), for tests only. CWinkMedia decodes
// recordings with FFmpeg directly (to keep OpenCV's codec libraries out of winkd); its tests hold it to
// VideoCapture's frames and timestamps through this target. Not linked into winkd or winkctl.
// Planes: grey, `width` x `height` bytes, origin top-left. Thread-safety: one thread per handle.
#ifndef CVIDEOCAPTUREREFERENCE_H
#define CVIDEOCAPTUREREFERENCE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// An open cv::VideoCapture and its last frame.
typedef struct vcr_video vcr_video;

/// cv::VideoCapture(path, CAP_FFMPEG); NULL if it does not open.
vcr_video *vcr_open(const char *path);
/// Releases the capture and frees the handle. NULL is ignored.
void vcr_close(vcr_video *video);
/// Reads the next frame into `gray` (COLOR_BGR2GRAY of VideoCapture's BGR frame, which must be
/// `width` x `height`) and its CAP_PROP_POS_MSEC. Returns 1 for a frame, 0 at the end, -1 for a size mismatch.
int vcr_read(vcr_video *video, uint8_t *gray, int width, int height, double *time_ms);

#ifdef __cplusplus
}
#endif
#endif
