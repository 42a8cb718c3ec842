// CWinkMedia: see include/CWinkMedia.h. No exception leaves this file.
#include "CWinkMedia.h"

#include "MediaSupport.hpp"
#include "WinkCodecs.h"

#include <cstring>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>  // IMREAD_COLOR only; imread is in the WinkCodecs plugin
#include <opencv2/imgproc.hpp>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/display.h>
#include <libavutil/imgutils.h>
#include <libswscale/swscale.h>
}

#include <algorithm>
#include <fstream>
#include <iterator>
#include <vector>
#include <zlib.h>  // crc32: PNG chunks
#include <cmath>
#include <memory>

#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

/// One open recording: FFmpeg's demuxer and decoder, and the conversion to BGR24, set up as OpenCV 4.6's
/// FFmpeg backend does (cap_ffmpeg_impl.hpp): the first video stream, one decoder thread per CPU,
/// best-effort timestamps, bicubic swscale into a 32-byte aligned BGR24 frame, display-matrix rotation.
struct wm_video {
    AVFormatContext *format = nullptr;
    AVCodecContext *codec = nullptr;
    AVPacket *packet = nullptr;
    AVFrame *frame = nullptr;      // decoder output, reused
    AVFrame *converted = nullptr;  // BGR24, reused
    SwsContext *sws = nullptr;
    int stream = -1;
    bool draining = false;         // the demuxer is at its end; the decoder is being flushed
    bool finished = false;
    int rotation = 0;              // clockwise degrees applied to each frame: 0, 90, 180 or 270
    cv::Mat view;                  // header over `converted`
    cv::Mat rotated;               // scratch for a rotated frame
    bool pending = false;          // `converted` holds the first frame, decoded by wm_video_open
    double pending_ms = 0;
    int64_t frames = 0;
    int64_t damaged = 0;           // packets the decoder refused, decoding errors and concealed frames
    wink_media::DecodeErrorCounter logged;  // the decoder's error messages (concealed damage)
    int64_t logged_seen = 0;       // `logged` when a frame last came
    int64_t packets = 0;           // the video stream's packets read so far
    int read_error = 0;            // the demuxer's error if reading stopped before the end of the file
    bool single_picture = false;   // the file holds one picture (see wm_video_is_single_picture)
    int width = 0, height = 0;     // after rotation
    double fps = 0;

    ~wm_video() {
        sws_freeContext(sws);
        av_frame_free(&converted);
        av_frame_free(&frame);
        av_packet_free(&packet);
        avcodec_free_context(&codec);
        avformat_close_input(&format);
    }

    /// Decodes the next frame into `converted` (BGR24, source orientation) and its time in ms.
    /// Returns WM_END after the last frame; decoder errors skip the damaged packet, as OpenCV does.
    wm_status next(double *time_ms) {
        for (int attempts = 0; attempts < 4096 && !finished;) {
            int r = avcodec_receive_frame(codec, frame);
            if (r == 0) return convert(time_ms);
            if (r == AVERROR_EOF) {
                finished = true;
                break;
            }
            if (r != AVERROR(EAGAIN)) {
                attempts++;
                damaged++;
                continue;
            }
            if (draining) {
                finished = true;
                break;
            }
            r = av_read_frame(format, packet);
            if (r < 0) {  // end of file or a read error: flush what the decoder holds
                if (r != AVERROR_EOF) read_error = r;
                draining = true;
                avcodec_send_packet(codec, nullptr);
                continue;
            }
            if (packet->stream_index == stream) {
                packets++;
                if (avcodec_send_packet(codec, packet) < 0) {
                    attempts++;
                    damaged++;
                }
            }
            av_packet_unref(packet);
        }
        return WM_END;
    }

