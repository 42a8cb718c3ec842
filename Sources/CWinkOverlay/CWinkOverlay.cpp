#include "CWinkOverlay.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include <sys/stat.h>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>  // flag constants only; the codecs are in the WinkCodecs plugin
#include <opencv2/imgproc.hpp>

#include "WinkCodecs.h"

struct wo_image {
    cv::Mat rgba;  // CV_8UC4, continuous
};

struct wo_layer {
    cv::Mat premultiplied;  // CV_32FC4, B G R A, colour already multiplied by alpha and opacity
    cv::Mat staged;         // scratch: first step of a two-step resize
    cv::Mat resized;        // scratch: the layer resampled to the current placement's size
    cv::Mat warped;         // scratch: the warped region of interest
};

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

void say(char *message, size_t length, const std::string &text) {
    if (message != nullptr && length > 0) std::snprintf(message, length, "%s", text.c_str());
}

std::string lowercaseExtension(const char *path) {
    std::string p(path);
    size_t slash = p.find_last_of('/');
    size_t dot = p.find_last_of('.');
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
    std::string ext = p.substr(dot + 1);
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    return ext;
}

/// Checks that `path` exists, is a regular file and can be read.
wo_status checkReadable(const char *path, char *message, size_t length) {
    struct stat st;
    if (stat(path, &st) != 0) {
        int e = errno;
        say(message, length, e == ENOENT ? "no such file" : std::strerror(e));
        return e == ENOENT ? WO_MISSING : WO_UNREADABLE;
    }
    if (S_ISDIR(st.st_mode)) {
        say(message, length, "is a directory, not an image");
        return WO_UNREADABLE;
    }
    FILE *f = std::fopen(path, "rb");
    if (f == nullptr) {
        say(message, length, std::strerror(errno));
        return WO_UNREADABLE;
    }
    std::fclose(f);
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

/// Checks a PNG's framing before any decoder sees it (PNG specification sections 5.2-5.6): the signature,
/// IHDR first, every chunk inside the file with a matching CRC-32, IEND last. This keeps libpng from printing
/// its own "libpng error" lines for the common broken files (truncated, another format) and names the fault.
/// Not a decoder: no image data is interpreted. Returns an empty string when the framing is sound.
std::string checkPNGFraming(const char *path) {
    static const unsigned char signature[8] = {137, 80, 78, 71, 13, 10, 26, 10};
    FILE *f = std::fopen(path, "rb");
    if (f == nullptr) return std::strerror(errno);
    std::vector<unsigned char> bytes;
    unsigned char block[65536];
    size_t n;
    while ((n = std::fread(block, 1, sizeof block, f)) > 0) bytes.insert(bytes.end(), block, block + n);
    std::fclose(f);
    if (bytes.size() < 8 || std::memcmp(bytes.data(), signature, 8) != 0) return "not a PNG file (no PNG signature)";
    size_t i = 8;
    bool first = true;
    while (true) {
        if (i + 12 > bytes.size()) return "truncated PNG (ends inside a chunk header, no IEND)";
        const uint32_t length = bigEndian32(&bytes[i]);
        const std::string type(reinterpret_cast<const char *>(&bytes[i + 4]), 4);
        if (length > bytes.size() || i + 12 + length > bytes.size()) {
            return "truncated PNG (chunk " + type + " runs past the end)";
        }
        if (first && type != "IHDR") return "corrupt PNG (first chunk is not IHDR)";
        first = false;
        const uint32_t stored = bigEndian32(&bytes[i + 8 + length]);
        const uint32_t computed = crc32PNG(&bytes[i + 4], 4 + length) ^ 0xFFFFFFFFu;
        if (stored != computed) return "corrupt PNG (CRC mismatch in chunk " + type + ")";
        i += 12 + length;
        if (type == "IEND") return "";
    }
}

}  // namespace

