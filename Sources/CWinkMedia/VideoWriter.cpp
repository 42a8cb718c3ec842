// CWinkMedia: writing video files through FFmpeg (see include/CWinkMedia.h, "Writing video files").
// No exception leaves this file.
#include "CWinkMedia.h"
#include "MediaSupport.hpp"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
}

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

using wink_media::av_error;
using wink_media::write_message;

/// An audio stream of the input, copied into output stream `out`.
struct CopiedStream {
    int in = -1;
    AVStream *out = nullptr;
    int64_t shift = 0;  // subtracted from the input's timestamps (the input video's start, in this stream's base)
};

/// Whether `oformat` takes a stream of these parameters copied as they are, asked of FFmpeg itself: a scratch
/// muxer of that format with that one stream, writing to memory, is initialised (its checks of codecs run
/// there). avformat_query_codec says yes to FLAC in MP4 (muxed only with -strict experimental) and to FLAC
/// and Opus in QuickTime (refused when the header is written), which failed the whole output.
bool format_takes(const AVOutputFormat *oformat, const AVCodecParameters *parameters, AVRational time_base) {
    AVFormatContext *probe = nullptr;
    if (avformat_alloc_output_context2(&probe, oformat, nullptr, nullptr) < 0 || !probe) return false;
    bool takes = false;
    AVStream *stream = avformat_new_stream(probe, nullptr);
    if (stream && avcodec_parameters_copy(stream->codecpar, parameters) >= 0 && avio_open_dyn_buf(&probe->pb) >= 0) {
        stream->codecpar->codec_tag = 0;
        stream->time_base = time_base;
        takes = avformat_init_output(probe, nullptr) >= 0;
        uint8_t *written = nullptr;
        avio_close_dyn_buf(probe->pb, &written);
        av_free(written);
        probe->pb = nullptr;
    }
    avformat_free_context(probe);  // also the muxer's deinit, when it was initialised
    return takes;
}

}  // namespace

/// One file being written: the muxer, the video encoder with its BGR24 -> YUV conversion, and the input
/// whose audio packets are copied.
struct wm_writer {
    AVFormatContext *format = nullptr;
    AVCodecContext *encoder = nullptr;
    AVStream *video = nullptr;
    AVFrame *frame = nullptr;
    AVPacket *packet = nullptr;
    SwsContext *sws = nullptr;
    int64_t frames = 0;
    int64_t last_pts = -1;   // in the encoder's 1/60000 s time base
    double fps = 30;
    std::string encoder_name;

    AVFormatContext *audio_input = nullptr;
    AVPacket *audio_packet = nullptr;
    std::vector<CopiedStream> audio;
    bool audio_done = false;
    bool audio_held = false;  // audio_packet holds a packet read but not yet written (later than the video)

    bool header_written = false;
    bool finished = false;
    int write_error = 0;  // the first failed write's AVERROR

    ~wm_writer() {
        if (format && format->pb && !finished) avio_closep(&format->pb);
        sws_freeContext(sws);
        av_frame_free(&frame);
        av_packet_free(&packet);
        av_packet_free(&audio_packet);
        avcodec_free_context(&encoder);
        avformat_close_input(&audio_input);
        avformat_free_context(format);
    }

    /// Records a failed write (the first one is reported).
    bool check(int r) {
        if (r < 0 && write_error == 0) write_error = r;
        if (r >= 0 && format->pb && format->pb->error < 0 && write_error == 0) write_error = format->pb->error;
        return write_error == 0;
    }

