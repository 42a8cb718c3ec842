// CWinkMedia's own helpers, shared by the reading (CWinkMedia.cpp) and writing (VideoWriter.cpp) sides.
// Not part of the C header.
#pragma once

extern "C" {
#include <libavutil/error.h>
#include <libavutil/log.h>
}

#include <cstdio>
#include <string>

namespace wink_media {

/// Copies `text` into the caller's `message` buffer of `len` bytes (truncated, NUL-terminated); nothing
/// when `message` is NULL.
inline void write_message(char *message, size_t len, const std::string &text) {
    if (message && len) std::snprintf(message, len, "%s", text.c_str());
}

/// FFmpeg's text for an AVERROR code, e.g. "No space left on device".
inline std::string av_error(int code) {
    char text[AV_ERROR_MAX_STRING_SIZE] = "";
    av_strerror(code, text, sizeof text);
    return text;
}

/// Silences FFmpeg's own logging (decoder complaints, x264's statistics) once for the process: winkd
/// reports one line itself.
inline void quiet_ffmpeg() {
    static const bool quiet = (av_log_set_level(AV_LOG_QUIET), true);
    (void)quiet;
}

}  // namespace wink_media
