// CWinkMedia's own helpers, shared by the reading (CWinkMedia.cpp) and writing (VideoWriter.cpp) sides.
// Not part of the C header.
#pragma once

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/error.h>
#include <libavutil/log.h>
}

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <string>
#include <vector>

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

/// Packets of each stream among the first `limit` packets of the file at `path` (a second, independent
/// look: the caller's context is not moved), and whether the file ended within them. Empty if it cannot be
/// opened.
struct PacketCount {
    std::vector<int64_t> per_stream;
    bool ended = false;
};
inline PacketCount count_packets(const char *path, int limit) {
    PacketCount count;
    AVFormatContext *look = nullptr;
    if (avformat_open_input(&look, path, nullptr, nullptr) != 0) return count;
    count.per_stream.assign(look->nb_streams, 0);
    if (AVPacket *packet = av_packet_alloc()) {
        int n = 0;
        for (; n < limit; n++) {
            if (av_read_frame(look, packet) < 0) {
                count.ended = true;
                break;
            }
            // A stream found while reading (some containers announce streams late) has no place: not counted.
            if (packet->stream_index >= 0 && static_cast<size_t>(packet->stream_index) < count.per_stream.size())
                count.per_stream[packet->stream_index]++;
            av_packet_unref(packet);
        }
        av_packet_free(&packet);
    }
    avformat_close_input(&look);
    return count;
}

/// The index of the film in `format` (opened from `path`, its streams' information read), or -1 when it
/// holds no video stream. A cover picture can come before the film: an `attached_pic` stream (an MP4's
/// cover, a Matroska image attachment) or a one-picture track, as in downloaded videos. The first video
/// stream was read as the whole file then (one frame, no face, not a word), and FFmpeg's
/// `av_find_best_stream` prefers a track flagged default, which a cover can be. So: `attached_pic` streams
/// are passed over (unless there is nothing else), and of several video tracks the one with the most
/// packets among the file's first 512 is the film (`look`, the caller's count of them, or a second look at
/// the file, only when there are several). Reader and writer ask the same question, so the overlay's audio
/// is aligned to the frames read.
inline int main_video_stream(AVFormatContext *format, const char *path, const PacketCount *look = nullptr) {
    std::vector<int> tracks, pictures;
    for (unsigned i = 0; i < format->nb_streams; i++) {
        const AVStream *s = format->streams[i];
        if (s->codecpar->codec_type != AVMEDIA_TYPE_VIDEO) continue;
        (s->disposition & AV_DISPOSITION_ATTACHED_PIC ? pictures : tracks).push_back(static_cast<int>(i));
    }
    if (tracks.empty()) return pictures.empty() ? -1 : pictures.front();
    if (tracks.size() == 1) return tracks.front();
    const PacketCount count = look ? *look : count_packets(path, 512);
    auto packets = [&](int i) { return static_cast<size_t>(i) < count.per_stream.size() ? count.per_stream[i] : 0; };
    int best = tracks.front();
    for (int i : tracks)
        if (packets(i) > packets(best)) best = i;
    return best;
}

/// Where a decoder's error messages are counted: its AVCodecContext's `opaque` points at one (a wm_video's).
/// A decoder that conceals damage ("error while decoding MB" from H.264) says so only in its log.
struct DecodeErrorCounter {
    std::atomic<int64_t> count{0};
};

/// Where FFmpeg's first error line on this thread goes while a file is opened (`ErrorCapture`), or null.
inline thread_local std::string *captured_error = nullptr;

/// Keeps FFmpeg's first error line on this thread for as long as it lives, for a message when opening a file
/// fails: FFmpeg's return code alone can say nothing of the reason ("Device or resource busy" for a Y4M
/// header claiming 60000x60000 pixels, whose log says "Picture size 60000x60000 is invalid").
struct ErrorCapture {
    std::string first;
    ErrorCapture() { captured_error = &first; }
    ~ErrorCapture() { captured_error = nullptr; }
    ErrorCapture(const ErrorCapture &) = delete;
    ErrorCapture &operator=(const ErrorCapture &) = delete;
};

/// FFmpeg's log callback: prints nothing, keeps the first error line of a thread opening a file
/// (`ErrorCapture`), and counts a decoder's error messages in its context's `DecodeErrorCounter`. Called from
/// decoder threads too (the frame threads' contexts copy `opaque`).
inline void count_decoder_errors(void *avcl, int level, const char *format, va_list arguments) {
    if (level > AV_LOG_ERROR) return;
    if (captured_error && captured_error->empty() && format) {
        char line[256];
        va_list copy;
        va_copy(copy, arguments);
        vsnprintf(line, sizeof line, format, copy);
        va_end(copy);
        *captured_error = line;
        while (!captured_error->empty() && (captured_error->back() == '\n' || captured_error->back() == ' '))
            captured_error->pop_back();
    }
    if (!avcl) return;
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
