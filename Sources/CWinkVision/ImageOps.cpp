// CWinkVision: OpenCV's grey-level operations on the frame path: a dim face's contrast stretched, a
// region sampled into a normalised patch, and OpenCV's worker pool switched off (see
// include/CWinkVision.h for the contract). No exception leaves this file.
#include "CWinkVision.h"
#include "VisionArguments.hpp"

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>

using winkvision::valid_image;
using winkvision::wrap;

extern "C" {

void wv_opencv_single_thread(void) {
    static const bool done = [] {
        try {
            cv::setNumThreads(1);
        } catch (...) {
        }
        return true;
    }();
    (void)done;
}

wv_status wv_normalize_contrast(uint8_t *gray, int width, int height, wv_rect box) {
    if (!valid_image(gray, width, height, width)) return WV_BAD_ARGUMENT;
    try {
        cv::Mat img(height, width, CV_8UC1, gray);
        cv::Rect r(static_cast<int>(box.x), static_cast<int>(box.y), static_cast<int>(box.width),
                   static_cast<int>(box.height));
        r &= cv::Rect(0, 0, width, height);
        if (r.width < 4 || r.height < 4) return WV_BAD_ARGUMENT;
        cv::Scalar mean, sd;
        cv::meanStdDev(img(r), mean, sd);
        if (mean[0] >= 70) return WV_OK;  // a lit face is left as it is
        cv::GaussianBlur(img, img, cv::Size(3, 3), 0);
        double alpha = 48.0 / std::max(4.0, sd[0]);
        alpha = std::min(alpha, 4.0);
        img.convertTo(img, CV_8U, alpha, 128.0 - alpha * mean[0]);
        return WV_OK;
    } catch (...) {
        return WV_INTERNAL;
    }
}

wv_status wv_sample_patch(const uint8_t *gray, int width, int height, int stride, wv_rect box, int size,
                          float *out) {
    if (!valid_image(gray, width, height, stride) || !out || size < 2 || size > 256) return WV_BAD_ARGUMENT;
    try {
        int x0 = std::max(0, static_cast<int>(std::floor(box.x)));
        int y0 = std::max(0, static_cast<int>(std::floor(box.y)));
        int x1 = std::min(width, static_cast<int>(std::ceil(box.x + box.width)));
        int y1 = std::min(height, static_cast<int>(std::ceil(box.y + box.height)));
        if (x1 - x0 < 2 || y1 - y0 < 2) return WV_BAD_ARGUMENT;
        cv::Mat roi = wrap(gray, width, height, stride)(cv::Rect(x0, y0, x1 - x0, y1 - y0));
        cv::Mat patch(size, size, CV_32FC1, out);
        thread_local cv::Mat small;  // allocated once per thread and size: no allocation per frame
        cv::resize(roi, small, cv::Size(size, size), 0, 0, cv::INTER_AREA);
        small.convertTo(patch, CV_32F);
        cv::Scalar mean = cv::mean(patch);
        // patch -= mean[0] as OpenCV computes it (the scalar narrowed to float, then float subtraction),
        // without the temporary OpenCV allocates for a scalar operand.
        const float m = static_cast<float>(mean[0]);
        for (int i = 0; i < size * size; i++) out[i] -= m;
        double norm = cv::norm(patch);
        if (norm > 1e-6) patch /= norm;
        return WV_OK;
    } catch (...) {
        return WV_INTERNAL;
    }
}

}  // extern "C"
