// CWinkVision: the upright-crop warp, cv::warpAffine's bilinear resampling computed without OpenCV on the
// frame path (see include/CWinkVision.h for the contract). No exception leaves this file.
#include "CWinkVision.h"
#include "VisionArguments.hpp"

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#ifdef __AVX2__
#include <immintrin.h>
#endif

using winkvision::valid_image;
using winkvision::wrap;

namespace {

// cv::warpAffine(src, dst, M, size, INTER_LINEAR | WARP_INVERSE_MAP, BORDER_REPLICATE), computed with
// OpenCV's own fixed-point arithmetic so that every output byte is the same (checked against OpenCV by
// wv_warp_affine_opencv's test), in about half its time: OpenCV builds coordinate maps block by block and
// then remaps them, here each group of 8 pixels is mapped, gathered and blended in AVX2 registers.
// OpenCV's recipe (imgwarp.cpp, WarpAffineInvoker and remapBilinear): source coordinates in 1/1024 px,
// X = round((M1 y + M2) 1024) + 16 + round(M0 x 1024), then >> 5 gives 1/32 px; the integer part picks
// the 2x2 neighbours (clamped into the image: BORDER_REPLICATE), the fraction the bilinear weights
// (32 - a, a) per axis, scaled to sum 32768, rounded at bit 15. All OpenCV's weights are multiples of 32,
// so the same sum is taken here at 1/1024 and rounded at bit 10: the same integer.
// `M` maps output to source pixels (row-major 2x3, as doubles, as OpenCV widens a float matrix);
// `adelta`/`bdelta` are caller scratch of `dw` ints. Rounding: nearbyint in the default (to-even) mode,
// as cvRound.
inline int round_half_even(double v) { return static_cast<int>(std::nearbyint(v)); }
inline uint8_t warp_pixel(const uint8_t *src, int sw, int sh, size_t sstep, int X, int Y) {
    const int sx = std::clamp(X >> 5, -32768, 32767), sy = std::clamp(Y >> 5, -32768, 32767);
    const int ax = X & 31, ay = Y & 31;
    int p00, p01, p10, p11;
    if (static_cast<unsigned>(sx) < static_cast<unsigned>(sw - 1) && static_cast<unsigned>(sy) < static_cast<unsigned>(sh - 1)) {
        const uint8_t *s = src + sy * sstep + sx;
        p00 = s[0]; p01 = s[1]; p10 = s[sstep]; p11 = s[sstep + 1];
    } else {
        const int x0 = std::clamp(sx, 0, sw - 1), x1 = std::clamp(sx + 1, 0, sw - 1);
        const int y0 = std::clamp(sy, 0, sh - 1), y1 = std::clamp(sy + 1, 0, sh - 1);
        p00 = src[y0 * sstep + x0]; p01 = src[y0 * sstep + x1];
        p10 = src[y1 * sstep + x0]; p11 = src[y1 * sstep + x1];
    }
    // OpenCV's weights are 32 x these (sum 32768) with rounding at bit 15: the same as rounding at bit 10 here.
    const int top = p00 * (32 - ax) + p01 * ax, bottom = p10 * (32 - ax) + p11 * ax;
    return static_cast<uint8_t>((top * (32 - ay) + bottom * ay + 512) >> 10);
}
void warp_linear(const uint8_t *src, int sw, int sh, size_t sstep, const double *M, uint8_t *dst, int dw, int dh,
                        size_t dstep, int *adelta, int *bdelta) {
    constexpr int AB_BITS = 10, AB_SCALE = 1 << AB_BITS, INTER_BITS = 5, TAB = 1 << INTER_BITS;
    constexpr int round_delta = AB_SCALE / TAB / 2;
    for (int x = 0; x < dw; x++) {
        adelta[x] = round_half_even(M[0] * x * AB_SCALE);
        bdelta[x] = round_half_even(M[3] * x * AB_SCALE);
    }
    for (int y = 0; y < dh; y++) {
        const int X0 = round_half_even((M[1] * y + M[2]) * AB_SCALE) + round_delta;
        const int Y0 = round_half_even((M[4] * y + M[5]) * AB_SCALE) + round_delta;
        uint8_t *out = dst + y * dstep;
        int x = 0;
#ifdef __AVX2__
        const bool wide = sw >= 4 && sh >= 3;  // the border path's 4-byte loads need 4 columns
        const __m256i vX0 = _mm256_set1_epi32(X0), vY0 = _mm256_set1_epi32(Y0);
        const __m256i k31 = _mm256_set1_epi32(31), k32 = _mm256_set1_epi32(32), kff = _mm256_set1_epi32(0xff);
        const __m256i xlim = _mm256_set1_epi32(sw - 1), ylim = _mm256_set1_epi32(sh - 2);
        const __m256i step = _mm256_set1_epi32(static_cast<int>(sstep)), round = _mm256_set1_epi32(512);
        const __m256i last = _mm256_set1_epi32(static_cast<int>((sh - 1) * sstep + sw - 4));
        const __m256i bytes = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                               0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
        for (; wide && x + 8 <= dw; x += 8) {
            const __m256i X = _mm256_srai_epi32(_mm256_add_epi32(vX0, _mm256_loadu_si256((const __m256i *)(adelta + x))), 5);
            const __m256i Y = _mm256_srai_epi32(_mm256_add_epi32(vY0, _mm256_loadu_si256((const __m256i *)(bdelta + x))), 5);
            const __m256i sx = _mm256_srai_epi32(X, 5), sy = _mm256_srai_epi32(Y, 5);
            // Every lane inside (0 <= sx < sw-1, 0 <= sy < sh-2, so 4-byte reads stay in the image)?
            const __m256i outside = _mm256_or_si256(
                _mm256_or_si256(_mm256_cmpgt_epi32(_mm256_setzero_si256(), sx), _mm256_cmpgt_epi32(_mm256_add_epi32(sx, _mm256_set1_epi32(1)), xlim)),
                _mm256_or_si256(_mm256_cmpgt_epi32(_mm256_setzero_si256(), sy), _mm256_cmpgt_epi32(_mm256_add_epi32(sy, _mm256_set1_epi32(1)), ylim)));
            __m256i top, bot;
            if (!_mm256_testz_si256(outside, outside)) {
                // Near or past the border: the four neighbours' coordinates clamped into the image (OpenCV's
                // BORDER_REPLICATE), each read as the low byte of a 4-byte load that ends inside the image.
                const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi32(1);
                const __m256i xmax = xlim, ymax = _mm256_set1_epi32(sh - 1);
                const __m256i x0 = _mm256_max_epi32(zero, _mm256_min_epi32(sx, xmax));
                const __m256i x1 = _mm256_max_epi32(zero, _mm256_min_epi32(_mm256_add_epi32(sx, one), xmax));
                const __m256i r0 = _mm256_mullo_epi32(_mm256_max_epi32(zero, _mm256_min_epi32(sy, ymax)), step);
                const __m256i r1 = _mm256_mullo_epi32(_mm256_max_epi32(zero, _mm256_min_epi32(_mm256_add_epi32(sy, one), ymax)), step);
                auto pick = [&](__m256i off) {
                    const __m256i safe = _mm256_min_epi32(off, last);
                    const __m256i g = _mm256_i32gather_epi32((const int *)src, safe, 1);
                    return _mm256_and_si256(_mm256_srlv_epi32(g, _mm256_slli_epi32(_mm256_sub_epi32(off, safe), 3)), kff);
                };
                top = _mm256_or_si256(pick(_mm256_add_epi32(r0, x0)), _mm256_slli_epi32(pick(_mm256_add_epi32(r0, x1)), 16));
                bot = _mm256_or_si256(pick(_mm256_add_epi32(r1, x0)), _mm256_slli_epi32(pick(_mm256_add_epi32(r1, x1)), 16));
            } else {
                const __m256i offset = _mm256_add_epi32(_mm256_mullo_epi32(sy, step), sx);
                const __m256i g0 = _mm256_i32gather_epi32((const int *)src, offset, 1);
                const __m256i g1 = _mm256_i32gather_epi32((const int *)(src + sstep), offset, 1);
                // (p00, p01) and (p10, p11) as 16-bit pairs.
                top = _mm256_or_si256(_mm256_and_si256(g0, kff), _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(g0, 8), kff), 16));
                bot = _mm256_or_si256(_mm256_and_si256(g1, kff), _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(g1, 8), kff), 16));
            }
            const __m256i ax = _mm256_and_si256(X, k31), ay = _mm256_and_si256(Y, k31);
            const __m256i wx = _mm256_or_si256(_mm256_sub_epi32(k32, ax), _mm256_slli_epi32(ax, 16));
            const __m256i wy = _mm256_or_si256(_mm256_sub_epi32(k32, ay), _mm256_slli_epi32(ay, 16));
            const __m256i ht = _mm256_madd_epi16(top, wx), hb = _mm256_madd_epi16(bot, wx);
            const __m256i v = _mm256_srai_epi32(_mm256_add_epi32(_mm256_madd_epi16(_mm256_or_si256(ht, _mm256_slli_epi32(hb, 16)), wy), round), 10);
            const __m256i packed = _mm256_shuffle_epi8(v, bytes);
            const uint32_t lo = static_cast<uint32_t>(_mm256_extract_epi32(packed, 0)), hi = static_cast<uint32_t>(_mm256_extract_epi32(packed, 4));
            const uint64_t both = lo | (static_cast<uint64_t>(hi) << 32);
            std::memcpy(out + x, &both, 8);
        }
