// WinkCodecs: OpenCV's image and video file codecs (imgcodecs, videoio) behind a plugin that is loaded
// only when a still image, an overlay PNG or an output file is actually read or written.
//
// Why a plugin: Debian's libopencv_imgcodecs pulls in GDAL, GDCM, poppler, OpenEXR and about 100 more
// shared libraries, and libopencv_videoio GStreamer and FFmpeg on top; linked into winkd they cost about
// 55 MB of resident memory (measured with /proc/PID/smaps, issue 5) although the daemon decodes camera
// frames with libv4l2 and recordings with FFmpeg directly. `libWinkCodecs.so` is built by this package
// (product `WinkCodecs`) and found next to the running executable, or in `../lib/winkd/` beside it (the
// installed layout: /usr/local/bin/winkd and /usr/local/lib/winkd/libWinkCodecs.so), or at the path in
// the environment variable WINK_CODECS_PLUGIN.
//
// Images cross this interface as `cv::Mat *` passed as `void *` (both sides link the same libopencv_core).
// No C++ exception crosses it. Thread-safety: wink_codecs_load is thread-safe (loads once); the image
// functions are thread-safe; a video writer is used by one thread at a time.
#ifndef WINK_CODECS_H
#define WINK_CODECS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Bumped when the table below changes; the loader refuses a plugin of another version.
#define WINK_CODECS_API_VERSION 1

/// What a codec call did.
typedef enum wink_codecs_status {
    WINK_CODECS_OK = 0,
    WINK_CODECS_FAILED = 1,  // the codec refused the file (not decodable, cannot be written)
    WINK_CODECS_ERROR = 2,   // OpenCV threw (out of memory, codec missing); `message` says what
} wink_codecs_status;

/// The plugin's functions. `message` arguments receive a one-line reason (`message_len` bytes, terminated).
typedef struct wink_codecs_api {
    /// WINK_CODECS_API_VERSION of the plugin that filled the table.
    int version;
    /// cv::imread(path, flags) into the cv::Mat at `out_mat`; WINK_CODECS_FAILED when the result is empty.
    wink_codecs_status (*imread)(const char *path, int flags, void *out_mat, char *message, size_t message_len);
    /// cv::imwrite(path, *(const cv::Mat *)mat, params[0..<param_count]).
    wink_codecs_status (*imwrite)(const char *path, const void *mat, const int *params, int param_count,
                                  char *message, size_t message_len);
    /// cv::VideoWriter::open(path, CAP_FFMPEG, fourcc, fps, width x height, colour); NULL when it fails.
    void *(*video_writer_open)(const char *path, int fourcc, double fps, int width, int height, char *message,
                               size_t message_len);
    /// cv::VideoWriter::write of a BGR cv::Mat of the size given at open time.
    wink_codecs_status (*video_writer_write)(void *writer, const void *mat);
    /// Releases (finishes the file) and frees the writer.
    void (*video_writer_close)(void *writer);
} wink_codecs_api;

/// The plugin's one exported symbol: its table (static storage, never freed).
const wink_codecs_api *wink_codecs_api_v1(void);

/// Loads libWinkCodecs.so on first use and returns its table, or NULL with a one-line reason in
/// `message` (naming the places searched and dlopen's error). Later calls return the same result.
const wink_codecs_api *wink_codecs_load(char *message, size_t message_len);

/// Copies `text` into `message` (`message_len` bytes, always terminated) as one line: newlines, carriage
/// returns and tabs become spaces and trailing spaces are dropped (OpenCV's and libpng's texts end in, and
/// may hold, newlines; winkctl prints one line per problem). Nothing happens for a NULL `message` or a zero
/// `message_len`. Shared by the codec plugin and the overlay shim. Thread-safe.
void wink_one_line(char *message, size_t message_len, const char *text);

#ifdef __cplusplus
}
#endif
#endif