    wm_status convert(double *time_ms) {
        // The decoder said it met errors since the last frame (and concealed them: the frame still came).
        const int64_t logged_now = logged.count.load(std::memory_order_relaxed);
        if (logged_now > logged_seen) {
            damaged++;
            logged_seen = logged_now;
        }
        AVStream *st = format->streams[stream];
        int64_t pts = frame->best_effort_timestamp != AV_NOPTS_VALUE ? frame->best_effort_timestamp : frame->pkt_dts;
        double ms;
        if (pts != AV_NOPTS_VALUE) {
            int64_t start = st->start_time != AV_NOPTS_VALUE ? st->start_time : 0;
            ms = static_cast<double>(pts - start) * av_q2d(st->time_base) * 1000.0;
        } else {  // no timestamp at all (a raw elementary stream): the nominal rate
            ms = fps > 0 ? static_cast<double>(frames) * 1000.0 / fps : 0;
        }
        frames++;
        if (time_ms) *time_ms = ms;
        const int w = frame->width, h = frame->height;
        if (w <= 0 || h <= 0) return WM_END;
        if (converted->width == 0) {  // the first frame sets the size of every frame delivered
            // Non-square pixels (an anamorphic sample aspect ratio) are widened or narrowed to square ones,
            // as players show them: a 320x360 frame of 2:1 pixels is a 640x360 picture. Faces stored
            // squashed were not found, and overlays came out squashed.
            AVRational sar = frame->sample_aspect_ratio;
            if (!(sar.num > 0 && sar.den > 0)) sar = format->streams[stream]->sample_aspect_ratio;
            int display = w;
            if (sar.num > 0 && sar.den > 0 && sar.num != sar.den) {
                const double widened = static_cast<double>(w) * sar.num / sar.den;
                if (widened >= 1 && widened <= WM_MAX_FRAME_SIDE) display = static_cast<int>(std::lround(widened));
            }
            converted->format = AV_PIX_FMT_BGR24;
            converted->width = display;
            converted->height = h;
            if (av_frame_get_buffer(converted, 32) != 0) return WM_INTERNAL;
        }
        // A stream whose frame size changes part way (a spliced recording) goes on at the first size,
        // bicubically rescaled, as VideoCapture does.
        sws = sws_getCachedContext(sws, w, h, static_cast<AVPixelFormat>(frame->format), converted->width,
                                   converted->height, AV_PIX_FMT_BGR24, SWS_BICUBIC, nullptr, nullptr, nullptr);
        if (!sws) return WM_INTERNAL;
        sws_scale(sws, frame->data, frame->linesize, 0, h, converted->data, converted->linesize);
        av_frame_unref(frame);
        return WM_OK;
    }

    /// The converted frame as a cv::Mat in display orientation (no copy unless rotated).
    const cv::Mat &upright() {
        view = cv::Mat(converted->height, converted->width, CV_8UC3, converted->data[0],
                       static_cast<size_t>(converted->linesize[0]));
        if (rotation == 0) return view;
        cv::rotate(view, rotated, rotation == 90 ? cv::ROTATE_90_CLOCKWISE
                                  : rotation == 180 ? cv::ROTATE_180 : cv::ROTATE_90_COUNTERCLOCKWISE);
        return rotated;
    }
};

namespace {

using wink_media::av_error;
using wink_media::write_message;

// Whether frames of `width` x `height` are over WM_MAX_FRAME_SIDE / WM_MAX_FRAME_PIXELS; if so, says so.
bool oversized(int64_t width, int64_t height, char *message, size_t len) {
    if (width <= WM_MAX_FRAME_SIDE && height <= WM_MAX_FRAME_SIDE && width * height <= WM_MAX_FRAME_PIXELS)
        return false;
    write_message(message, len,
                  std::to_string(width) + "x" + std::to_string(height) + " pixels, over the limit of " +
                      std::to_string(WM_MAX_FRAME_SIDE) + " pixels a side and " +
                      std::to_string(WM_MAX_FRAME_PIXELS) + " pixels in all (8192x8192)");
    return true;
}

// Checks that `path` names a readable regular file; otherwise says why.
wm_status check_file(const char *path, char *message, size_t len) {
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR) {
            write_message(message, len, "no such file");
            return WM_MISSING;
        }
        write_message(message, len, std::string("cannot read: ") + std::strerror(errno));
        return WM_UNREADABLE;
    }
    if (S_ISDIR(st.st_mode)) {
        write_message(message, len, "is a directory");
        return WM_UNREADABLE;
    }
    if (!S_ISREG(st.st_mode)) {
        write_message(message, len, "not a regular file (a pipe or device cannot be read as a recording)");
        return WM_UNREADABLE;
    }
    if (access(path, R_OK) != 0) {
        write_message(message, len, std::string("cannot read: ") + std::strerror(errno));
        return WM_UNREADABLE;
    }
    if (st.st_size == 0) {
        write_message(message, len, "empty file, not a video or image");
        return WM_NOT_MEDIA;
    }
    return WM_OK;
}