#endif
        for (; x < dw; x++)
            out[x] = warp_pixel(src, sw, sh, sstep, (X0 + adelta[x]) >> (AB_BITS - INTER_BITS), (Y0 + bdelta[x]) >> (AB_BITS - INTER_BITS));
    }
}

/// Largest output width `warp_linear` is used for (its per-column scratch lives on the stack).
constexpr int max_warp_width = 1024;

}  // namespace

extern "C" {

wv_status wv_warp_affine(const uint8_t *gray, int width, int height, int stride, const float *m,
                         uint8_t *out, int out_width, int out_height) {
    if (!valid_image(gray, width, height, stride) || !m || !out || out_width <= 0 || out_height <= 0)
        return WV_BAD_ARGUMENT;
    if (out_width > max_warp_width) return wv_warp_affine_opencv(gray, width, height, stride, m, out, out_width, out_height);
    int adelta[max_warp_width], bdelta[max_warp_width];
    const double M[6] = {m[0], m[1], m[2], m[3], m[4], m[5]};
    warp_linear(gray, width, height, static_cast<size_t>(stride), M, out, out_width, out_height,
                static_cast<size_t>(out_width), adelta, bdelta);
    return WV_OK;
}

wv_status wv_warp_affine_opencv(const uint8_t *gray, int width, int height, int stride, const float *m,
                                uint8_t *out, int out_width, int out_height) {
    if (!valid_image(gray, width, height, stride) || !m || !out || out_width <= 0 || out_height <= 0)
        return WV_BAD_ARGUMENT;
    try {
        cv::Mat dst(out_height, out_width, CV_8UC1, out);
        cv::Matx23f map(m[0], m[1], m[2], m[3], m[4], m[5]);
        cv::warpAffine(wrap(gray, width, height, stride), dst, map, dst.size(),
                       cv::INTER_LINEAR | cv::WARP_INVERSE_MAP, cv::BORDER_REPLICATE);
        return WV_OK;
    } catch (...) {
        return WV_INTERNAL;
    }
}

}  // extern "C"
