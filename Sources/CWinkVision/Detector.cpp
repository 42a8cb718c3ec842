// CWinkVision: dlib's HOG frontal face detector, with its image pyramid cut at a largest face (see
// include/CWinkVision.h for the contract). No exception leaves this file.
#include "CWinkVision.h"
#include "VisionArguments.hpp"

#include <dlib/image_processing.h>
#include <dlib/image_processing/frontal_face_detector.h>
#include <dlib/opencv/cv_image.h>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

using winkvision::valid_image;
using winkvision::wrap;

struct wv_detector {
    dlib::frontal_face_detector detector = dlib::get_frontal_face_detector();
    /// `detector` with its image pyramid cut to n + 1 levels, at [n], built when first needed.
    std::unique_ptr<dlib::frontal_face_detector> limited[12];
    cv::Mat small;      // reused downscaled frame
    cv::Mat equalized;  // reused contrast-equalised frame (equalize)
    cv::Ptr<cv::CLAHE> clahe;  // built when first needed
    std::vector<dlib::rect_detection> dets;

    /// The detector whose pyramid stops at the last level whose boxes are at most `max_width` pixels wide
    /// (in the image it is given): dlib's frontal detector reports boxes of about 73 px at the pyramid's
    /// first level, each further level (pyramid_down<6>) 6/5 as wide. The first level is always searched.
    /// 0 = every level.
    dlib::frontal_face_detector &reaching(double max_width) {
        if (!(max_width > 0)) return detector;
        const int extra = std::max(0, static_cast<int>(std::floor(std::log(max_width / 73.0) / std::log(1.2))));
        if (extra >= 12) return detector;
        if (!limited[extra]) {
            dlib::scan_fhog_pyramid<dlib::pyramid_down<6>> scanner;
            scanner.copy_configuration(detector.get_scanner());
            scanner.set_max_pyramid_levels(extra + 1);
            std::vector<dlib::matrix<double, 0, 1>> w;
            for (unsigned long i = 0; i < detector.num_detectors(); i++) w.push_back(detector.get_w(i));
            limited[extra] = std::make_unique<dlib::frontal_face_detector>(scanner, detector.get_overlap_tester(), w);
        }
        return *limited[extra];
    }
};

extern "C" {

wv_detector *wv_detector_create(void) {
    try {
        return new wv_detector();
    } catch (...) {
        return nullptr;
    }
}

void wv_detector_destroy(wv_detector *detector) { delete detector; }

wv_status wv_detect(wv_detector *detector, const uint8_t *gray, int width, int height, int stride,
                    float scale, int upsample, float adjust_threshold, float max_width, int equalize,
                    wv_rect *out, int capacity, int *count) {
    if (count) *count = 0;
    if (!detector || !valid_image(gray, width, height, stride) || !(scale > 0 && scale <= 4) || upsample < 0 ||
        upsample > 3 || (capacity > 0 && !out) || !count || !(max_width >= 0))
        return WV_BAD_ARGUMENT;
    try {
        cv::Mat full = wrap(gray, width, height, stride);
        const cv::Mat *src = &full;
        if (scale != 1) {
            cv::resize(full, detector->small, cv::Size(), scale, scale, scale < 1 ? cv::INTER_AREA : cv::INTER_LINEAR);
            src = &detector->small;
        }
        if (equalize) {
            if (!detector->clahe) detector->clahe = cv::createCLAHE(2.0, cv::Size(8, 8));
            detector->clahe->apply(*src, detector->equalized);
            src = &detector->equalized;
        }
        float factor = 1.0f / scale;
        detector->dets.clear();
        auto &hog = detector->reaching(static_cast<double>(max_width) * scale * (1 << upsample));
        if (upsample == 0) {
            dlib::cv_image<unsigned char> img(*src);
            hog(img, detector->dets, adjust_threshold);
        } else {
            dlib::array2d<unsigned char> up;
            dlib::assign_image(up, dlib::cv_image<unsigned char>(*src));
            for (int i = 0; i < upsample; i++) dlib::pyramid_up(up);
            hog(up, detector->dets, adjust_threshold);
            factor /= static_cast<float>(1 << upsample);
        }
        std::sort(detector->dets.begin(), detector->dets.end(),
                  [](const dlib::rect_detection &a, const dlib::rect_detection &b) {
                      return a.rect.area() > b.rect.area();
                  });
        int n = std::min<int>(capacity, static_cast<int>(detector->dets.size()));
        for (int i = 0; i < n; i++) {
            const auto &r = detector->dets[i].rect;
            out[i] = wv_rect{r.left() * factor, r.top() * factor, (r.width()) * factor, (r.height()) * factor,
                             static_cast<float>(detector->dets[i].detection_confidence)};
        }
        *count = n;
        return WV_OK;
    } catch (...) {
        return WV_INTERNAL;
    }
}

}  // extern "C"
