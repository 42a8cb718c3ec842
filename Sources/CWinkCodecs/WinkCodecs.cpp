// The WinkCodecs plugin (libWinkCodecs.so): OpenCV's imgcodecs and videoio behind the C table of
// WinkCodecs.h, loaded on demand by wink_codecs_load. No exception leaves this file.
#include "WinkCodecs.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/videoio.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace {

void say(char *message, size_t length, const std::string &text) {
    if (message != nullptr && length > 0) std::snprintf(message, length, "%s", text.c_str());
}

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

wink_codecs_status write_image(const char *path, const void *mat, const int *params, int param_count,
                               char *message, size_t message_len) {
    if (path == nullptr || mat == nullptr || param_count < 0) return WINK_CODECS_ERROR;
    try {
        std::vector<int> p(params, params + param_count);
        return cv::imwrite(path, *static_cast<const cv::Mat *>(mat), p) ? WINK_CODECS_OK : WINK_CODECS_FAILED;
    } catch (const std::exception &e) {
        say(message, message_len, std::string("OpenCV imwrite: ") + e.what());
        return WINK_CODECS_ERROR;
    } catch (...) {
        say(message, message_len, "OpenCV imwrite failed");
        return WINK_CODECS_ERROR;
    }
}

void *open_writer(const char *path, int fourcc, double fps, int width, int height, char *message,
                  size_t message_len) {
    if (path == nullptr) return nullptr;
    cv::VideoWriter *writer = nullptr;
    try {
        writer = new cv::VideoWriter();
        if (writer->open(path, cv::CAP_FFMPEG, fourcc, fps, cv::Size(width, height), true)) return writer;
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
