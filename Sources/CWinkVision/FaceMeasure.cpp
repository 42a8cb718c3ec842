// CWinkVision: the per-eye measures (aspect ratio, the eye-state model's closure) and the face's brightness
// and visible fraction from 68 landmarks (see include/CWinkVision.h for the contract). No exception leaves
// this file.
#include "CWinkVision.h"
#include "VisionArguments.hpp"

#include <opencv2/core.hpp>

#include <algorithm>
#include <cmath>

using winkvision::valid_image;
using winkvision::wrap;

namespace {

float distance(const float *xy, int a, int b) {
    float dx = xy[2 * a] - xy[2 * b], dy = xy[2 * a + 1] - xy[2 * b + 1];
    return std::sqrt(dx * dx + dy * dy);
}

// Eye aspect ratio over six landmarks p1..p6 starting at `first` (Soukupova & Cech, CVWW 2016).
float eye_aspect_ratio(const float *xy, int first) {
    float horizontal = distance(xy, first, first + 3);
    if (horizontal <= 0) return 0;
    return (distance(xy, first + 1, first + 5) + distance(xy, first + 2, first + 4)) / (2 * horizontal);
}

// Median of the grey values inside [x0,x1) x [y0,y1) (clipped to the image), by a 256-bin histogram.
float median_in(const cv::Mat &img, int x0, int y0, int x1, int y1) {
    x0 = std::max(0, x0); y0 = std::max(0, y0);
    x1 = std::min(img.cols, x1); y1 = std::min(img.rows, y1);
    if (x1 <= x0 || y1 <= y0) return 0;
    uint32_t hist[256] = {0};
    uint32_t n = 0;
    for (int y = y0; y < y1; y++) {
        const uint8_t *row = img.ptr<uint8_t>(y);
        for (int x = x0; x < x1; x++) { hist[row[x]]++; n++; }
    }
    uint32_t half = n / 2, acc = 0;
    for (int v = 0; v < 256; v++) { acc += hist[v]; if (acc > half) return static_cast<float>(v); }
    return 255;
}

}  // namespace

extern "C" {

wv_status wv_measure_face(const uint8_t *gray, int width, int height, int stride, const float *xy,
                          wv_face_measure *out) {
    if (!valid_image(gray, width, height, stride) || !xy || !out) return WV_BAD_ARGUMENT;
    try {
        cv::Mat img = wrap(gray, width, height, stride);
        // Cheeks and nose: between the outer eye corners, from below the eyes to the upper lip.
        float eyeBottom = std::max(xy[2 * 41 + 1], xy[2 * 46 + 1]);
        float lip = xy[2 * 51 + 1];
        int x0 = static_cast<int>(xy[2 * 36]), x1 = static_cast<int>(xy[2 * 45]);
        int y0 = static_cast<int>(eyeBottom), y1 = static_cast<int>(lip);
        if (x1 - x0 < 2 || y1 - y0 < 2) {  // degenerate landmarks: fall back to the whole landmark box
            x0 = width; x1 = 0; y0 = height; y1 = 0;
            for (int i = 0; i < 68; i++) {
                x0 = std::min(x0, static_cast<int>(xy[2 * i])); x1 = std::max(x1, static_cast<int>(xy[2 * i]));
                y0 = std::min(y0, static_cast<int>(xy[2 * i + 1])); y1 = std::max(y1, static_cast<int>(xy[2 * i + 1]));
            }
        }
        float median = median_in(img, x0, y0, x1, y1);
        out->median_brightness = median;
        out->right_eye.aspect_ratio = eye_aspect_ratio(xy, 36);
        out->left_eye.aspect_ratio = eye_aspect_ratio(xy, 42);
        float left_logit = 0, right_logit = 0;  // a degenerate eye counts as undecided
        if (wv_eye_closure(gray, width, height, stride, xy, &left_logit, &right_logit) != WV_OK) {
            left_logit = right_logit = 0;
        }
        out->left_eye.closed_logit = left_logit;
        out->right_eye.closed_logit = right_logit;
        // Fraction of the bounding box of landmarks [first, last] (and [first2, last2]) inside the frame.
        auto visible = [&](int first, int last, int first2, int last2) {
            float minx = 1e9f, maxx = -1e9f, miny = 1e9f, maxy = -1e9f;
            auto add = [&](int a, int b) {
                for (int i = a; i <= b; i++) {
                    minx = std::min(minx, xy[2 * i]); maxx = std::max(maxx, xy[2 * i]);
                    miny = std::min(miny, xy[2 * i + 1]); maxy = std::max(maxy, xy[2 * i + 1]);
                }
            };
            add(first, last);
            add(first2, last2);
            float area = std::max(1.0f, (maxx - minx) * (maxy - miny));
            float vw = std::max(0.0f, std::min(maxx, static_cast<float>(width)) - std::max(minx, 0.0f));
            float vh = std::max(0.0f, std::min(maxy, static_cast<float>(height)) - std::max(miny, 0.0f));
            return std::clamp(vw * vh / area, 0.0f, 1.0f);
        };
        out->visible_fraction = visible(0, 67, 0, 67);
        out->eyes_visible_fraction = visible(17, 26, 36, 47);   // brows and eyes
        out->mouth_visible_fraction = visible(5, 11, 27, 67);   // chin, nose, eyes (for scale) and mouth
        return WV_OK;
    } catch (...) {
        return WV_INTERNAL;
    }
}

}  // extern "C"
