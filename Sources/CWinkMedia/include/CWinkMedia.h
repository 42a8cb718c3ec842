// CWinkMedia: recorded video through FFmpeg (libavformat, libavcodec, libswscale, set up as OpenCV 4.6's
// FFmpeg backend sets them up, so the frames and timestamps are VideoCapture's) and still images through
// OpenCV's imread in the WinkCodecs plugin (loaded on first use, see WinkCodecs.h), decoded straight into
// caller-owned planes.
//
// Planes: grey is `width` x `height` bytes (stride = width); BGR is `width` x `height` x 3 bytes
// (stride = 3 x width); origin top-left. No C++ exception crosses this header.
// Thread-safety: a wm_video is used by one thread at a time; wm_image_* functions are thread-safe.
#ifndef CWINKMEDIA_H
#define CWINKMEDIA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum wm_status {
    WM_OK = 0,
    WM_END = 1,            // no more frames
    WM_MISSING = 2,        // the file does not exist
    WM_UNREADABLE = 3,     // it exists but cannot be read (permissions, a directory)
    WM_NOT_MEDIA = 4,      // it was read but is not a video or image OpenCV can decode
    WM_BAD_ARGUMENT = 5,
    WM_INTERNAL = 6,
} wm_status;

typedef struct wm_video wm_video;

/// Opens a recorded video (the first video stream of any container and codec FFmpeg reads; a regular file)
/// and decodes its first frame to prove it decodes. Every frame comes at the first frame's size (a stream
/// whose size changes part way is rescaled, as VideoCapture does). Frames come upright: a display-matrix
/// rotation of 90, 180 or 270 degrees is applied as FFmpeg's own tools apply it (`ffmpeg` autorotate).
/// OpenCV 4.6's CAP_PROP_ORIENTATION_AUTO agrees for 180 degrees but turns 90 and 270 the wrong way
/// (opencv/opencv#22088, fixed in 4.7), so for those the frames differ from Debian's VideoCapture.
/// On failure, a one-line reason (without the path) goes into `message`.
wm_status wm_video_open(const char *path, wm_video **out, char *message, size_t message_len);
void wm_video_close(wm_video *video);
/// Frame size in pixels and the container's nominal frame rate (0 if unknown).
void wm_video_info(const wm_video *video, int *width, int *height, double *fps);
/// The number of frames the video holds, as its container says (the stream's frame count, else its
/// duration times the nominal rate), or 0 when it does not say: an estimate for progress, not a promise.
int64_t wm_video_expected_frames(const wm_video *video);

/// Decodes the next frame. Writes its presentation time in milliseconds into `*time_ms`: the frame's
/// best-effort timestamp less the stream's start time (VideoCapture's CAP_PROP_POS_MSEC), or the frame
/// count over the nominal rate for a stream without timestamps. Damaged packets are skipped. `gray` receives width x height bytes; `bgr`, if not NULL,
/// width x height x 3. Returns WM_END after the last frame.
wm_status wm_video_read(wm_video *video, uint8_t *gray, uint8_t *bgr, double *time_ms);

/// Reads the size of a still image (any format imread decodes). On failure `message` says why; WM_INTERNAL
/// when the WinkCodecs plugin cannot be loaded.
wm_status wm_image_probe(const char *path, int *width, int *height, char *message, size_t message_len);
/// Decodes a still image into grey (and BGR if not NULL) planes of the size wm_image_probe gave.
wm_status wm_image_read(const char *path, int width, int height, uint8_t *gray, uint8_t *bgr);

/// Resamples a grey plane (`width` x `height`, stride = width) into `out` (`out_width` x `out_height`)
/// with OpenCV `warpAffine` (bilinear, border replicated): rotation by `degrees` (counter-clockwise in the
/// image, as cv::getRotationMatrix2D) about the image centre, uniform `scale`, and a horizontal flip first
/// when `flip` is non-zero. The result is centred in `out`. Used to derive test variants from recordings.
wm_status wm_warp_gray(const uint8_t *gray, int width, int height, double degrees, double scale, int flip,
                       uint8_t *out, int out_width, int out_height);

#ifdef __cplusplus
}
#endif
#endif
