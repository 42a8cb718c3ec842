// The plot canvas of CWinkOverlay.h: OpenCV drawing primitives on a white BGR image. No exception leaves
// this file: drawing calls on valid arguments do not throw, and every call is wrapped anyway.
#include "CWinkOverlay.h"

#include <exception>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

struct wo_canvas {
    cv::Mat bgr;  // CV_8UC3, continuous
};

namespace {

cv::Scalar colour(uint32_t rgb) {
    return cv::Scalar(rgb & 0xFF, (rgb >> 8) & 0xFF, (rgb >> 16) & 0xFF);
}

}  // namespace

extern "C" {

wo_status wo_canvas_create(int width, int height, wo_canvas **out) {
    if (out == nullptr) return WO_BAD_ARGUMENT;
    *out = nullptr;
    if (width < 1 || height < 1 || width > 16384 || height > 16384) return WO_BAD_ARGUMENT;
    try {
        auto *canvas = new wo_canvas;
        canvas->bgr = cv::Mat(height, width, CV_8UC3, cv::Scalar(255, 255, 255));
        *out = canvas;
        return WO_OK;
    } catch (const std::exception &) {
        return WO_INTERNAL;
    }
}

void wo_canvas_destroy(wo_canvas *canvas) { delete canvas; }

void wo_canvas_fill_rect(wo_canvas *canvas, int x0, int y0, int x1, int y1, uint32_t rgb) {
    if (canvas == nullptr) return;
    try {
        cv::rectangle(canvas->bgr, cv::Point(x0, y0), cv::Point(x1, y1), colour(rgb), cv::FILLED, cv::LINE_8);
    } catch (const std::exception &) {
    }
}

void wo_canvas_line(wo_canvas *canvas, int x0, int y0, int x1, int y1, uint32_t rgb, int thickness, int antialiased) {
    if (canvas == nullptr || thickness < 1) return;
    try {
        cv::line(canvas->bgr, cv::Point(x0, y0), cv::Point(x1, y1), colour(rgb), thickness,
                 antialiased ? cv::LINE_AA : cv::LINE_8);
    } catch (const std::exception &) {
    }
}

void wo_canvas_polyline(wo_canvas *canvas, const int *xy, int count, uint32_t rgb, int thickness) {
    if (canvas == nullptr || xy == nullptr || count < 1 || thickness < 1) return;
    try {
        std::vector<cv::Point> points(static_cast<size_t>(count));
        for (int i = 0; i < count; ++i) points[i] = cv::Point(xy[2 * i], xy[2 * i + 1]);
        if (count == 1) {
            cv::circle(canvas->bgr, points[0], thickness, colour(rgb), cv::FILLED, cv::LINE_AA);
        } else {
            cv::polylines(canvas->bgr, points, false, colour(rgb), thickness, cv::LINE_AA);
        }
    } catch (const std::exception &) {
    }
}

void wo_canvas_text(wo_canvas *canvas, const char *text, int x, int y, double scale, uint32_t rgb) {
    if (canvas == nullptr || text == nullptr) return;
    try {
        cv::putText(canvas->bgr, text, cv::Point(x, y), cv::FONT_HERSHEY_SIMPLEX, scale, colour(rgb), 1, cv::LINE_AA);
    } catch (const std::exception &) {
    }
}

int wo_canvas_text_width(const char *text, double scale) {
    if (text == nullptr) return 0;
    try {
        int baseline = 0;
        return cv::getTextSize(text, cv::FONT_HERSHEY_SIMPLEX, scale, 1, &baseline).width;
    } catch (const std::exception &) {
        return 0;
    }
}

wo_status wo_canvas_write(const wo_canvas *canvas, const char *path, char *message, size_t message_len) {
    if (canvas == nullptr) return WO_BAD_ARGUMENT;
    const cv::Mat &m = canvas->bgr;
    return wo_image_write(path, m.data, m.cols, m.rows, static_cast<int>(m.step[0]), message, message_len);
}

}  // extern "C"
