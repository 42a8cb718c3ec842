// The WinkCodecs plugin (libWinkCodecs.so): OpenCV's imgcodecs and videoio behind the C table of
// WinkCodecs.h, loaded on demand by wink_codecs_load. No exception leaves this file.
#include "WinkCodecs.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/videoio.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

extern "C" {
#include <libavutil/log.h>
}
#pragma weak av_log_set_level  // see quietFFmpeg

namespace {

/// Copies `text` into `message` as one line (`wink_one_line`).
void say(char *message, size_t length, const std::string &text) { wink_one_line(message, length, text.c_str()); }

wink_codecs_status read_image(const char *path, int flags, void *out_mat, char *message, size_t message_len) {
    if (path == nullptr || out_mat == nullptr) return WINK_CODECS_ERROR;
    try {
        cv::Mat &out = *static_cast<cv::Mat *>(out_mat);
        out = cv::imread(path, flags);
        return out.empty() ? WINK_CODECS_FAILED : WINK_CODECS_OK;
    } catch (const std::exception &e) {
        say(message, message_len, std::string("OpenCV imread: ") + e.what());
        return WINK_CODECS_ERROR;
    } catch (...) {
        say(message, message_len, "OpenCV imread failed");
        return WINK_CODECS_ERROR;
    }
}

/// Writes all of `data` to `fd`; false with errno set when a write fails (ENOSPC, EIO, EDQUOT...).
bool writeAll(int fd, const unsigned char *data, size_t length) {
    while (length > 0) {
        ssize_t n = write(fd, data, length);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return false;
        if (n == 0) {
            errno = EIO;
            return false;
        }
        data += n;
        length -= static_cast<size_t>(n);
    }
    return true;
}

/// cv::imwrite's result, but with the writing's errors seen: cv::imwrite (4.6) writes through stdio and
/// ignores fflush/fclose failures (a PNG that fits stdio's buffer "succeeds" on a full disk) and libpng prints
/// its own "libpng error: Write Error" line. So the image is encoded in memory (cv::imencode, the same
/// encoders and parameters) and written here; a failed write or close returns WINK_CODECS_FAILED with the
/// system's reason ("No space left on device") and removes the incomplete file (if it is a regular file).
wink_codecs_status write_image(const char *path, const void *mat, const int *params, int param_count,
                               char *message, size_t message_len) {
    if (path == nullptr || mat == nullptr || param_count < 0) return WINK_CODECS_ERROR;
    std::vector<unsigned char> encoded;
    try {
        std::string p(path);
        const size_t dot = p.find_last_of('.'), slash = p.find_last_of('/');
        if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) {
            say(message, message_len, "no file extension to choose an image format by");
            return WINK_CODECS_FAILED;
        }
        std::vector<int> parameters(params, params + param_count);
        if (!cv::imencode(p.substr(dot), *static_cast<const cv::Mat *>(mat), encoded, parameters)) {
            say(message, message_len, "the encoder gave up");
            return WINK_CODECS_FAILED;
        }
    } catch (const std::exception &e) {
        say(message, message_len, std::string("OpenCV imencode: ") + e.what());
        return WINK_CODECS_ERROR;
    } catch (...) {
        say(message, message_len, "OpenCV imencode failed");
        return WINK_CODECS_ERROR;
    }
    const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOCTTY | O_CLOEXEC, 0666);
    if (fd < 0) {
        say(message, message_len, std::strerror(errno));
        return WINK_CODECS_FAILED;
    }
    bool ok = writeAll(fd, encoded.data(), encoded.size());
    int error = ok ? 0 : errno;
    if (close(fd) != 0 && ok) {
        ok = false;
        error = errno;
    }
    if (ok) return WINK_CODECS_OK;
    say(message, message_len, std::strerror(error));
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISREG(st.st_mode)) unlink(path);
    return WINK_CODECS_FAILED;
}

/// Sets FFmpeg's log level back to quiet after OpenCV's FFmpeg backend initialised itself: it sets it to
/// AV_LOG_ERROR (OpenCV 4.6 cap_ffmpeg_impl.hpp, InternalFFMpegRegister), which would let FFmpeg print its
/// own lines (e.g. "moov atom not found" when a written file is read back through CWinkMedia, which asked
/// for quiet) beside winkd's one line. libavutil comes with libopencv_videoio; the reference is weak so the
/// plugin does not need to link it itself.
void quietFFmpeg() {
    if (av_log_set_level != nullptr) av_log_set_level(AV_LOG_QUIET);
}

void *open_writer(const char *path, int fourcc, double fps, int width, int height, char *message,
                  size_t message_len) {
    if (path == nullptr) return nullptr;
    cv::VideoWriter *writer = nullptr;
    try {
        writer = new cv::VideoWriter();
        const bool opened = writer->open(path, cv::CAP_FFMPEG, fourcc, fps, cv::Size(width, height), true);
        quietFFmpeg();
        if (opened) return writer;
        say(message, message_len, "cannot open a video writer for this file");
    } catch (const std::exception &e) {
        say(message, message_len, std::string("cannot open a video writer: ") + e.what());
    } catch (...) {
        say(message, message_len, "cannot open a video writer");
    }
    delete writer;
    return nullptr;
}

wink_codecs_status write_frame(void *writer, const void *mat) {
    if (writer == nullptr || mat == nullptr) return WINK_CODECS_ERROR;
    try {
        static_cast<cv::VideoWriter *>(writer)->write(*static_cast<const cv::Mat *>(mat));
        return WINK_CODECS_OK;
    } catch (...) {
        return WINK_CODECS_ERROR;
    }
}

void close_writer(void *writer) {
    auto w = static_cast<cv::VideoWriter *>(writer);
    if (w == nullptr) return;
    try {
        w->release();
    } catch (...) {
    }
    delete w;
}

const wink_codecs_api table = {
    WINK_CODECS_API_VERSION, read_image, write_image, open_writer, write_frame, close_writer,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const wink_codecs_api *wink_codecs_api_v1(void) { return &table; }