// Converts a decoded frame of any channel count into the caller's planes.
void deliver(const cv::Mat &frame, uint8_t *gray, uint8_t *bgr) {
    cv::Mat g(frame.rows, frame.cols, CV_8UC1, gray);
    if (frame.channels() == 1) {
        frame.copyTo(g);
        if (bgr) {
            cv::Mat c(frame.rows, frame.cols, CV_8UC3, bgr);
            cv::cvtColor(frame, c, cv::COLOR_GRAY2BGR);
        }
        return;
    }
    const int code = frame.channels() == 4 ? cv::COLOR_BGRA2GRAY : cv::COLOR_BGR2GRAY;
    cv::cvtColor(frame, g, code);
    if (bgr) {
        cv::Mat c(frame.rows, frame.cols, CV_8UC3, bgr);
        if (frame.channels() == 4) cv::cvtColor(frame, c, cv::COLOR_BGRA2BGR);
        else frame.copyTo(c);
    }
}

}  // namespace

extern "C" {

wm_status wm_video_open(const char *path, wm_video **out, char *message, size_t message_len) {
    if (!path || !out) return WM_BAD_ARGUMENT;
    *out = nullptr;
    wm_status st = check_file(path, message, message_len);
    if (st != WM_OK) return st;
    wink_media::quiet_ffmpeg();
    try {
        std::unique_ptr<wm_video> v(new wm_video());
        wink_media::ErrorCapture logged;  // FFmpeg's own reason, where its return code says little
        int r = avformat_open_input(&v->format, path, nullptr, nullptr);
        if (r < 0) {
            const std::string why = logged.first.empty() ? av_error(r) : logged.first;
            write_message(message, message_len, "not a video FFmpeg can read (" + why + ")");
            return WM_NOT_MEDIA;
        }
        // Checked before FFmpeg probes the streams too (probing decodes a frame) when the header gives sizes.
        for (unsigned i = 0; i < v->format->nb_streams; i++) {
            const AVCodecParameters *p = v->format->streams[i]->codecpar;
            if (p->codec_type == AVMEDIA_TYPE_VIDEO && oversized(p->width, p->height, message, message_len))
                return WM_NOT_MEDIA;
        }
        if ((r = avformat_find_stream_info(v->format, nullptr)) < 0) {
            const std::string why = logged.first.empty() ? av_error(r) : logged.first;
            write_message(message, message_len, "cannot read its streams (" + why + ")");
            return WM_NOT_MEDIA;
        }
        // One second look at the file answers both which stream is the film and whether it is one picture.
        const wink_media::PacketCount look = wink_media::count_packets(path, 512);
        v->stream = wink_media::main_video_stream(v->format, path, &look);
        if (v->stream < 0) {
            write_message(message, message_len, "no video stream in it");
            return WM_NOT_MEDIA;
        }
        AVStream *stream = v->format->streams[v->stream];
        // Refused before a frame is decoded: a 124 KB file can declare 16000x16000 frames (1.9 GB to decode).
        if (oversized(stream->codecpar->width, stream->codecpar->height, message, message_len)) return WM_NOT_MEDIA;
        const AVCodec *decoder = avcodec_find_decoder(stream->codecpar->codec_id);
        if (!decoder) {
            write_message(message, message_len, std::string("no decoder for its ") +
                                                    avcodec_get_name(stream->codecpar->codec_id) + " video");
            return WM_NOT_MEDIA;
        }
        v->codec = avcodec_alloc_context3(decoder);
        v->packet = av_packet_alloc();
        v->frame = av_frame_alloc();
        v->converted = av_frame_alloc();
        if (!v->codec || !v->packet || !v->frame || !v->converted) return WM_INTERNAL;
        if ((r = avcodec_parameters_to_context(v->codec, stream->codecpar)) < 0) return WM_INTERNAL;
        v->codec->opaque = &v->logged;  // count_decoder_errors counts this decoder's errors there
        v->codec->thread_count = std::max(1, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
        if ((r = avcodec_open2(v->codec, decoder, nullptr)) < 0) {
            write_message(message, message_len, std::string("cannot open its ") + decoder->name + " decoder (" +
                                                    av_error(r) + ")");
            return WM_NOT_MEDIA;
        }
        double fps = av_q2d(stream->avg_frame_rate);
        if (!(fps > 0)) fps = av_q2d(stream->r_frame_rate);
        v->fps = fps;
        if (const uint8_t *matrix = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, nullptr)) {
            // av_display_rotation_get gives the counter-clockwise angle; OpenCV rounds its negation.
            int angle = -static_cast<int>(std::lround(av_display_rotation_get(reinterpret_cast<const int32_t *>(matrix))));
            angle = ((angle % 360) + 360) % 360;
            v->rotation = angle == 90 || angle == 180 || angle == 270 ? angle : 0;
        }
        st = v->next(&v->pending_ms);
        if (st != WM_OK) {
            write_message(message, message_len, "cannot decode its first frame");
            return st == WM_END ? WM_NOT_MEDIA : st;
        }
        v->pending = true;
        if (wm_video_is_image(v.get())) {
            v->single_picture = true;
        } else {  // a one-frame GIF or video: one packet of its stream, then the end
            v->single_picture = look.ended && static_cast<size_t>(v->stream) < look.per_stream.size() &&
                                look.per_stream[v->stream] == 1;
        }
        const cv::Mat &first = v->upright();
        v->width = first.cols;
        v->height = first.rows;
        *out = v.release();
        return WM_OK;
    } catch (const std::exception &e) {
        write_message(message, message_len, std::string("cannot decode: ") + e.what());
        return WM_NOT_MEDIA;
    } catch (...) {
        return WM_INTERNAL;
    }
}

void wm_video_close(wm_video *video) { delete video; }

void wm_video_info(const wm_video *video, int *width, int *height, double *fps) {
    if (!video) return;
    if (width) *width = video->width;
    if (height) *height = video->height;
    if (fps) *fps = video->fps > 0 && video->fps < 1000 ? video->fps : 0;
}

int64_t wm_video_expected_frames(const wm_video *video) {
    if (!video || !video->format || video->stream < 0) return 0;
    const AVStream *stream = video->format->streams[video->stream];
    if (stream->nb_frames > 0) return stream->nb_frames;
    double fps = video->fps > 0 && video->fps < 1000 ? video->fps : 0;
    double seconds = 0;
    if (stream->duration > 0 && stream->time_base.den > 0) seconds = stream->duration * av_q2d(stream->time_base);
    else if (video->format->duration > 0) seconds = video->format->duration / double(AV_TIME_BASE);
    return fps > 0 && seconds > 0 ? int64_t(seconds * fps + 0.5) : 0;
}

int wm_video_is_image(const wm_video *video) {
    if (!video || !video->format || !video->format->iformat || !video->format->iformat->name) return 0;
    const std::string name = video->format->iformat->name;
    const std::string pipe = "_pipe";
    return name == "image2" ||
           (name.size() > pipe.size() && name.compare(name.size() - pipe.size(), pipe.size(), pipe) == 0);
}

int wm_video_is_single_picture(const wm_video *video) { return video && video->single_picture ? 1 : 0; }

int64_t wm_video_declared_frames(const wm_video *video) {
    if (!video || !video->format || video->stream < 0) return 0;
    // Only an MP4/QuickTime sample table counts the frames stored; an AVI's header counts the frame slots of
    // its timeline, which a variable-rate recording leaves partly empty (169 frames in 762 slots).
    const char *name = video->format->iformat ? video->format->iformat->name : nullptr;
    if (name == nullptr || std::strncmp(name, "mov,", 4) != 0) return 0;
    const int64_t n = video->format->streams[video->stream]->nb_frames;
    return n > 0 ? n : 0;
}

double wm_video_declared_seconds(const wm_video *video) {
    if (!video || !video->format || video->stream < 0) return 0;
    const AVStream *stream = video->format->streams[video->stream];
    if (stream->duration > 0 && stream->time_base.num > 0 && stream->time_base.den > 0) {
        return static_cast<double>(stream->duration) * av_q2d(stream->time_base);
    }
    // Matroska and WebM give each track's length as a "DURATION" tag (HH:MM:SS.fraction), written at the
    // start of the file by FFmpeg's muxer, so a file cut short keeps it.
    if (const AVDictionaryEntry *tag = av_dict_get(stream->metadata, "DURATION", nullptr, 0)) {
        unsigned hours = 0, minutes = 0;
        double seconds = 0;
        if (std::sscanf(tag->value, "%u:%u:%lf", &hours, &minutes, &seconds) == 3 && seconds >= 0) {
            return hours * 3600.0 + minutes * 60.0 + seconds;
        }
    }
    // Else the file's duration, which counts every stream: only for a file whose video is alone (a longer
    // audio track would read as missing frames).
    const AVFormatContext *format = video->format;
    for (unsigned i = 0; i < format->nb_streams; i++) {
        const AVMediaType kind = format->streams[i]->codecpar->codec_type;
        if (static_cast<int>(i) != video->stream && (kind == AVMEDIA_TYPE_AUDIO || kind == AVMEDIA_TYPE_VIDEO)) {
            return 0;
        }
    }
    // The container's duration counts from its own start; frame times count from the stream's.
    if (format->duration <= 0 || format->duration_estimation_method == AVFMT_DURATION_FROM_BITRATE) return 0;
    double seconds = static_cast<double>(format->duration) / AV_TIME_BASE;
    if (format->start_time != AV_NOPTS_VALUE && stream->start_time != AV_NOPTS_VALUE) {
        seconds -= static_cast<double>(stream->start_time) * av_q2d(stream->time_base)
                   - static_cast<double>(format->start_time) / AV_TIME_BASE;
    }
    return seconds > 0 ? seconds : 0;
}

int64_t wm_video_damaged_packets(const wm_video *video) { return video ? video->damaged : 0; }

int64_t wm_video_packets_read(const wm_video *video) { return video ? video->packets : 0; }

int wm_video_read_error(const wm_video *video, char *message, size_t message_len) {
    if (!video || video->read_error == 0) return 0;
    write_message(message, message_len, av_error(video->read_error));
    return 1;
}

wm_status wm_video_read(wm_video *video, uint8_t *gray, uint8_t *bgr, double *time_ms) {
    if (!video || !gray) return WM_BAD_ARGUMENT;
    try {
        if (video->pending) {
            video->pending = false;
            if (time_ms) *time_ms = video->pending_ms;
        } else {
            wm_status st = video->next(time_ms);
            if (st != WM_OK) return st;
        }
        const cv::Mat &frame = video->upright();
        deliver(frame, gray, bgr);
        return WM_OK;
    } catch (...) {
        return WM_INTERNAL;
    }
}

wm_status wm_media_streams(const char *path, wm_stream_info *streams, int capacity, int *count, char *message,
                           size_t message_len) {
    if (!path || !count || capacity < 0 || (capacity > 0 && !streams)) return WM_BAD_ARGUMENT;
    *count = 0;
    wm_status st = check_file(path, message, message_len);
    if (st != WM_OK) return st;
    wink_media::quiet_ffmpeg();
    AVFormatContext *format = nullptr;
    int r = avformat_open_input(&format, path, nullptr, nullptr);
    if (r < 0) {
        write_message(message, message_len, "not a media file FFmpeg can read (" + av_error(r) + ")");
        return WM_NOT_MEDIA;
    }
    if ((r = avformat_find_stream_info(format, nullptr)) < 0) {
        avformat_close_input(&format);
        write_message(message, message_len, "cannot read its streams (" + av_error(r) + ")");
        return WM_NOT_MEDIA;
    }
    *count = static_cast<int>(format->nb_streams);
    for (int i = 0; i < capacity && i < *count; i++) {
        const AVCodecParameters *p = format->streams[i]->codecpar;
        streams[i].is_video = p->codec_type == AVMEDIA_TYPE_VIDEO;
        streams[i].is_audio = p->codec_type == AVMEDIA_TYPE_AUDIO;
        std::snprintf(streams[i].codec, sizeof streams[i].codec, "%s", avcodec_get_name(p->codec_id));
        streams[i].packets = 0;
    }
    if (AVPacket *packet = av_packet_alloc()) {
        while (av_read_frame(format, packet) >= 0) {
            if (packet->stream_index < capacity) streams[packet->stream_index].packets++;
            av_packet_unref(packet);
        }
        av_packet_free(&packet);
    }
    avformat_close_input(&format);
    return WM_OK;
}

/// cv::imread(path, IMREAD_COLOR) through the WinkCodecs plugin (see WinkCodecs.h for why a plugin).
static wm_status read_still(const char *path, cv::Mat &image, char *message, size_t message_len) {
    const wink_codecs_api *codecs = wink_codecs_load(message, message_len);  // says why when it fails
    if (!codecs) return WM_INTERNAL;
    char why[640] = "";
    switch (codecs->imread(path, cv::IMREAD_COLOR, &image, why, sizeof why)) {
    case WINK_CODECS_OK: return WM_OK;
    case WINK_CODECS_FAILED:
        write_message(message, message_len, "not an image OpenCV can decode");
        return WM_NOT_MEDIA;
    case WINK_CODECS_ERROR: break;
    }
    if (std::strstr(why, "CV_IO_MAX_IMAGE_")) {  // OpenCV refused the size from the header (limitStillImageSize)
        write_message(message, message_len, "over the limit of " + std::to_string(WM_MAX_FRAME_SIDE) +
                                                " pixels a side and " + std::to_string(WM_MAX_FRAME_PIXELS) +
                                                " pixels in all (8192x8192)");
        return WM_NOT_MEDIA;
    }
    write_message(message, message_len, std::string("cannot decode: ") + why);
    return WM_NOT_MEDIA;
}

wm_status wm_image_probe(const char *path, int *width, int *height, char *message, size_t message_len) {
    if (!path || !width || !height) return WM_BAD_ARGUMENT;
    wm_status st = check_file(path, message, message_len);
    if (st != WM_OK) return st;
    cv::Mat img;
    if ((st = read_still(path, img, message, message_len)) != WM_OK) return st;
    *width = img.cols;
    *height = img.rows;
    return WM_OK;
}

/// What is wrong with a PNG's chunk structure (PNG specification, 3rd edition, section 5.3: length, type,
/// data, CRC-32 of type and data; the last chunk is IEND), or "" when it is whole.
static std::string png_damage(const std::vector<unsigned char> &d) {
    auto be32 = [&](size_t i) {
        return uint32_t(d[i]) << 24 | uint32_t(d[i + 1]) << 16 | uint32_t(d[i + 2]) << 8 | d[i + 3];
    };
    for (size_t i = 8;;) {
        if (i + 8 > d.size()) return "truncated PNG (it ends before its IEND chunk)";
        const uint64_t length = be32(i);
        const std::string type(reinterpret_cast<const char *>(&d[i + 4]), 4);
        if (i + 12 + length > d.size()) return "truncated PNG (chunk " + type + " runs past the end of the file)";
        const uLong crc = crc32(crc32(0L, Z_NULL, 0), &d[i + 4], static_cast<uInt>(4 + length));
        if (crc != be32(i + 8 + length)) return "corrupt PNG (CRC mismatch in chunk " + type + ")";
        if (type == "IEND") return "";
        i += 12 + length;
    }
}

/// Whether a JPEG's markers run to its end-of-image marker (ITU-T T.81, annex B: segments with a 16-bit
/// length; after a start-of-scan, entropy-coded data in which 0xFF is followed by 0x00 or a restart marker),
/// or "" when they do.
static std::string jpeg_damage(const std::vector<unsigned char> &d) {
    const std::string truncated = "truncated JPEG (it ends before its end-of-image marker)";
    for (size_t i = 2;;) {
        while (i < d.size() && d[i] != 0xFF) i++;  // (there is nothing between segments in a whole file)
        while (i < d.size() && d[i] == 0xFF) i++;  // fill bytes
        if (i >= d.size()) return truncated;
        const unsigned char marker = d[i++];
        if (marker == 0xD9) return "";  // EOI
        if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) continue;  // TEM, RSTn: no length
        if (i + 2 > d.size()) return truncated;
        const size_t length = size_t(d[i]) << 8 | d[i + 1];
        if (length < 2) return "corrupt JPEG (a segment of length " + std::to_string(length) + ")";
        if (i + length > d.size()) return truncated;
        i += length;
        if (marker != 0xDA) continue;  // SOS: its scan's entropy-coded data follows, up to the next marker
        while (i + 1 < d.size() && !(d[i] == 0xFF && d[i + 1] != 0x00 && !(d[i + 1] >= 0xD0 && d[i + 1] <= 0xD7)))
            i++;
    }
}

