#include "CWinkOverlay.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>  // flag constants only; the codecs are in the WinkCodecs plugin
#include <opencv2/imgproc.hpp>

#include "WinkCodecs.h"

struct wo_image {
    cv::Mat rgba;  // CV_8UC4, continuous
};

struct wo_layer {
    cv::Mat premultiplied;  // CV_32FC4, B G R A, colour already multiplied by alpha and opacity
};

namespace {
/// Resampling scratch space, one set per thread and shared by every layer drawn on it (a layout of thousands
/// of layers kept one frame-sized set each and took tens of GB): the layers of a frame are drawn one after
/// the other.
struct DrawScratch {
    cv::Mat staged;   // the first step of a two-step resize
    cv::Mat resized;  // the layer resampled to (at most) the current placement's size
    cv::Mat warped;   // one band of the warped region of interest
};
thread_local DrawScratch draw_scratch;

/// The most pixels the layer is resampled to before the warp (2048 x 2048, 64 MB as float BGRA): a layer
/// placed larger is enlarged the rest of the way by the warp's bilinear sampling, as the resize would be.
constexpr double max_resized_pixels = 2048.0 * 2048.0;
/// The most pixels of the region of interest warped at once (a band of rows: 16 MB as float BGRA).
constexpr int max_band_pixels = 1 << 20;
}  // namespace

struct wo_video_writer {
    const wink_codecs_api *codecs;
    void *writer;  // cv::VideoWriter, owned by the plugin
    int width;
    int height;
};

