// CWinkMedia: recorded video through FFmpeg (libavformat, libavcodec, libswscale, set up as OpenCV 4.6's
// FFmpeg backend sets them up, so the frames and timestamps are VideoCapture's) and still images through
// OpenCV's imread in the WinkCodecs plugin (loaded on first use, see WinkCodecs.h), decoded straight into
// caller-owned planes; video files written through FFmpeg (H.264, the input's audio copied: wm_writer_*).
//
// Planes: grey is `width` x `height` bytes (stride = width); BGR is `width` x `height` x 3 bytes
// (stride = 3 x width); origin top-left. No C++ exception crosses this header.
// Thread-safety: a wm_video or wm_writer is used by one thread at a time; wm_image_* and wm_media_streams
// are thread-safe.
#ifndef CWINKMEDIA_H
#define CWINKMEDIA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What a call did; the comments say when each failure is returned.
typedef enum wm_status {
    WM_OK = 0,
    WM_END = 1,            // no more frames
    WM_MISSING = 2,        // the file does not exist
    WM_UNREADABLE = 3,     // it exists but cannot be read (permissions, a directory)
    WM_NOT_MEDIA = 4,      // it was read but is not a video or image OpenCV can decode
    WM_BAD_ARGUMENT = 5,
    WM_INTERNAL = 6,
    WM_CANNOT_CREATE = 7,  // the output file cannot be created (no such folder, no permission, no muxer)
    WM_WRITE_FAILED = 8,   // the output was created but writing it failed (a full disk, an I/O error)
} wm_status;

/// An open recorded video and its decoder state.
typedef struct wm_video wm_video;

/// Opens a recorded video (the first video stream of any container and codec FFmpeg reads; a regular file)
/// and decodes its first frame to prove it decodes. Every frame comes at the first frame's size (a stream
/// whose size changes part way is rescaled, as VideoCapture does). Frames come upright: a display-matrix
/// rotation of 90, 180 or 270 degrees is applied as FFmpeg's own tools apply it (`ffmpeg` autorotate).
/// OpenCV 4.6's CAP_PROP_ORIENTATION_AUTO agrees for 180 degrees but turns 90 and 270 the wrong way
/// (opencv/opencv#22088, fixed in 4.7), so for those the frames differ from Debian's VideoCapture.
/// On failure, a one-line reason (without the path) goes into `message`.
wm_status wm_video_open(const char *path, wm_video **out, char *message, size_t message_len);
/// The largest video frames wm_video_open accepts (WM_NOT_MEDIA, saying the size, before any decoding):
/// 16384 pixels a side and 8192x8192 in all, twice 8K UHD; decoding them takes about 400 MB.
#define WM_MAX_FRAME_SIDE 16384
#define WM_MAX_FRAME_PIXELS (8192LL * 8192LL)
/// Closes the file and frees the decoder. NULL is ignored.
void wm_video_close(wm_video *video);
/// Frame size in pixels and the container's nominal frame rate (0 if unknown).
void wm_video_info(const wm_video *video, int *width, int *height, double *fps);
/// The number of frames the video holds, as its container says (the stream's frame count, else its
/// duration times the nominal rate), or 0 when it does not say: an estimate for progress, not a promise.
int64_t wm_video_expected_frames(const wm_video *video);
/// 1 when FFmpeg read the file as a still image (its image2 demuxer, or an image *_pipe demuxer that
/// recognised the content: a PNG or JPEG without a telling extension), else 0.
int wm_video_is_image(const wm_video *video);
/// 1 when the file holds one picture: read as a still image (`wm_video_is_image`), or its video stream
/// holds a single packet and the file ends within its first 512 packets (a one-frame GIF, a TGA, a video of
/// one frame), else 0. Such a file is one instant, judged as a photo is.
int wm_video_is_single_picture(const wm_video *video);
/// The video stream's frame count as its container declares it exactly (an MP4 or QuickTime file's sample
/// count), or 0 (other containers: an AVI's header counts frame slots, not frames).
int64_t wm_video_declared_frames(const wm_video *video);
/// The video stream's duration in seconds as its container declares it, counted from the stream's first
/// frame: the stream's own duration, else its Matroska "DURATION" tag, else the file's when the video is its
/// only audio or video stream (and FFmpeg did not only estimate it from the bit rate); 0 when it does not
/// say. Compared with the frames' times at the end, it tells a file cut short whose container counts no
/// frames (an MKV, a WebM).
double wm_video_declared_seconds(const wm_video *video);
/// Packets the decoder refused and decoding errors so far (damaged data; each such packet's frame is
/// skipped, so later frames are numbered as decoded).
int64_t wm_video_damaged_packets(const wm_video *video);
/// The video stream's packets read from the file so far (one per frame; an MP4 edit list may keep a few
/// of them from being shown, so this can exceed the frames delivered).
int64_t wm_video_packets_read(const wm_video *video);
/// 1 when reading stopped before the end of the file (a read error, not the end), with the demuxer's
/// reason in `message`; else 0.
int wm_video_read_error(const wm_video *video, char *message, size_t message_len);

/// Decodes the next frame. Writes its presentation time in milliseconds into `*time_ms`: the frame's
/// best-effort timestamp less the stream's start time (VideoCapture's CAP_PROP_POS_MSEC), or the frame count
/// over the nominal rate for a stream without timestamps. Damaged packets are skipped. `gray` receives width
/// x height bytes; `bgr`, if not NULL, width x height x 3. Returns WM_END after the last frame.
wm_status wm_video_read(wm_video *video, uint8_t *gray, uint8_t *bgr, double *time_ms);