    /// Sends `frame_in` (NULL to flush) to the encoder and muxes every packet it gives back.
    bool encode(AVFrame *frame_in) {
        int r = avcodec_send_frame(encoder, frame_in);
        if (r < 0 && r != AVERROR_EOF) return check(r);
        for (;;) {
            r = avcodec_receive_packet(encoder, packet);
            if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) return true;
            if (r < 0) return check(r);
            av_packet_rescale_ts(packet, encoder->time_base, video->time_base);
            packet->stream_index = video->index;
            if (!check(av_interleaved_write_frame(format, packet))) return false;
        }
    }

    /// Copies input audio packets that start before `seconds` (all of them for infinity).
    bool copy_audio(double seconds) {
        while (!audio.empty() && !audio_done) {
            if (!audio_held) {
                if (av_read_frame(audio_input, audio_packet) < 0) {
                    audio_done = true;
                    break;
                }
                audio_held = true;
            }
            const CopiedStream *stream = nullptr;
            for (const CopiedStream &s : audio)
                if (s.in == audio_packet->stream_index) stream = &s;
            if (!stream) {  // video or another stream of the input
                av_packet_unref(audio_packet);
                audio_held = false;
                continue;
            }
            AVRational in_base = audio_input->streams[stream->in]->time_base;
            if (audio_packet->pts != AV_NOPTS_VALUE && std::isfinite(seconds) &&
                (audio_packet->pts - stream->shift) * av_q2d(in_base) > seconds)
                break;  // later than the video written so far: keep it for later
            if (audio_packet->pts != AV_NOPTS_VALUE) audio_packet->pts -= stream->shift;
            if (audio_packet->dts != AV_NOPTS_VALUE) audio_packet->dts -= stream->shift;
            av_packet_rescale_ts(audio_packet, in_base, stream->out->time_base);
            audio_packet->stream_index = stream->out->index;
            audio_packet->pos = -1;
            audio_held = false;
            if (!check(av_interleaved_write_frame(format, audio_packet))) return false;
        }
        return true;
    }

    /// Opens the input's audio streams that the output container takes, as output streams.
    void add_audio(const char *path) {
        if (avformat_open_input(&audio_input, path, nullptr, nullptr) < 0) return;
        if (avformat_find_stream_info(audio_input, nullptr) < 0) return;
        // The video stream winkd read (the reader's choice) starts at time 0 of the output, as its frames were.
        int64_t video_start = 0;
        AVRational video_base{1, 1};
        const int film = wink_media::main_video_stream(audio_input, path);
        if (film >= 0 && audio_input->streams[film]->start_time != AV_NOPTS_VALUE) {
            video_start = audio_input->streams[film]->start_time;
            video_base = audio_input->streams[film]->time_base;
        }
        for (unsigned i = 0; i < audio_input->nb_streams; i++) {
            AVStream *in = audio_input->streams[i];
            if (in->codecpar->codec_type != AVMEDIA_TYPE_AUDIO) continue;
            // Both questions: the container has a tag for the codec (QuickTime's muxer would write Vorbis
            // without one, which players do not read), and its muxer takes the stream (FLAC in MP4 has a tag).
            if (avformat_query_codec(format->oformat, in->codecpar->codec_id, FF_COMPLIANCE_NORMAL) != 1) continue;
            if (!format_takes(format->oformat, in->codecpar, in->time_base)) continue;
            AVStream *out = avformat_new_stream(format, nullptr);
            if (!out || avcodec_parameters_copy(out->codecpar, in->codecpar) < 0) continue;
            out->codecpar->codec_tag = 0;
            out->time_base = in->time_base;
            out->disposition = in->disposition;
            CopiedStream c;
            c.in = static_cast<int>(i);
            c.out = out;
            c.shift = av_rescale_q(video_start, video_base, in->time_base);
            audio.push_back(c);
        }
        if (!audio.empty()) audio_packet = av_packet_alloc();
        if (!audio_packet) audio.clear();
    }
};

