// CWinkOverlay: PNG decoding to straight-alpha RGBA, premultiplied layer compositing onto BGR frames, and
// image/video writing, all through OpenCV, for the Overlay module only. No C++ exception crosses this header.
//
// Planes: BGR frames are `width` x `height` x 3 bytes, rows `stride` bytes apart, origin top-left, B G R order.
// RGBA images are straight (not premultiplied) alpha, 4 bytes a pixel, R G B A order.
// Coordinates: pixel centres sit at integer coordinates (the convention of dlib landmarks and OpenCV's
// warpAffine), so pixel (0, 0) covers [-0.5, 0.5] x [-0.5, 0.5].
//
// Thread-safety: wo_image, wo_layer and wo_video_writer objects are used by one thread at a time (a layer
// keeps resampling scratch space); distinct objects may be used from distinct threads. wo_png_decode and
// wo_image_write are thread-safe.
#ifndef CWINKOVERLAY_H
#define CWINKOVERLAY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What a call did; the comments say when each failure is returned.
typedef enum wo_status {
    WO_OK = 0,
    WO_MISSING = 1,        // the file does not exist
    WO_UNREADABLE = 2,     // it exists but cannot be opened (permissions, a directory)
    WO_NOT_DECODABLE = 3,  // not a PNG, or a corrupt/truncated one
    WO_BAD_ARGUMENT = 4,   // a size, stride or extension the call cannot use
    WO_INTERNAL = 5,       // OpenCV failed (out of memory, codec missing)
    WO_TOO_LARGE = 6,      // an image file or its pixel size over the limits below
    WO_WRITE_FAILED = 7,   // an output could be created but writing it failed (a full disk, an I/O error)
} wo_status;

/// Limits on an overlay image, checked before anything is decoded. An overlay is drawn on a face, resampled
/// to at most twice the frame's larger side, and cached at 16 bytes a pixel (premultiplied float RGBA), so a
/// 4096x4096 image (256 MiB cached) is far beyond what a face needs; the limits keep a crafted or mistaken
/// file (a 30000x30000 PNG is an 875 KB file) from taking gigabytes. The file size limit is above what an
/// 8-bit RGBA PNG at the pixel limit takes with any compression (its raw pixels are 64 MiB).
#define WO_MAX_IMAGE_FILE_BYTES (64u << 20)  /* 64 MiB */
#define WO_MAX_IMAGE_SIDE 16384u             /* pixels, width or height */
#define WO_MAX_IMAGE_PIXELS 16777216u        /* width x height: 16 Mi pixels, e.g. 4096x4096 */

/// A decoded image: straight RGBA8, tightly packed (stride = 4 x width).
typedef struct wo_image wo_image;

/// Decodes the PNG at `path` (any bit depth, grey, grey+alpha, palette with tRNS, RGB with a tRNS colour
/// key, 1/2/4-bit, Adam7-interlaced) with OpenCV's imread(IMREAD_UNCHANGED) and normalises it to straight
/// RGBA8: 16-bit samples are rounded to 8 bits (v * 255 / 65535), grey is replicated, a missing alpha is 255.
/// Only a regular file is opened (never blocking: a FIFO or a device is refused with WO_UNREADABLE, "not a
/// regular file (a FIFO)"), and only up to WO_MAX_IMAGE_FILE_BYTES (WO_TOO_LARGE). The file's framing
/// (signature, IHDR first, chunk lengths, CRC-32s, IEND) is checked next; a file that is not a PNG, is
/// truncated or fails a CRC is refused with WO_NOT_DECODABLE, as is one the decoder rejects. An IHDR size over
/// WO_MAX_IMAGE_SIDE a side or WO_MAX_IMAGE_PIXELS in all is refused (WO_TOO_LARGE) before decoding.
/// On failure `message` (if not NULL) receives a one-line reason without the path.
wo_status wo_png_decode(const char *path, wo_image **out, char *message, size_t message_len);
/// Frees the image. NULL is ignored.
void wo_image_destroy(wo_image *image);
/// The image's width in pixels; 0 for NULL.
int wo_image_width(const wo_image *image);
/// The image's height in pixels; 0 for NULL.
int wo_image_height(const wo_image *image);
/// `width * height * 4` bytes, R G B A, straight alpha. Owned by the image; NULL for NULL or an empty image.
const uint8_t *wo_image_rgba(const wo_image *image);

/// A layer image cached for drawing: premultiplied B G R A as 32-bit floats (colour 0...255 already
/// multiplied by alpha 0...1 and by the layer opacity).
typedef struct wo_layer wo_layer;

/// Builds a layer from straight RGBA8 pixels (rows `stride` bytes apart), scaled by `opacity` (0...1).
/// WO_BAD_ARGUMENT for a NULL pointer, a non-positive size or `stride < 4 * width`; WO_INTERNAL when the
/// cache (16 bytes a pixel) cannot be allocated.
wo_status wo_layer_create(const uint8_t *rgba, int width, int height, int stride, float opacity,
                          wo_layer **out);
/// Frees the layer. NULL is ignored.
void wo_layer_destroy(wo_layer *layer);

