// CWinkMedia: see include/CWinkMedia.h. No exception leaves this file.
#include "CWinkMedia.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

struct wm_video {
    cv::VideoCapture capture;
    cv::Mat frame;       // decoder output (BGR), reused
    bool pending = false;  // `frame` holds the first frame, read by wm_video_open
    double pending_ms = 0;
    int width = 0, height = 0;
    double fps = 0;
};

namespace {

void write_message(char *message, size_t len, const std::string &text) {
    if (message && len) std::snprintf(message, len, "%s", text.c_str());
}

// Checks that `path` names a readable regular file; otherwise says why.
wm_status check_file(const char *path, char *message, size_t len) {
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR) {
            write_message(message, len, "no such file");
            return WM_MISSING;
        }
        write_message(message, len, std::string("cannot read: ") + std::strerror(errno));
        return WM_UNREADABLE;
    }
    if (S_ISDIR(st.st_mode)) {
        write_message(message, len, "is a directory");
        return WM_UNREADABLE;
    }
    if (access(path, R_OK) != 0) {
        write_message(message, len, std::string("cannot read: ") + std::strerror(errno));
        return WM_UNREADABLE;
    }
    if (st.st_size == 0) {
        write_message(message, len, "empty file, not a video or image");
        return WM_NOT_MEDIA;
    }
    return WM_OK;
}

// Converts a decoded frame of any channel count into the caller's planes.
void deliver(const cv::Mat &frame, uint8_t *gray, uint8_t *bgr) {
    cv::Mat g(frame.rows, frame.cols, CV_8UC1, gray);
    if (frame.channels() == 1) {
        frame.copyTo(g);
        if (bgr) {
            cv::Mat c(frame.rows, frame.cols, CV_8UC3, bgr);
            cv::cvtColor(frame, c, cv::COLOR_GRAY2BGR);
        }
        return;
    }
    const int code = frame.channels() == 4 ? cv::COLOR_BGRA2GRAY : cv::COLOR_BGR2GRAY;
    cv::cvtColor(frame, g, code);
    if (bgr) {
        cv::Mat c(frame.rows, frame.cols, CV_8UC3, bgr);
        if (frame.channels() == 4) cv::cvtColor(frame, c, cv::COLOR_BGRA2BGR);
        else frame.copyTo(c);
    }
}

}  // namespace

extern "C" {

wm_status wm_video_open(const char *path, wm_video **out, char *message, size_t message_len) {
    if (!path || !out) return WM_BAD_ARGUMENT;
    *out = nullptr;
    wm_status st = check_file(path, message, message_len);
    if (st != WM_OK) return st;
    // FFmpeg logs decoder complaints to stderr on its own; winkd reports one line itself. OpenCV reads this
    // variable when its FFmpeg backend first starts (-8 = AV_LOG_QUIET); a value set by the user wins.
    static const bool quiet = (setenv("OPENCV_FFMPEG_LOGLEVEL", "-8", 0), true);
    (void)quiet;
    try {
        auto v = new wm_video();
        if (!v->capture.open(path, cv::CAP_FFMPEG) || !v->capture.read(v->frame) || v->frame.empty()) {
            delete v;
            write_message(message, message_len, "not a video OpenCV can decode");
            return WM_NOT_MEDIA;
        }
        if (v->frame.depth() != CV_8U) {
            delete v;
            write_message(message, message_len, "unsupported pixel depth (only 8-bit video)");
            return WM_NOT_MEDIA;
        }
        v->pending = true;
        v->pending_ms = v->capture.get(cv::CAP_PROP_POS_MSEC);
        v->width = v->frame.cols;
        v->height = v->frame.rows;
        v->fps = v->capture.get(cv::CAP_PROP_FPS);
        *out = v;
        return WM_OK;
    } catch (const std::exception &e) {
        write_message(message, message_len, std::string("cannot decode: ") + e.what());
        return WM_NOT_MEDIA;
    } catch (...) {
        return WM_INTERNAL;
    }
}

void wm_video_close(wm_video *video) { delete video; }

void wm_video_info(const wm_video *video, int *width, int *height, double *fps) {
    if (!video) return;
    if (width) *width = video->width;
    if (height) *height = video->height;
    if (fps) *fps = video->fps > 0 && video->fps < 1000 ? video->fps : 0;
}

wm_status wm_video_read(wm_video *video, uint8_t *gray, uint8_t *bgr, double *time_ms) {
    if (!video || !gray) return WM_BAD_ARGUMENT;
    try {
        if (video->pending) {
            video->pending = false;
            if (time_ms) *time_ms = video->pending_ms;
        } else {
            if (!video->capture.read(video->frame) || video->frame.empty()) return WM_END;
            if (time_ms) *time_ms = video->capture.get(cv::CAP_PROP_POS_MSEC);
        }
        if (video->frame.cols != video->width || video->frame.rows != video->height) return WM_END;
        deliver(video->frame, gray, bgr);
        return WM_OK;
    } catch (...) {
        return WM_INTERNAL;
    }
}

wm_status wm_image_probe(const char *path, int *width, int *height, char *message, size_t message_len) {
    if (!path || !width || !height) return WM_BAD_ARGUMENT;
    wm_status st = check_file(path, message, message_len);
    if (st != WM_OK) return st;
    try {
        cv::Mat img = cv::imread(path, cv::IMREAD_COLOR);
        if (img.empty()) {
            write_message(message, message_len, "not an image OpenCV can decode");
            return WM_NOT_MEDIA;
        }
        *width = img.cols;
        *height = img.rows;
        return WM_OK;
    } catch (const std::exception &e) {
        write_message(message, message_len, std::string("cannot decode: ") + e.what());
        return WM_NOT_MEDIA;
    } catch (...) {
        return WM_INTERNAL;
    }
}

wm_status wm_image_read(const char *path, int width, int height, uint8_t *gray, uint8_t *bgr) {
    if (!path || !gray) return WM_BAD_ARGUMENT;
    try {
        cv::Mat img = cv::imread(path, cv::IMREAD_COLOR);
        if (img.empty()) return WM_NOT_MEDIA;
        if (img.cols != width || img.rows != height) return WM_BAD_ARGUMENT;
        deliver(img, gray, bgr);
        return WM_OK;
    } catch (...) {
        return WM_INTERNAL;
    }
}

wm_status wm_warp_gray(const uint8_t *gray, int width, int height, double degrees, double scale, int flip,
                       uint8_t *out, int out_width, int out_height) {
    if (!gray || !out || width <= 0 || height <= 0 || out_width <= 0 || out_height <= 0 || !(scale > 0))
        return WM_BAD_ARGUMENT;
    try {
        cv::Mat src(height, width, CV_8UC1, const_cast<uint8_t *>(gray));
        cv::Mat dst(out_height, out_width, CV_8UC1, out);
        cv::Mat flipped;
        const cv::Mat *in = &src;
        if (flip) {
            cv::flip(src, flipped, 1);
            in = &flipped;
        }
        cv::Mat m = cv::getRotationMatrix2D(cv::Point2f(width / 2.0f, height / 2.0f), degrees, scale);
        m.at<double>(0, 2) += (out_width - width) / 2.0;
        m.at<double>(1, 2) += (out_height - height) / 2.0;
        cv::warpAffine(*in, dst, m, dst.size(), cv::INTER_LINEAR, cv::BORDER_REPLICATE);
        return WM_OK;
    } catch (...) {
        return WM_INTERNAL;
    }
}

}  // extern "C"