int wm_image_damage(const char *path, char *message, size_t message_len) {
    if (!path) return 0;
    try {
        std::ifstream in(path, std::ios::binary);
        const std::vector<unsigned char> d((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (!in.eof() && in.fail()) return 0;  // unreadable: not judged here
        static const unsigned char png[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
        std::string damage;
        if (d.size() >= 8 && std::equal(png, png + 8, d.begin()))
            damage = png_damage(d);
        else if (d.size() >= 2 && d[0] == 0xFF && d[1] == 0xD8)
            damage = jpeg_damage(d);
        if (damage.empty()) return 0;
        write_message(message, message_len, damage);
        return 1;
    } catch (...) {
        return 0;  // out of memory: not judged
    }
}

wm_status wm_image_read(const char *path, int width, int height, uint8_t *gray, uint8_t *bgr) {
    if (!path || !gray) return WM_BAD_ARGUMENT;
    try {
        cv::Mat img;
        wm_status st = read_still(path, img, nullptr, 0);
        if (st != WM_OK) return st;
        if (img.cols != width || img.rows != height) return WM_BAD_ARGUMENT;
        deliver(img, gray, bgr);
        return WM_OK;
    } catch (...) {
        return WM_INTERNAL;
    }
}

wm_status wm_warp_gray(const uint8_t *gray, int width, int height, double degrees, double scale, int flip,
                       uint8_t *out, int out_width, int out_height) {
    if (!gray || !out || width <= 0 || height <= 0 || out_width <= 0 || out_height <= 0 || !(scale > 0))
        return WM_BAD_ARGUMENT;
    try {
        cv::Mat src(height, width, CV_8UC1, const_cast<uint8_t *>(gray));
        cv::Mat dst(out_height, out_width, CV_8UC1, out);
        cv::Mat flipped;
        const cv::Mat *in = &src;
        if (flip) {
            cv::flip(src, flipped, 1);
            in = &flipped;
        }
        cv::Mat m = cv::getRotationMatrix2D(cv::Point2f(width / 2.0f, height / 2.0f), degrees, scale);
        m.at<double>(0, 2) += (out_width - width) / 2.0;
        m.at<double>(1, 2) += (out_height - height) / 2.0;
        cv::warpAffine(*in, dst, m, dst.size(), cv::INTER_LINEAR, cv::BORDER_REPLICATE);
        return WM_OK;
    } catch (...) {
        return WM_INTERNAL;
    }
}

}  // extern "C"
