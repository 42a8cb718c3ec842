// CWinkMedia's own helpers, shared by the reading (CWinkMedia.cpp) and writing (VideoWriter.cpp) sides.
// Not part of the C header.
#pragma once

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/error.h>
#include <libavutil/log.h>
}

#include <atomic>
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

/// Where a decoder's error messages are counted: its AVCodecContext's `opaque` points at one (a wm_video's).
/// A decoder that conceals damage ("error while decoding MB" from H.264) says so only in its log.
struct DecodeErrorCounter {
    std::atomic<int64_t> count{0};
};

/// FFmpeg's log callback: prints nothing, and counts a decoder's error messages in its context's
/// `DecodeErrorCounter`. Called from decoder threads too (the frame threads' contexts copy `opaque`).
inline void count_decoder_errors(void *avcl, int level, const char *, va_list) {
    if (level > AV_LOG_ERROR || !avcl) return;
    const AVClass *cls = *static_cast<const AVClass *const *>(avcl);
    if (!cls || std::string(cls->class_name) != "AVCodecContext") return;
    const AVClassCategory category = cls->get_category ? cls->get_category(avcl) : cls->category;
    if (category != AV_CLASS_CATEGORY_DECODER) return;
    if (auto *counter = static_cast<DecodeErrorCounter *>(static_cast<AVCodecContext *>(avcl)->opaque))
        counter->count.fetch_add(1, std::memory_order_relaxed);
}

/// Silences FFmpeg's own logging (decoder complaints, x264's statistics) once for the process: winkd
/// reports one line itself. Decoders' errors are counted instead (`DecodeErrorCounter`).
inline void quiet_ffmpeg() {
    static const bool quiet = (av_log_set_level(AV_LOG_QUIET), av_log_set_callback(count_decoder_errors), true);
    (void)quiet;
}

}  // namespace wink_media