extern "C" {

wm_status wm_writer_open(const char *path, int width, int height, double fps, const char *encoders,
                         const char *audio_from, wm_writer **out, char *message, size_t message_len) {
    if (!path || !out || width <= 0 || height <= 0 || width > 16384 || height > 16384 || !(fps > 0) || fps > 1000)
        return WM_BAD_ARGUMENT;
    *out = nullptr;
    wink_media::quiet_ffmpeg();
    try {
        std::unique_ptr<wm_writer> w(new wm_writer());
        int r = avformat_alloc_output_context2(&w->format, nullptr, nullptr, path);
        if (r < 0 || !w->format) {
            write_message(message, message_len, "no container for this extension (use .mp4, .m4v, .mov or .mkv)");
            return WM_CANNOT_CREATE;
        }
        // The first of `encoders` that libavcodec has, else its own MPEG-4 Part 2.
        const AVCodec *codec = nullptr;
        std::string list = encoders ? encoders : "";
        for (size_t start = 0; start <= list.size() && !codec;) {
            size_t comma = list.find(',', start);
            std::string name = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
            if (!name.empty()) codec = avcodec_find_encoder_by_name(name.c_str());
            if (comma == std::string::npos) break;
            start = comma + 1;
        }
        if (!codec) codec = avcodec_find_encoder(AV_CODEC_ID_MPEG4);
        if (!codec) {
            write_message(message, message_len, "this FFmpeg has no video encoder for the file");
            return WM_INTERNAL;
        }
        w->encoder_name = codec->name;
        w->encoder = avcodec_alloc_context3(codec);
        w->frame = av_frame_alloc();
        w->packet = av_packet_alloc();
        if (!w->encoder || !w->frame || !w->packet) return WM_INTERNAL;
        AVRational rate = av_d2q(fps, 100000);
        w->fps = fps;
        AVCodecContext *e = w->encoder;
        e->width = width;
        e->height = height;
        // A 1/60000 s clock: frames keep the input's own times, so a variable-rate input (a phone's
        // recording) stays in step with its copied audio; 24, 25, 30 and 30000/1001 fps fall on whole ticks,
        // and MPEG-4 Part 2 (the fallback) takes no clock finer than 1/65535.
        e->time_base = AVRational{1, 60000};
        e->framerate = rate;
        const bool odd = (width | height) & 1;
        e->pix_fmt = codec->id == AV_CODEC_ID_H264 && odd ? AV_PIX_FMT_YUV444P : AV_PIX_FMT_YUV420P;
        e->color_range = AVCOL_RANGE_MPEG;
        e->colorspace = AVCOL_SPC_SMPTE170M;  // swscale's default BGR -> YUV matrix is BT.601
        e->gop_size = 250;
        if (codec->id == AV_CODEC_ID_MPEG4) {
            e->qmin = 2;
            e->qmax = 6;  // near-transparent quality, as x264's CRF 18
        }
        if (w->format->oformat->flags & AVFMT_GLOBALHEADER) e->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
        AVDictionary *options = nullptr;
        if (std::strcmp(codec->name, "libx264") == 0) {
            av_dict_set(&options, "preset", "veryfast", 0);
            av_dict_set(&options, "crf", "18", 0);
        }
        r = avcodec_open2(e, codec, &options);
        av_dict_free(&options);
        if (r < 0) {
            write_message(message, message_len,
                          std::string("cannot open the ") + codec->name + " encoder (" + av_error(r) + ")");
            return WM_INTERNAL;
        }
        w->video = avformat_new_stream(w->format, nullptr);
        if (!w->video || avcodec_parameters_from_context(w->video->codecpar, e) < 0) return WM_INTERNAL;
        w->video->time_base = e->time_base;
        w->video->avg_frame_rate = rate;
        w->video->r_frame_rate = rate;
        w->frame->format = e->pix_fmt;
        w->frame->width = width;
        w->frame->height = height;
        if (av_frame_get_buffer(w->frame, 32) < 0) return WM_INTERNAL;
        w->sws = sws_getContext(width, height, AV_PIX_FMT_BGR24, width, height, e->pix_fmt, SWS_BICUBIC, nullptr,
                                nullptr, nullptr);
        if (!w->sws) return WM_INTERNAL;
        if (audio_from) w->add_audio(audio_from);
        if ((r = avio_open(&w->format->pb, path, AVIO_FLAG_WRITE)) < 0) {
            write_message(message, message_len, av_error(r));
            return WM_CANNOT_CREATE;
        }
        if ((r = avformat_write_header(w->format, nullptr)) < 0) {
            write_message(message, message_len, "writing the header failed: " + av_error(r));
            return WM_WRITE_FAILED;
        }
        w->header_written = true;
        *out = w.release();
        return WM_OK;
    } catch (...) {
        write_message(message, message_len, "out of memory");
        return WM_INTERNAL;
    }
}

const char *wm_writer_encoder(const wm_writer *writer) { return writer ? writer->encoder_name.c_str() : ""; }

int wm_writer_audio_streams(const wm_writer *writer) { return writer ? static_cast<int>(writer->audio.size()) : 0; }

wm_status wm_writer_write(wm_writer *w, const uint8_t *bgr, int stride, double time, char *message,
                          size_t message_len) {
    if (!w || !bgr || stride < 3 * w->encoder->width || w->finished) return WM_BAD_ARGUMENT;
    try {
        if (av_frame_make_writable(w->frame) < 0) return WM_INTERNAL;
        const uint8_t *planes[1] = {bgr};
        const int strides[1] = {stride};
        sws_scale(w->sws, planes, strides, 0, w->encoder->height, w->frame->data, w->frame->linesize);
        const double seconds = time >= 0 && std::isfinite(time) ? time : static_cast<double>(w->frames) / w->fps;
        w->frame->pts = std::max(w->last_pts + 1, static_cast<int64_t>(std::llround(seconds * 60000.0)));
        w->last_pts = w->frame->pts;
        w->frames++;
        bool ok = w->encode(w->frame) && w->copy_audio(seconds + 1.0 / w->fps);
        if (!ok) {
            write_message(message, message_len, av_error(w->write_error));
            return WM_WRITE_FAILED;
        }
        return WM_OK;
    } catch (...) {
        return WM_INTERNAL;
    }
}

wm_status wm_writer_finish(wm_writer *w, char *message, size_t message_len) {
    if (!w || w->finished) return WM_BAD_ARGUMENT;
    try {
        w->encode(nullptr);
        w->copy_audio(INFINITY);
        if (w->write_error == 0) w->check(av_write_trailer(w->format));
        w->finished = true;
        const int closed = avio_closep(&w->format->pb);
        if (closed < 0 && w->write_error == 0) w->write_error = closed;
        if (w->write_error != 0) {
            write_message(message, message_len, av_error(w->write_error));
            return WM_WRITE_FAILED;
        }
        return WM_OK;
    } catch (...) {
        return WM_INTERNAL;
    }
}

void wm_writer_close(wm_writer *writer) { delete writer; }

}  // extern "C"