namespace {

/// A FourCC code as V4L2 and FFmpeg spell it: the four characters, first in the lowest byte
/// (the value of cv::VideoWriter::fourcc, which lives in libopencv_videoio).
constexpr int fourCC(char a, char b, char c, char d) {
    return (a & 255) | ((b & 255) << 8) | ((c & 255) << 16) | ((d & 255) << 24);
}

/// Copies `text` into `message` as one line (`wink_one_line`).
void say(char *message, size_t length, const std::string &text) { wink_one_line(message, length, text.c_str()); }

std::string lowercaseExtension(const char *path) {
    std::string p(path);
    size_t slash = p.find_last_of('/');
    size_t dot = p.find_last_of('.');
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
    std::string ext = p.substr(dot + 1);
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    return ext;
}

/// What a file that is not a regular file is, for "not a regular file (a FIFO)".
const char *fileKind(mode_t mode) {
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a file";
}

/// Checks a status from stat/fstat: a regular file no larger than WO_MAX_IMAGE_FILE_BYTES.
wo_status checkRegular(const struct stat &st, char *message, size_t length) {
    if (S_ISDIR(st.st_mode)) {
        say(message, length, "is a directory, not an image");
        return WO_UNREADABLE;
    }
    if (!S_ISREG(st.st_mode)) {
        say(message, length, std::string("not a regular file (") + fileKind(st.st_mode) + ")");
        return WO_UNREADABLE;
    }
    if (st.st_size > static_cast<off_t>(WO_MAX_IMAGE_FILE_BYTES)) {
        say(message, length, "the file is " + std::to_string(static_cast<long long>(st.st_size))
                                 + " bytes, over the limit of " + std::to_string(WO_MAX_IMAGE_FILE_BYTES >> 20)
                                 + " MiB for an overlay image");
        return WO_TOO_LARGE;
    }
    return WO_OK;
}

/// Opens `path` for reading if it is a regular file within the size limit, without ever blocking: the type is
/// checked before opening (opening a device can have effects) and again on the open descriptor (the path may
/// have changed in between); O_NONBLOCK keeps a FIFO swapped in meanwhile from blocking the open.
/// On success `*fd` is the open descriptor and `*size` the file's size.
wo_status openRegular(const char *path, int *fd, off_t *size, char *message, size_t length) {
    *fd = -1;
    struct stat st;
    if (stat(path, &st) != 0) {
        int e = errno;
        say(message, length, e == ENOENT ? "no such file" : std::strerror(e));
        return e == ENOENT ? WO_MISSING : WO_UNREADABLE;
    }
    wo_status status = checkRegular(st, message, length);
    if (status != WO_OK) return status;
    int f = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (f < 0) {
        say(message, length, std::strerror(errno));
        return WO_UNREADABLE;
    }
    if (fstat(f, &st) != 0 || (status = checkRegular(st, message, length)) != WO_OK) {
        if (status == WO_OK) say(message, length, std::strerror(errno));
        close(f);
        return status == WO_OK ? WO_UNREADABLE : status;
    }
    *fd = f;
    *size = st.st_size;
    return WO_OK;
}

/// CRC-32 as the PNG specification (section 5.5, ISO 3309 polynomial 0xEDB88320) defines it for chunks.
uint32_t crc32PNG(const unsigned char *data, size_t length, uint32_t crc = 0xFFFFFFFFu) {
    static uint32_t table[256];
    static bool ready = [] {
        for (uint32_t n = 0; n < 256; n++) {
            uint32_t c = n;
            for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            table[n] = c;
        }
        return true;
    }();
    (void)ready;
    for (size_t i = 0; i < length; i++) crc = table[(crc ^ data[i]) & 0xFF] ^ (crc >> 8);
    return crc;
}

uint32_t bigEndian32(const unsigned char *p) {
    return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}

/// Reads exactly `length` bytes at `offset`; false on an error (errno says which) or at the end of the file
/// (errno 0: the file is shorter than its size said, i.e. it shrank while being read).
bool readAt(int fd, unsigned char *into, size_t length, off_t offset) {
    while (length > 0) {
        ssize_t n = pread(fd, into, length, offset);
        if (n < 0 && errno == EINTR) continue;
        if (n == 0) errno = 0;
        if (n <= 0) return false;
        into += n;
        length -= static_cast<size_t>(n);
        offset += n;
    }
    return true;
}

/// Checks a PNG's framing before any decoder sees it (PNG specification sections 5.2-5.6, 11.2.2): the
/// signature, IHDR first and 13 bytes long, every chunk inside the file with a matching CRC-32, IEND last. This
/// keeps libpng from printing its own "libpng error" lines for the common broken files (truncated, another
/// format) and names the fault. The image size is taken from IHDR (bytes 0-7: width, height) and checked
/// against WO_MAX_IMAGE_SIDE and WO_MAX_IMAGE_PIXELS as soon as IHDR is read, so an oversized image is refused
/// before anything is allocated for it. Why here and not through a library: this walk already reads and
/// CRC-checks IHDR, and OpenCV 4.6 has no public header-only reader (cv::ImageDecoder is internal to
/// imgcodecs; its OPENCV_IO_MAX_IMAGE_PIXELS limit, 2^30 by default, is read once from the environment and
/// fails with an exception text). Not a decoder: no image data is interpreted. The file is streamed in
/// 64 KiB blocks. Returns WO_OK, or WO_NOT_DECODABLE / WO_TOO_LARGE with the reason in `message`.
wo_status checkPNG(int fd, off_t size, char *message, size_t length) {
    static const unsigned char signature[8] = {137, 80, 78, 71, 13, 10, 26, 10};
    const uint64_t total = static_cast<uint64_t>(size);
    unsigned char head[8];
    if (total < 8 || !readAt(fd, head, 8, 0) || std::memcmp(head, signature, 8) != 0) {
        say(message, length, "not a PNG file (no PNG signature)");
        return WO_NOT_DECODABLE;
    }
    std::vector<unsigned char> block(65536);
    uint64_t i = 8;
    bool first = true;
    while (true) {
        if (i + 12 > total || !readAt(fd, head, 8, static_cast<off_t>(i))) {
            say(message, length, "truncated PNG (ends inside a chunk header, no IEND)");
            return WO_NOT_DECODABLE;
        }
        const uint32_t chunkLength = bigEndian32(head);
        const std::string type(reinterpret_cast<const char *>(head + 4), 4);
        if (i + 12 + chunkLength > total) {
            say(message, length, "truncated PNG (chunk " + type + " runs past the end)");
            return WO_NOT_DECODABLE;
        }
        if (first && (type != "IHDR" || chunkLength != 13)) {
            say(message, length, type != "IHDR" ? "corrupt PNG (first chunk is not IHDR)"
                                                : "corrupt PNG (IHDR is not 13 bytes long)");
            return WO_NOT_DECODABLE;
        }
        uint32_t crc = crc32PNG(head + 4, 4);
        for (uint64_t done = 0; done < chunkLength;) {
            const size_t n = static_cast<size_t>(std::min<uint64_t>(block.size(), chunkLength - done));
            if (!readAt(fd, block.data(), n, static_cast<off_t>(i + 8 + done))) {
                say(message, length, std::string("cannot read the file: ")
                                         + (errno != 0 ? std::strerror(errno) : "it shrank while being read"));
                return WO_NOT_DECODABLE;
            }
            if (first && done == 0) {
                const uint32_t width = bigEndian32(block.data()), height = bigEndian32(block.data() + 4);
                const std::string dimensions = std::to_string(width) + "x" + std::to_string(height) + " pixels";
                if (width == 0 || height == 0 || width > 0x7FFFFFFFu || height > 0x7FFFFFFFu) {
                    say(message, length, "corrupt PNG (IHDR gives " + dimensions + ")");
                    return WO_NOT_DECODABLE;
                }
                if (width > WO_MAX_IMAGE_SIDE || height > WO_MAX_IMAGE_SIDE) {
                    say(message, length, dimensions + ", over the limit of " + std::to_string(WO_MAX_IMAGE_SIDE)
                                             + " pixels a side for an overlay image");
                    return WO_TOO_LARGE;
                }
                if (uint64_t(width) * height > WO_MAX_IMAGE_PIXELS) {
                    say(message, length, dimensions + ", over the limit of " + std::to_string(WO_MAX_IMAGE_PIXELS)
                                             + " pixels (4096x4096) for an overlay image");
                    return WO_TOO_LARGE;
                }
            }
            crc = crc32PNG(block.data(), n, crc);
            done += n;
        }
        unsigned char stored[4];
        if (!readAt(fd, stored, 4, static_cast<off_t>(i + 8 + chunkLength))) {
            say(message, length, "truncated PNG (chunk " + type + " runs past the end)");
            return WO_NOT_DECODABLE;
        }
        if (bigEndian32(stored) != (crc ^ 0xFFFFFFFFu)) {
            say(message, length, "corrupt PNG (CRC mismatch in chunk " + type + ")");
            return WO_NOT_DECODABLE;
        }
        first = false;
        i += 12 + chunkLength;
        if (type == "IEND") return WO_OK;
    }
}

/// Closes a descriptor when the scope ends.
struct Descriptor {
    int fd = -1;
    ~Descriptor() {
        if (fd >= 0) close(fd);
    }
};

/// Checks, before an image or video is encoded, that `path` can be opened for writing (created if need be),
/// so a failure of the encoder's own writing afterwards is a write error (a full disk), not a missing folder
/// (WO_UNREADABLE). `*created` says whether the file was created here (to be removed if nothing is written).
/// Nothing is truncated. O_NONBLOCK: a FIFO without a reader fails (ENXIO) instead of blocking.
wo_status checkCreatable(const char *path, bool *created, char *message, size_t length) {
    const int flags = O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
    int fd = open(path, flags | O_CREAT | O_EXCL, 0666);
    *created = fd >= 0;
    if (fd < 0 && errno == EEXIST) fd = open(path, flags);
    if (fd < 0) {
        say(message, length, std::string("cannot create the file: ") + std::strerror(errno));
        return WO_UNREADABLE;
    }
    close(fd);
    return WO_OK;
}

/// Removes `path` if it is a regular file (an incomplete output), leaving devices and symbolic links alone.
void removeIncomplete(const char *path) {
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISREG(st.st_mode)) unlink(path);
}

}  // namespace

