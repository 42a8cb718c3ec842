// See include/CVideoCaptureReference.h.
#include "CVideoCaptureReference.h"

#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>

struct vcr_video {
    cv::VideoCapture capture;
    cv::Mat frame;
};

extern "C" {

vcr_video *vcr_open(const char *path) {
    try {
        auto v = new vcr_video();
        if (v->capture.open(path, cv::CAP_FFMPEG)) return v;
        delete v;
    } catch (...) {
    }
    return nullptr;
}

void vcr_close(vcr_video *video) { delete video; }

int vcr_read(vcr_video *video, uint8_t *gray, int width, int height, double *time_ms) {
    try {
        if (!video->capture.read(video->frame) || video->frame.empty()) return 0;
        if (video->frame.cols != width || video->frame.rows != height || video->frame.type() != CV_8UC3) return -1;
        *time_ms = video->capture.get(cv::CAP_PROP_POS_MSEC);
        cv::Mat g(height, width, CV_8UC1, gray);
        cv::cvtColor(video->frame, g, cv::COLOR_BGR2GRAY);
        return 1;
    } catch (...) {
        return -1;
    }
}

}  // extern "C"
