// CWinkVision private header (not part of the C interface): the argument checks and small helpers every
// C++ file of this target shares behind include/CWinkVision.h. Inline, so each file that includes it gets
// the same definition (C++ one-definition rule).
#ifndef CWINKVISION_VISION_ARGUMENTS_HPP
#define CWINKVISION_VISION_ARGUMENTS_HPP

#include "CWinkVision.h"

#include <opencv2/core.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace winkvision {

/// Writes `text` into the caller's `message` buffer (truncated to `len` - 1 bytes, NUL-terminated);
/// nothing when there is no buffer.
inline void write_message(char *message, size_t len, const std::string &text) {
    if (message == nullptr || len == 0) return;
    std::snprintf(message, len, "%s", text.c_str());
}

/// An 8-bit grey image the C interface may read: a pointer, a positive size, rows at least `width` apart.
inline bool valid_image(const uint8_t *gray, int width, int height, int stride) {
    return gray != nullptr && width > 0 && height > 0 && stride >= width;
}

/// Wraps caller memory as a cv::Mat header without copying.
inline cv::Mat wrap(const uint8_t *gray, int width, int height, int stride) {
    return cv::Mat(height, width, CV_8UC1, const_cast<uint8_t *>(gray), static_cast<size_t>(stride));
}

}  // namespace winkvision

#endif