/// Reads the size of a still image (any format imread decodes). On failure `message` says why; WM_INTERNAL
/// when the WinkCodecs plugin cannot be loaded.
wm_status wm_image_probe(const char *path, int *width, int *height, char *message, size_t message_len);
/// Whether the PNG or JPEG file at `path` is damaged: it ends before its own structure does (a PNG without
/// its IEND chunk, a JPEG without its end-of-image marker) or a PNG chunk's CRC-32 fails. OpenCV's decoders
/// give what they could of such a file and only print a line of their own (libjpeg: "Premature end of JPEG
/// file"). Returns 1 and writes "truncated JPEG (...)" or "corrupt PNG (...)" to `message` when damaged, 0
/// when whole, unreadable or of another format (not judged). Thread-safe.
int wm_image_damage(const char *path, char *message, size_t message_len);
/// Decodes a still image into grey (and BGR if not NULL) planes of the size wm_image_probe gave.
/// WM_BAD_ARGUMENT for a NULL `path` or `gray` or a size other than the image's; wm_image_probe's failures
/// otherwise.
wm_status wm_image_read(const char *path, int width, int height, uint8_t *gray, uint8_t *bgr);

/// Resamples a grey plane (`width` x `height`, stride = width) into `out` (`out_width` x `out_height`)
/// with OpenCV `warpAffine` (bilinear, border replicated): rotation by `degrees` (counter-clockwise in the
/// image, as cv::getRotationMatrix2D) about the image centre, uniform `scale`, and a horizontal flip first
/// when `flip` is non-zero. The result is centred in `out`. Used to derive test variants from recordings.
/// WM_BAD_ARGUMENT for a NULL plane, a non-positive size or a `scale` not above 0; WM_INTERNAL when OpenCV
/// throws. Thread-safe.
wm_status wm_warp_gray(const uint8_t *gray, int width, int height, double degrees, double scale, int flip,
                       uint8_t *out, int out_width, int out_height);

// MARK: Writing video files

/// A video file being written; one thread at a time.
typedef struct wm_writer wm_writer;

/// Creates a video file at `path` (truncating it), its container chosen by the extension as FFmpeg's
/// av_guess_format does (.mp4, .m4v, .mov, .mkv), for frames of `width` x `height` BGR24 pixels at `fps`
/// frames a second (> 0; frame i is stamped i / fps seconds).
/// Video is encoded with the first encoder of the comma-separated `encoders` list (libavcodec names, e.g.
/// "libx264") that this libavcodec has, as 8-bit 4:2:0 (4:4:4 for an odd width or height), CRF 18; when none
/// is there it falls back to libavcodec's own MPEG-4 Part 2 encoder ("mpeg4"): wm_writer_encoder says which.
/// `audio_from` (NULL for none) names a media file whose audio streams are copied into the output packet for
/// packet (no re-encoding; timestamps rescaled, shifted so that its first video frame is time 0); a stream
/// whose codec the container does not take is left out (wm_writer_audio_streams counts those copied). A file
/// without audio, or one FFmpeg cannot read, gives a video without audio.
/// Returns WM_CANNOT_CREATE when the file cannot be created (the reason in `message`, e.g. "No such file or
/// directory") or the extension names no container, WM_INTERNAL when the encoder cannot be set up;
/// WM_BAD_ARGUMENT for a size or rate out of range. Nothing is written to stderr (FFmpeg's log is quiet).
wm_status wm_writer_open(const char *path, int width, int height, double fps, const char *encoders,
                         const char *audio_from, wm_writer **out, char *message, size_t message_len);
/// The libavcodec encoder in use ("libx264", or "mpeg4" after a fallback).
const char *wm_writer_encoder(const wm_writer *writer);
/// The audio streams being copied from `audio_from`.
int wm_writer_audio_streams(const wm_writer *writer);
/// Encodes one frame: `bgr` is `height` rows of 3 x `width` bytes, `stride` bytes apart, shown at `time`
/// seconds from the first frame (the input frame's own time, so a variable rate is kept; negative: frame
/// count / fps). Times are kept strictly increasing at 1/60000 s. Audio packets up to the frame's end are
/// muxed alongside. WM_WRITE_FAILED (reason in `message`) when writing fails.
wm_status wm_writer_write(wm_writer *writer, const uint8_t *bgr, int stride, double time, char *message,
                          size_t message_len);
/// Flushes the encoder, copies the remaining audio, writes the container's index and closes the file.
/// WM_WRITE_FAILED (reason in `message`, e.g. "No space left on device") when any write failed; the file is
/// then incomplete and left for the caller to remove. Call once; afterwards only wm_writer_close.
wm_status wm_writer_finish(wm_writer *writer, char *message, size_t message_len);
/// Frees the writer, closing the file if wm_writer_finish was not called (the file is then incomplete).
void wm_writer_close(wm_writer *writer);

/// One stream of a media file, as wm_media_streams reports it.
typedef struct wm_stream_info {
    int is_video;       // 1 for a video stream
    int is_audio;       // 1 for an audio stream
    char codec[32];     // libavcodec's codec name: "h264", "mpeg4", "aac", "mp3"...
    int64_t packets;    // packets in the stream (for video, its frames)
} wm_stream_info;

/// The streams of the media file at `path` (up to `capacity` of them into `streams`; `*count` is the total).
/// Reads every packet of the file to count them (no decoding).
/// WM_MISSING/WM_UNREADABLE/WM_NOT_MEDIA as wm_video_open, the reason in `message`.
wm_status wm_media_streams(const char *path, wm_stream_info *streams, int capacity, int *count, char *message,
                           size_t message_len);

#ifdef __cplusplus
}
#endif
#endif