extern "C" {

wo_status wo_png_decode(const char *path, wo_image **out, char *message, size_t message_len) {
    if (path == nullptr || out == nullptr) return WO_BAD_ARGUMENT;
    *out = nullptr;
    wo_status readable = checkReadable(path, message, message_len);
    if (readable != WO_OK) return readable;
    const std::string framing = checkPNGFraming(path);
    if (!framing.empty()) {
        say(message, message_len, framing);
        return WO_NOT_DECODABLE;
    }
    const wink_codecs_api *codecs = wink_codecs_load(message, message_len);  // says why when it fails
    if (codecs == nullptr) return WO_INTERNAL;
    char why[640] = "";
    try {
        cv::Mat decoded;
        switch (codecs->imread(path, cv::IMREAD_UNCHANGED, &decoded, why, sizeof why)) {
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
int wo_image_width(const wo_image *image) { return image->rgba.cols; }
int wo_image_height(const wo_image *image) { return image->rgba.rows; }
const uint8_t *wo_image_rgba(const wo_image *image) { return image->rgba.ptr<uint8_t>(0); }

wo_status wo_layer_create(const uint8_t *rgba, int width, int height, int stride, float opacity, wo_layer **out) {
    if (rgba == nullptr || out == nullptr || width <= 0 || height <= 0 || stride < 4 * width) return WO_BAD_ARGUMENT;
    *out = nullptr;
    try {
        auto layer = new wo_layer();
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
        *out = layer;
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
        int x0 = static_cast<int>(std::floor(p.center_x - ex)) - 1;
        int y0 = static_cast<int>(std::floor(p.center_y - ey)) - 1;
        int x1 = static_cast<int>(std::ceil(p.center_x + ex)) + 1;
        int y1 = static_cast<int>(std::ceil(p.center_y + ey)) + 1;
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
        const cv::Mat &full = layer->premultiplied;
        const int cap = 2 * std::max(width, height);
        const int rw = std::max(1, std::min(cap, static_cast<int>(std::lround(bw))));
        const int rh = std::max(1, std::min(cap, static_cast<int>(std::lround(bh))));
        const cv::Mat *source = &full;
        if (rw != full.cols || rh != full.rows) {
            const bool shrinkX = rw < full.cols, shrinkY = rh < full.rows;
            if (shrinkX == shrinkY || rw == full.cols || rh == full.rows) {
                cv::resize(full, layer->resized, cv::Size(rw, rh), 0, 0,
                           (shrinkX || shrinkY) ? cv::INTER_AREA : cv::INTER_LINEAR);
            } else {
                // One axis shrinks, the other grows: area-average the shrinking one, then stretch the other.
                cv::resize(full, layer->staged, cv::Size(shrinkX ? rw : full.cols, shrinkY ? rh : full.rows), 0, 0,
                           cv::INTER_AREA);
                cv::resize(layer->staged, layer->resized, cv::Size(rw, rh), 0, 0, cv::INTER_LINEAR);
            }
            source = &layer->resized;
        }
        // Source pixel (u, v) -> frame (x, y): local = (f ((u + 0.5) sx - bw/2), (v + 0.5) sy - bh/2) with
        // f = -1 for a mirrored layer, frame = centre + R(angle) local, then shifted into the region of interest.
        const float f = p.mirrored ? -1.0f : 1.0f;
        const float sx = f * bw / static_cast<float>(source->cols), sy = bh / static_cast<float>(source->rows);
        const float lx = f * (0.5f * std::abs(sx) - hx), ly = 0.5f * sy - hy;
        cv::Matx23d m(c * sx, -s * sy, p.center_x + c * lx - s * ly - x0,
                      s * sx, c * sy, p.center_y + s * lx + c * ly - y0);
        cv::warpAffine(*source, layer->warped, m, cv::Size(roiW, roiH), cv::INTER_LINEAR, cv::BORDER_CONSTANT,
                       cv::Scalar::all(0));

        // "Over" on premultiplied colour (Porter & Duff 1984): out = src + dst * (1 - alpha_src).
        for (int y = 0; y < roiH; y++) {
            const float *w = layer->warped.ptr<float>(y);
            uint8_t *d = bgr + static_cast<size_t>(y0 + y) * stride + static_cast<size_t>(x0) * 3;
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
    char why[640] = "";
    try {
        cv::Mat frame(height, width, CV_8UC3, const_cast<uint8_t *>(bgr), static_cast<size_t>(stride));
        switch (codecs->imwrite(path, &frame, params.data(), static_cast<int>(params.size()), why, sizeof why)) {
        case WINK_CODECS_OK: return WO_OK;
        case WINK_CODECS_FAILED:
            say(message, message_len, "cannot write the image file");
            return WO_UNREADABLE;
        case WINK_CODECS_ERROR:
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
    char why[640] = "";
    try {
        void *writer = codecs->video_writer_open(path, fourcc, fps, width, height, why, sizeof why);
        if (writer == nullptr) {
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