/// A placed layer: the layer image stretched to `width` x `height` pixels, centred at (`center_x`,
/// `center_y`) and turned by `angle` radians (positive turns the image's x axis towards the frame's y axis,
/// i.e. clockwise on screen since y points down). Units: frame pixels. `mirrored` (0 or 1) flips the layer
/// image left-right within the rectangle (for a mirrored camera image).
typedef struct wo_placement {
    float center_x;
    float center_y;
    float width;
    float height;
    float angle;
    int mirrored;
} wo_placement;

/// Composites the layer "over" the BGR frame at `placement`: the layer is first resized to the placement's
/// size (cv::resize, INTER_AREA on a shrinking axis, INTER_LINEAR on an enlarging one), then turned and shifted
/// with cv::warpAffine (bilinear) into only the region of interest; all resampling is done on the premultiplied
/// colour, so soft edges get no dark fringe. Then out = src + dst * (1 - alpha), rounded.
/// The region is clipped to the frame; a layer entirely outside is skipped (WO_OK, nothing drawn).
/// `drawn_pixels` (if not NULL) receives the number of frame pixels in the clipped region.
wo_status wo_layer_draw(wo_layer *layer, uint8_t *bgr, int width, int height, int stride, wo_placement placement,
                        int *drawn_pixels);

/// Writes a BGR frame as an image; the format follows the extension (`.png`, `.jpg`/`.jpeg`; JPEG
/// quality 95). Returns WO_BAD_ARGUMENT for another extension, WO_UNREADABLE when the file cannot be created
/// (no such folder, no permission), WO_WRITE_FAILED when writing it fails (a full disk; `message` gives the
/// system's reason, e.g. "writing failed: No space left on device"; the incomplete file is removed).
wo_status wo_image_write(const char *path, const uint8_t *bgr, int width, int height, int stride,
                         char *message, size_t message_len);

/// A video file being written with OpenCV's VideoWriter (FFmpeg backend).
typedef struct wo_video_writer wo_video_writer;

/// Opens `path` for `width` x `height` frames at `fps` frames per second. The codec follows the extension:
/// `.mp4`/`.m4v`/`.mov` -> MPEG-4 Part 2 (FourCC `mp4v`), `.avi`/`.mkv` -> Motion JPEG (`MJPG`).
/// Returns WO_BAD_ARGUMENT for another extension, WO_UNREADABLE when the file cannot be created or the writer
/// cannot be opened.
wo_status wo_video_writer_open(const char *path, int width, int height, double fps, wo_video_writer **out,
                               char *message, size_t message_len);
/// Appends one BGR frame of the size given at open time.
/// WO_BAD_ARGUMENT for a NULL pointer or `stride < 3 * width`; WO_INTERNAL when OpenCV fails (a full disk
/// is not reported here: see wo_video_writer_close).
wo_status wo_video_writer_write(wo_video_writer *writer, const uint8_t *bgr, int stride);
/// Finishes the file and frees the writer. OpenCV 4.6's VideoWriter reports no write errors (write and
/// release return nothing; a full disk leaves a file without its index), so a caller that must know the file
/// is whole reads it back (the Overlay module does: `OverlayVideoWriter.finish(readBack:)`).
void wo_video_writer_close(wo_video_writer *writer);

// ---- Plot canvas (Plot.cpp), for `winkctl analyze --plot`: a white BGR image drawn with OpenCV's
// primitives (cv::rectangle, cv::line, cv::polylines, cv::putText) and written with cv::imwrite.
// Coordinates are pixels, origin top-left, x right, y down; colours are 0xRRGGBB.
// Thread-safety: a canvas is used by one thread at a time; wo_canvas_text_width is thread-safe.
typedef struct wo_canvas wo_canvas;

/// A `width` x `height` canvas filled with white. WO_BAD_ARGUMENT for a size outside 1...16384.
wo_status wo_canvas_create(int width, int height, wo_canvas **out);
/// Frees the canvas. NULL is ignored.
void wo_canvas_destroy(wo_canvas *canvas);
/// Fills the rectangle with corners (x0, y0) and (x1, y1), both inclusive, clipped to the canvas.
void wo_canvas_fill_rect(wo_canvas *canvas, int x0, int y0, int x1, int y1, uint32_t rgb);
/// A straight line `thickness` pixels wide; 8-connected (exact pixels) unless `antialiased` is 1.
void wo_canvas_line(wo_canvas *canvas, int x0, int y0, int x1, int y1, uint32_t rgb, int thickness, int antialiased);
/// An open antialiased polyline through `count` points given as x, y pairs in `xy` (2 x count ints).
void wo_canvas_polyline(wo_canvas *canvas, const int *xy, int count, uint32_t rgb, int thickness);
/// Text in OpenCV's Hershey simplex font, antialiased, starting at `x` with its baseline at `y`;
/// `scale` 0.4 gives letters about 9 pixels high.
void wo_canvas_text(wo_canvas *canvas, const char *text, int x, int y, double scale, uint32_t rgb);
/// Width in pixels of `text` drawn by wo_canvas_text at `scale`.
int wo_canvas_text_width(const char *text, double scale);
/// Writes the canvas as a PNG (or JPEG, by extension, as wo_image_write).
wo_status wo_canvas_write(const wo_canvas *canvas, const char *path, char *message, size_t message_len);

#ifdef __cplusplus
}
#endif
#endif