extern "C" {

wo_status wo_png_decode(const char *path, wo_image **out, char *message, size_t message_len) {
    if (path == nullptr || out == nullptr) return WO_BAD_ARGUMENT;
    *out = nullptr;
    Descriptor file;
    off_t size = 0;
    wo_status status = openRegular(path, &file.fd, &size, message, message_len);
    if (status != WO_OK) return status;
    status = checkPNG(file.fd, size, message, message_len);
    if (status != WO_OK) return status;
    const wink_codecs_api *codecs = wink_codecs_load(message, message_len);  // says why when it fails
    if (codecs == nullptr) return WO_INTERNAL;
    // The decoder reads the file that was checked, through its descriptor, even if the path changed since.
    const std::string self = "/proc/self/fd/" + std::to_string(file.fd);
    const char *source = access(self.c_str(), R_OK) == 0 ? self.c_str() : path;
    char why[640] = "";
    try {
        cv::Mat decoded;
        switch (codecs->imread(source, cv::IMREAD_UNCHANGED, &decoded, why, sizeof why)) {
        case WINK_CODECS_OK: break;
        case WINK_CODECS_FAILED:
            say(message, message_len, "corrupt or truncated PNG (the decoder gave up)");
            return WO_NOT_DECODABLE;
        case WINK_CODECS_ERROR:
            say(message, message_len, std::string("decoder failed: ") + why);
            return WO_NOT_DECODABLE;
        }
        // NOTES.md: 16-bit PNGs come back as CV_16UC*, grey+alpha and palette+tRNS as 4-channel 8-bit,
        // 1-bit grey as 1-channel 8-bit; an RGB colour key (tRNS) becomes an alpha channel.
        cv::Mat eight;
        if (decoded.depth() == CV_16U) {
            decoded.convertTo(eight, CV_8U, 255.0 / 65535.0);
        } else if (decoded.depth() == CV_8U) {
            eight = decoded;
        } else {
            say(message, message_len, "unsupported sample depth");
            return WO_NOT_DECODABLE;
        }
        auto image = new wo_image();
        switch (eight.channels()) {
        case 1: cv::cvtColor(eight, image->rgba, cv::COLOR_GRAY2RGBA); break;
        case 3: cv::cvtColor(eight, image->rgba, cv::COLOR_BGR2RGBA); break;
        case 4: cv::cvtColor(eight, image->rgba, cv::COLOR_BGRA2RGBA); break;
        default:
            delete image;
            say(message, message_len, "unsupported channel count");
            return WO_NOT_DECODABLE;
        }
        if (!image->rgba.isContinuous()) image->rgba = image->rgba.clone();
        *out = image;
        return WO_OK;
    } catch (const std::exception &e) {
        say(message, message_len, std::string("decoder failed: ") + e.what());
        return WO_NOT_DECODABLE;
    } catch (...) {
        say(message, message_len, "decoder failed");
        return WO_INTERNAL;
    }
}

void wo_image_destroy(wo_image *image) { delete image; }
int wo_image_width(const wo_image *image) { return image != nullptr ? image->rgba.cols : 0; }
int wo_image_height(const wo_image *image) { return image != nullptr ? image->rgba.rows : 0; }
const uint8_t *wo_image_rgba(const wo_image *image) {
    return image != nullptr && !image->rgba.empty() ? image->rgba.ptr<uint8_t>(0) : nullptr;
}

wo_status wo_layer_create(const uint8_t *rgba, int width, int height, int stride, float opacity, wo_layer **out) {
    if (rgba == nullptr || out == nullptr || width <= 0 || height <= 0 || stride < 4 * width) return WO_BAD_ARGUMENT;
    *out = nullptr;
    try {
        std::unique_ptr<wo_layer> layer(new wo_layer());  // freed if the allocation below throws
        layer->premultiplied.create(height, width, CV_32FC4);
        const float k = std::clamp(opacity, 0.0f, 1.0f) / 255.0f;
        for (int y = 0; y < height; y++) {
            const uint8_t *s = rgba + static_cast<size_t>(y) * stride;
            float *d = layer->premultiplied.ptr<float>(y);
            for (int x = 0; x < width; x++, s += 4, d += 4) {
                const float a = s[3] * k;  // 0...1
                d[0] = s[2] * a;
                d[1] = s[1] * a;
                d[2] = s[0] * a;
                d[3] = a;
            }
        }
        *out = layer.release();
        return WO_OK;
    } catch (...) {
        return WO_INTERNAL;
    }
}

void wo_layer_destroy(wo_layer *layer) { delete layer; }

wo_status wo_layer_draw(wo_layer *layer, uint8_t *bgr, int width, int height, int stride, wo_placement p,
                        int *drawn_pixels) {
    if (drawn_pixels != nullptr) *drawn_pixels = 0;
    if (layer == nullptr || bgr == nullptr || width <= 0 || height <= 0 || stride < 3 * width) return WO_BAD_ARGUMENT;
    const float bw = p.width, bh = p.height;
    if (!(bw > 0.0f && bh > 0.0f) || !std::isfinite(bw) || !std::isfinite(bh) || !std::isfinite(p.center_x)
        || !std::isfinite(p.center_y) || !std::isfinite(p.angle)) {
        return WO_OK;  // a degenerate box draws nothing
    }
    try {
        const float c = std::cos(p.angle), s = std::sin(p.angle);
        // The placed rectangle's bounding box in frame pixels, one pixel wider for bilinear reach.
        const float hx = 0.5f * bw, hy = 0.5f * bh;
        const float ex = std::abs(c) * hx + std::abs(s) * hy;
        const float ey = std::abs(s) * hx + std::abs(c) * hy;
        // Clamped in floating point first: a huge layer's edges are beyond what an int holds.
        auto edge = [](double v, int limit) { return static_cast<int>(std::clamp(v, -2.0, limit + 2.0)); };
        int x0 = edge(std::floor(double(p.center_x) - ex) - 1, width);
        int y0 = edge(std::floor(double(p.center_y) - ey) - 1, height);
        int x1 = edge(std::ceil(double(p.center_x) + ex) + 1, width);
        int y1 = edge(std::ceil(double(p.center_y) + ey) + 1, height);
        x0 = std::max(x0, 0);
        y0 = std::max(y0, 0);
        x1 = std::min(x1, width - 1);
        y1 = std::min(y1, height - 1);
        if (x0 > x1 || y0 > y1) return WO_OK;  // entirely outside the frame
        const int roiW = x1 - x0 + 1, roiH = y1 - y0 + 1;

        // Resample to the target size first, so the warp below runs at about 1:1 and only turns and shifts:
        // INTER_AREA on a shrinking axis (bilinear alone would alias), INTER_LINEAR on an enlarging one (its
        // replicated border keeps the layer's own edges sharp). Both on premultiplied colour. The size is
        // capped at twice the frame's larger side; the warp does the rest for larger layers.
        // Both sides are also capped together at `max_resized_pixels`, and an enlarged axis never below the
        // image's own size, so memory stays bounded however large the placement.
        DrawScratch &scratch = draw_scratch;
        const cv::Mat &full = layer->premultiplied;
        const int cap = 2 * std::max(width, height);
        double tw = std::min<double>(cap, std::round(bw)), th = std::min<double>(cap, std::round(bh));
        if (tw * th > max_resized_pixels) {
            const double k = std::sqrt(max_resized_pixels / (tw * th));
            tw = std::max<double>(std::min<double>(tw, full.cols), tw * k);
            th = std::max<double>(std::min<double>(th, full.rows), th * k);
        }
        const int rw = std::max(1, static_cast<int>(tw)), rh = std::max(1, static_cast<int>(th));
        const cv::Mat *source = &full;
        if (rw != full.cols || rh != full.rows) {
            const bool shrinkX = rw < full.cols, shrinkY = rh < full.rows;
            if (shrinkX == shrinkY || rw == full.cols || rh == full.rows) {
                cv::resize(full, scratch.resized, cv::Size(rw, rh), 0, 0,
                           (shrinkX || shrinkY) ? cv::INTER_AREA : cv::INTER_LINEAR);
            } else {
                // One axis shrinks, the other grows: area-average the shrinking one, then stretch the other.
                cv::resize(full, scratch.staged, cv::Size(shrinkX ? rw : full.cols, shrinkY ? rh : full.rows), 0,
                           0, cv::INTER_AREA);
                cv::resize(scratch.staged, scratch.resized, cv::Size(rw, rh), 0, 0, cv::INTER_LINEAR);
            }
            source = &scratch.resized;
        }
        // Source pixel (u, v) -> frame (x, y): local = (f ((u + 0.5) sx - bw/2), (v + 0.5) sy - bh/2) with
        // f = -1 for a mirrored layer, frame = centre + R(angle) local, then shifted into the region of interest.
        const float f = p.mirrored ? -1.0f : 1.0f;
        const float sx = f * bw / static_cast<float>(source->cols), sy = bh / static_cast<float>(source->rows);
        const float lx = f * (0.5f * std::abs(sx) - hx), ly = 0.5f * sy - hy;
        // The region is warped a band of rows at a time (the same pixels as in one go: each band's map is the
        // whole one shifted up by the band's first row).
        const int band = std::max(1, std::min(roiH, max_band_pixels / roiW));
        for (int b0 = 0; b0 < roiH; b0 += band) {
            const int bandH = std::min(band, roiH - b0);
            cv::Matx23d m(c * sx, -s * sy, p.center_x + c * lx - s * ly - x0,
                          s * sx, c * sy, p.center_y + s * lx + c * ly - y0 - b0);
            cv::warpAffine(*source, scratch.warped, m, cv::Size(roiW, bandH), cv::INTER_LINEAR,
                           cv::BORDER_CONSTANT, cv::Scalar::all(0));
            // "Over" on premultiplied colour (Porter & Duff 1984): out = src + dst * (1 - alpha_src).
            for (int y = 0; y < bandH; y++) {
                const float *w = scratch.warped.ptr<float>(y);
                uint8_t *d = bgr + static_cast<size_t>(y0 + b0 + y) * stride + static_cast<size_t>(x0) * 3;
                for (int x = 0; x < roiW; x++, w += 4, d += 3) {
                    const float a = w[3];
                    if (a <= 1e-6f) continue;
                    const float keep = 1.0f - std::min(a, 1.0f);
                    for (int k = 0; k < 3; k++) {
                        const float v = w[k] + d[k] * keep + 0.5f;
                        d[k] = static_cast<uint8_t>(std::clamp(v, 0.0f, 255.0f));
                    }
                }
            }
        }
        if (drawn_pixels != nullptr) *drawn_pixels = roiW * roiH;
        return WO_OK;
    } catch (...) {
        return WO_INTERNAL;
    }
}

wo_status wo_image_write(const char *path, const uint8_t *bgr, int width, int height, int stride, char *message,
                         size_t message_len) {
    if (path == nullptr || bgr == nullptr || width <= 0 || height <= 0 || stride < 3 * width) return WO_BAD_ARGUMENT;
    const std::string ext = lowercaseExtension(path);
    std::vector<int> params;
    if (ext == "png") {
        params = {cv::IMWRITE_PNG_COMPRESSION, 9};
    } else if (ext == "jpg" || ext == "jpeg") {
        params = {cv::IMWRITE_JPEG_QUALITY, 95};
    } else {
        say(message, message_len, "unsupported image extension '." + ext + "' (use .png, .jpg or .jpeg)");
        return WO_BAD_ARGUMENT;
    }
    const wink_codecs_api *codecs = wink_codecs_load(message, message_len);  // says why when it fails
    if (codecs == nullptr) return WO_INTERNAL;
    bool created = false;
    const wo_status creatable = checkCreatable(path, &created, message, message_len);
    if (creatable != WO_OK) return creatable;
    char why[640] = "";
    try {
        cv::Mat frame(height, width, CV_8UC3, const_cast<uint8_t *>(bgr), static_cast<size_t>(stride));
        switch (codecs->imwrite(path, &frame, params.data(), static_cast<int>(params.size()), why, sizeof why)) {
        case WINK_CODECS_OK: return WO_OK;
        case WINK_CODECS_FAILED:
            // The file could be opened a moment ago, so this is the encoding or the writing itself: the plugin
            // says which (e.g. "No space left on device") and has removed what it could not finish.
            if (created) removeIncomplete(path);
            say(message, message_len, std::string("writing failed: ") + (why[0] ? why : "the encoder gave up"));
            return WO_WRITE_FAILED;
        case WINK_CODECS_ERROR:
            if (created) removeIncomplete(path);
            say(message, message_len, std::string("cannot write the image file: ") + why);
            return WO_UNREADABLE;
        }
        return WO_INTERNAL;
    } catch (const std::exception &e) {
        say(message, message_len, std::string("cannot write the image file: ") + e.what());
        return WO_UNREADABLE;
    }
}

wo_status wo_video_writer_open(const char *path, int width, int height, double fps, wo_video_writer **out,
                               char *message, size_t message_len) {
    if (path == nullptr || out == nullptr || width <= 0 || height <= 0 || !(fps > 0)) return WO_BAD_ARGUMENT;
    *out = nullptr;
    const std::string ext = lowercaseExtension(path);
    int fourcc;
    if (ext == "mp4" || ext == "m4v" || ext == "mov") {
        fourcc = fourCC('m', 'p', '4', 'v');
    } else if (ext == "avi" || ext == "mkv") {
        fourcc = fourCC('M', 'J', 'P', 'G');
    } else {
        say(message, message_len, "unsupported video extension '." + ext + "' (use .mp4, .m4v, .mov, .avi or .mkv)");
        return WO_BAD_ARGUMENT;
    }
    const wink_codecs_api *codecs = wink_codecs_load(message, message_len);  // says why when it fails
    if (codecs == nullptr) return WO_INTERNAL;
    bool created = false;
    const wo_status creatable = checkCreatable(path, &created, message, message_len);
    if (creatable != WO_OK) return creatable;
    char why[640] = "";
    try {
        void *writer = codecs->video_writer_open(path, fourcc, fps, width, height, why, sizeof why);
        if (writer == nullptr) {
            if (created) removeIncomplete(path);
            say(message, message_len, why);
            return WO_UNREADABLE;
        }
        *out = new wo_video_writer{codecs, writer, width, height};
        return WO_OK;
    } catch (const std::exception &e) {
        say(message, message_len, std::string("cannot open a video writer: ") + e.what());
        return WO_UNREADABLE;
    }
}

wo_status wo_video_writer_write(wo_video_writer *writer, const uint8_t *bgr, int stride) {
    if (writer == nullptr || bgr == nullptr || stride < 3 * writer->width) return WO_BAD_ARGUMENT;
    try {
        cv::Mat frame(writer->height, writer->width, CV_8UC3, const_cast<uint8_t *>(bgr), static_cast<size_t>(stride));
        return writer->codecs->video_writer_write(writer->writer, &frame) == WINK_CODECS_OK ? WO_OK : WO_INTERNAL;
    } catch (...) {
        return WO_INTERNAL;
    }
}

void wo_video_writer_close(wo_video_writer *writer) {
    if (writer == nullptr) return;
    writer->codecs->video_writer_close(writer->writer);
    delete writer;
}

}  // extern "C"
