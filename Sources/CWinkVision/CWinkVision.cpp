// CWinkVision: see include/CWinkVision.h for the contract. No exception leaves this file.
#include "CWinkVision.h"

#include <dlib/image_processing.h>
#include <dlib/image_processing/frontal_face_detector.h>
#include <dlib/opencv/cv_image.h>
#include <opencv2/calib3d.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cerrno>
#include <cfloat>
#ifdef __AVX2__
#include <immintrin.h>
#endif
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <sys/stat.h>
#include <vector>

struct wv_detector {
    dlib::frontal_face_detector detector = dlib::get_frontal_face_detector();
    /// `detector` with its image pyramid cut to n + 1 levels, at [n], built when first needed.
    std::unique_ptr<dlib::frontal_face_detector> limited[12];
    cv::Mat small;      // reused downscaled frame
    std::vector<dlib::rect_detection> dets;

    /// The detector whose pyramid stops at the last level whose boxes are at most `max_width` pixels wide
    /// (in the image it is given): dlib's frontal detector reports boxes of about 73 px at the pyramid's
    /// first level, each further level (pyramid_down<6>) 6/5 as wide. The first level is always searched.
    /// 0 = every level.
    dlib::frontal_face_detector &reaching(double max_width) {
        if (!(max_width > 0)) return detector;
        const int extra = std::max(0, static_cast<int>(std::floor(std::log(max_width / 73.0) / std::log(1.2))));
        if (extra >= 12) return detector;
        if (!limited[extra]) {
            dlib::scan_fhog_pyramid<dlib::pyramid_down<6>> scanner;
            scanner.copy_configuration(detector.get_scanner());
            scanner.set_max_pyramid_levels(extra + 1);
            std::vector<dlib::matrix<double, 0, 1>> w;
            for (unsigned long i = 0; i < detector.num_detectors(); i++) w.push_back(detector.get_w(i));
            limited[extra] = std::make_unique<dlib::frontal_face_detector>(scanner, detector.get_overlap_tester(), w);
        }
        return *limited[extra];
    }
};

#include "PredictorState.hpp"  // struct wv_predictor, shared with ModelCache.cpp

namespace {

void write_message(char *message, size_t len, const std::string &text) {
    if (message == nullptr || len == 0) return;
    std::snprintf(message, len, "%s", text.c_str());
}

// The rectangle dlib's predictor is given for `box` (inclusive corners, rounded to pixels).
dlib::rectangle predictor_rect(wv_rect box) {
    return dlib::rectangle(std::lround(box.x), std::lround(box.y), std::lround(box.x + box.width - 1),
                           std::lround(box.y + box.height - 1));
}

bool valid_box(wv_rect box) {
    return box.width > 1 && box.height > 1 && std::isfinite(box.x) && std::isfinite(box.y) &&
           std::isfinite(box.width) && std::isfinite(box.height) && std::fabs(box.x) < 1e7f &&
           std::fabs(box.y) < 1e7f && box.width < 1e7f && box.height < 1e7f;
}

bool valid_image(const uint8_t *gray, int width, int height, int stride) {
    return gray != nullptr && width > 0 && height > 0 && stride >= width;
}

// Wraps caller memory as a cv::Mat header without copying.
cv::Mat wrap(const uint8_t *gray, int width, int height, int stride) {
    return cv::Mat(height, width, CV_8UC1, const_cast<uint8_t *>(gray), static_cast<size_t>(stride));
}

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


float distance(const float *xy, int a, int b) {
    float dx = xy[2 * a] - xy[2 * b], dy = xy[2 * a + 1] - xy[2 * b + 1];
    return std::sqrt(dx * dx + dy * dy);
}

// Eye aspect ratio over six landmarks p1..p6 starting at `first` (Soukupova & Cech, CVWW 2016).
float eye_aspect_ratio(const float *xy, int first) {
    float horizontal = distance(xy, first, first + 3);
    if (horizontal <= 0) return 0;
    return (distance(xy, first + 1, first + 5) + distance(xy, first + 2, first + 4)) / (2 * horizontal);
}

// Median of the grey values inside [x0,x1) x [y0,y1) (clipped to the image), by a 256-bin histogram.
float median_in(const cv::Mat &img, int x0, int y0, int x1, int y1) {
    x0 = std::max(0, x0); y0 = std::max(0, y0);
    x1 = std::min(img.cols, x1); y1 = std::min(img.rows, y1);
    if (x1 <= x0 || y1 <= y0) return 0;
    uint32_t hist[256] = {0};
    uint32_t n = 0;
    for (int y = y0; y < y1; y++) {
        const uint8_t *row = img.ptr<uint8_t>(y);
        for (int x = x0; x < x1; x++) { hist[row[x]]++; n++; }
    }
    uint32_t half = n / 2, acc = 0;
    for (int v = 0; v < 256; v++) { acc += hist[v]; if (acc > half) return static_cast<float>(v); }
    return 255;
}

// ---- Head pose: Levenberg-Marquardt on the reprojection error ------------------------------------------
// The 7 model points of wv_head_pose (nose tip 30, chin 8, outer eye corners 36/45, mouth corners 48/54,
// nose root 27): a generic face in millimetre-like units, x to the image's right, y down, z away from the
// camera (the nose tip nearest). After the widely used model of S. Mallick, "Head Pose Estimation using
// OpenCV and Dlib" (LearnOpenCV, 2016), with y and z flipped into OpenCV's camera axes.
constexpr double pose_model[7][3] = {
    {0.0, 0.0, 0.0},          // 30 nose tip
    {0.0, 330.0, 65.0},       // 8 chin
    {-225.0, -170.0, 135.0},  // 36 right eye outer corner (image left)
    {225.0, -170.0, 135.0},   // 45 left eye outer corner
    {-150.0, 150.0, 125.0},   // 48 mouth right corner
    {150.0, 150.0, 125.0},    // 54 mouth left corner
    {0.0, -170.0, 90.0},      // 27 nose root
};
constexpr int pose_index[7] = {30, 8, 36, 45, 48, 54, 27};

// R = Rodrigues(r) (row-major) and dR[i] = dR/dr_i, by cvRodrigues2's formulas (R = I and the first-order
// derivative below DBL_EPSILON).
void rodrigues(const double r[3], double R[9], double dR[3][9]) {
    const double th = std::sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
    const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    if (th < DBL_EPSILON) {
        std::copy(I, I + 9, R);
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 9; k++) dR[i][k] = 0;
        dR[0][5] = dR[1][6] = dR[2][1] = -1;
        dR[0][7] = dR[1][2] = dR[2][3] = 1;
        return;
    }
    const double c = std::cos(th), s = std::sin(th), c1 = 1 - c, it = 1 / th;
    const double rx = r[0] * it, ry = r[1] * it, rz = r[2] * it;
    const double rrt[9] = {rx * rx, rx * ry, rx * rz, rx * ry, ry * ry, ry * rz, rx * rz, ry * rz, rz * rz};
    const double r_x[9] = {0, -rz, ry, rz, 0, -rx, -ry, rx, 0};
    for (int k = 0; k < 9; k++) R[k] = c * I[k] + c1 * rrt[k] + s * r_x[k];
    const double drrt[27] = {rx + rx, ry, rz, ry, 0, 0, rz, 0, 0,
                             0, rx, 0, rx, ry + ry, rz, 0, rz, 0,
                             0, 0, rx, 0, 0, ry, rx, ry, rz + rz};
    const double d_r_x[27] = {0, 0, 0, 0, 0, -1, 0, 1, 0,
                              0, 0, 1, 0, 0, 0, -1, 0, 0,
                              0, -1, 0, 1, 0, 0, 0, 0, 0};
    for (int i = 0; i < 3; i++) {
        const double ri = i == 0 ? rx : i == 1 ? ry : rz;
        const double a0 = -s * ri, a1 = (s - 2 * c1 * it) * ri, a2 = c1 * it, a3 = (c - s * it) * ri, a4 = s * it;
        for (int k = 0; k < 9; k++)
            dR[i][k] = a0 * I[k] + a1 * rrt[k] + a2 * drrt[i * 9 + k] + a3 * r_x[k] + a4 * d_r_x[i * 9 + k];
    }
}

// cvProjectPoints2 without distortion: the model under pose p = (rvec, tvec) through a pinhole camera of
// focal length f and principal point (cx, cy); err = projected - observed (pixels, x then y per point)
// and, with J, its Jacobian with respect to p.
void project_model(const double p[6], const double img[7][2], double f, double cx, double cy, double err[14],
                   double (*J)[6]) {
    double R[9], dR[3][9];
    rodrigues(p, R, dR);
    for (int i = 0; i < 7; i++) {
        const double *M = pose_model[i];
        const double X = R[0] * M[0] + R[1] * M[1] + R[2] * M[2] + p[3];
        const double Y = R[3] * M[0] + R[4] * M[1] + R[5] * M[2] + p[4];
        const double Z = R[6] * M[0] + R[7] * M[1] + R[8] * M[2] + p[5];
        const double z = Z ? 1. / Z : 1, x = X * z, y = Y * z;
        err[2 * i] = f * x + cx - img[i][0];
        err[2 * i + 1] = f * y + cy - img[i][1];
        if (!J) continue;
        const double du[3] = {f * z, 0, -f * x * z}, dv[3] = {0, f * z, -f * y * z};  // d(u, v)/d(X, Y, Z)
        for (int k = 0; k < 3; k++) {
            J[2 * i][3 + k] = du[k];
            J[2 * i + 1][3 + k] = dv[k];
        }
        for (int j = 0; j < 3; j++) {
            const double *d = dR[j];
            const double dX = d[0] * M[0] + d[1] * M[1] + d[2] * M[2], dY = d[3] * M[0] + d[4] * M[1] + d[5] * M[2],
                         dZ = d[6] * M[0] + d[7] * M[1] + d[8] * M[2];
            J[2 * i][j] = du[0] * dX + du[2] * dZ;
            J[2 * i + 1][j] = dv[1] * dY + dv[2] * dZ;
        }
    }
}

// Solves A x = b for a 6x6 symmetric positive definite A (Cholesky); false if A is not.
bool solve6(const double A[6][6], const double b[6], double x[6]) {
    double L[6][6] = {}, y[6];
    for (int i = 0; i < 6; i++)
        for (int j = 0; j <= i; j++) {
            double s = A[i][j];
            for (int k = 0; k < j; k++) s -= L[i][k] * L[j][k];
            if (i == j) {
                if (!(s > 0)) return false;
                L[i][i] = std::sqrt(s);
            } else {
                L[i][j] = s / L[j][j];
            }
        }
    for (int i = 0; i < 6; i++) {
        double s = b[i];
        for (int k = 0; k < i; k++) s -= L[i][k] * y[k];
        y[i] = s / L[i][i];
    }
    for (int i = 5; i >= 0; i--) {
        double s = y[i];
        for (int k = i + 1; k < 6; k++) s -= L[k][i] * x[k];
        x[i] = s / L[i][i];
    }
    return true;
}

double norm14(const double e[14]) {
    double s = 0;
    for (int i = 0; i < 14; i++) s += e[i] * e[i];
    return std::sqrt(s);
}

// OpenCV's SOLVEPNP_ITERATIVE refinement from an extrinsic guess (cvFindExtrinsicCameraParams2's
// CvLevMarq loop), step for step: Levenberg-Marquardt on p = (rvec, tvec), starting at lambda = 1e-3
// (JtJ's diagonal scaled by 1 + lambda, lambda x10 per rejected step and /10 per accepted one, within
// 1e-16...1e16), stopping after 20 accepted steps or when a step changes p by less than FLT_EPSILON
// relative (L2). The same steps matter, not just the same minimum: on a real face the generic model
// leaves the error surface so flat that OpenCV often stops degrees away from the minimum, and winkd's
// poses are OpenCV's. Solved by Cholesky instead of OpenCV's SVD (the same solution to rounding), with
// no heap allocation, in about a tenth of OpenCV's time. p is updated in place.
void opencv_pose_refinement(double p[6], const double img[7][2], double f, double cx, double cy) {
    double err[14], J[14][6], JtJ[6][6], JtErr[6], prev[6];
    int lambdaLg10 = -3, iters = 0;
    double prevErrNorm = 0;
    project_model(p, img, f, cx, cy, err, J);
    for (;;) {
        for (int a = 0; a < 6; a++) {
            JtErr[a] = 0;
            for (int i = 0; i < 14; i++) JtErr[a] += J[i][a] * err[i];
            for (int b = 0; b < 6; b++) {
                double s = 0;
                for (int i = 0; i < 14; i++) s += J[i][a] * J[i][b];
                JtJ[a][b] = s;
            }
        }
        std::copy(p, p + 6, prev);
        auto step = [&] {
            const double lambda = std::exp(lambdaLg10 * std::log(10.));
            double A[6][6], x[6];
            for (int a = 0; a < 6; a++)
                for (int b = 0; b < 6; b++) A[a][b] = JtJ[a][b] * (a == b ? 1. + lambda : 1.);
            if (!solve6(A, JtErr, x)) std::fill(x, x + 6, 0.0);
            for (int k = 0; k < 6; k++) p[k] = prev[k] - x[k];
        };
        step();
        if (iters == 0) prevErrNorm = norm14(err);
        for (;;) {
            project_model(p, img, f, cx, cy, err, nullptr);
            const double errNorm = norm14(err);
            if (errNorm > prevErrNorm && ++lambdaLg10 <= 16) {
                step();
                continue;
            }
            lambdaLg10 = std::max(lambdaLg10 - 1, -16);
            double dn = 0, pn = 0;
            for (int k = 0; k < 6; k++) {
                dn += (p[k] - prev[k]) * (p[k] - prev[k]);
                pn += prev[k] * prev[k];
            }
            if (++iters >= 20 || std::sqrt(dn) / (std::sqrt(pn) + DBL_EPSILON) < FLT_EPSILON) return;
            prevErrNorm = errNorm;
            break;
        }
        project_model(p, img, f, cx, cy, err, J);
    }
}

// Yaw, pitch, roll (degrees, WinkCore.HeadPose's signs) of a camera-frame rotation, by OpenCV's RQ
// decomposition (angles about x, y, z).
bool pose_angles(const cv::Matx33d &R, float *yaw, float *pitch, float *roll) {
    cv::Matx33d Rq, Qq;
    cv::Vec3d angles = cv::RQDecomp3x3(R, Rq, Qq);
    // About y: positive turns the face's +x (its left side... in the image's right) away from camera.
    *pitch = static_cast<float>(-angles[0]);
    *yaw = static_cast<float>(angles[1]);
    *roll = static_cast<float>(angles[2]);
    return std::isfinite(*yaw) && std::isfinite(*pitch) && std::isfinite(*roll);
}

}  // namespace

extern "C" {

wv_detector *wv_detector_create(void) {
    try {
        return new wv_detector();
    } catch (...) {
        return nullptr;
    }
}

void wv_detector_destroy(wv_detector *detector) { delete detector; }

wv_status wv_detect(wv_detector *detector, const uint8_t *gray, int width, int height, int stride,
                    float scale, int upsample, float adjust_threshold, float max_width,
                    wv_rect *out, int capacity, int *count) {
    if (count) *count = 0;
    if (!detector || !valid_image(gray, width, height, stride) || !(scale > 0 && scale <= 4) || upsample < 0 ||
        upsample > 3 || (capacity > 0 && !out) || !count || !(max_width >= 0))
        return WV_BAD_ARGUMENT;
    try {
        cv::Mat full = wrap(gray, width, height, stride);
        const cv::Mat *src = &full;
        if (scale != 1) {
            cv::resize(full, detector->small, cv::Size(), scale, scale, scale < 1 ? cv::INTER_AREA : cv::INTER_LINEAR);
            src = &detector->small;
        }
        float factor = 1.0f / scale;
        detector->dets.clear();
        auto &hog = detector->reaching(static_cast<double>(max_width) * scale * (1 << upsample));
        if (upsample == 0) {
            dlib::cv_image<unsigned char> img(*src);
            hog(img, detector->dets, adjust_threshold);
        } else {
            dlib::array2d<unsigned char> up;
            dlib::assign_image(up, dlib::cv_image<unsigned char>(*src));
            for (int i = 0; i < upsample; i++) dlib::pyramid_up(up);
            hog(up, detector->dets, adjust_threshold);
            factor /= static_cast<float>(1 << upsample);
        }
        std::sort(detector->dets.begin(), detector->dets.end(),
                  [](const dlib::rect_detection &a, const dlib::rect_detection &b) {
                      return a.rect.area() > b.rect.area();
                  });
        int n = std::min<int>(capacity, static_cast<int>(detector->dets.size()));
        for (int i = 0; i < n; i++) {
            const auto &r = detector->dets[i].rect;
            out[i] = wv_rect{r.left() * factor, r.top() * factor, (r.width()) * factor, (r.height()) * factor,
                             static_cast<float>(detector->dets[i].detection_confidence)};
        }
        *count = n;
        return WV_OK;
    } catch (...) {
        return WV_INTERNAL;
    }
}

wv_status wv_predictor_load(const char *path, wv_predictor **out, char *message, size_t message_len) {
    if (!path || !out) return WV_BAD_ARGUMENT;
    *out = nullptr;
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR) {
            write_message(message, message_len, "model file does not exist");
            return WV_MODEL_MISSING;
        }
        write_message(message, message_len, std::string("cannot read model file: ") + std::strerror(errno));
        return WV_MODEL_UNREADABLE;
    }
    if (S_ISDIR(st.st_mode)) {
        write_message(message, message_len, "is a directory, not a model file");
        return WV_MODEL_UNREADABLE;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        write_message(message, message_len, std::string("cannot open model file: ") + std::strerror(errno));
        return WV_MODEL_UNREADABLE;
    }
    unsigned char magic[4] = {0, 0, 0, 0};
    in.read(reinterpret_cast<char *>(magic), 4);
    if (in.gcount() < 4) {
        write_message(message, message_len, "not a dlib shape predictor: the file is empty or truncated");
        return WV_MODEL_NOT_DLIB;
    }
    if (magic[0] == 'B' && magic[1] == 'Z' && magic[2] == 'h') {
        write_message(message, message_len,
                      "still bzip2-compressed: decompress it first (bunzip2), or use Debian's libdlib-data");
        return WV_MODEL_NOT_DLIB;
    }
    if (magic[0] == 0x1f && magic[1] == 0x8b) {
        write_message(message, message_len, "still gzip-compressed: decompress it first (gunzip)");
        return WV_MODEL_NOT_DLIB;
    }
    in.seekg(0);
    auto predictor = new (std::nothrow) wv_predictor();
    if (!predictor) return WV_INTERNAL;
    try {
        dlib::shape_predictor model;
        try {
            dlib::deserialize(model, in);
        } catch (const std::exception &e) {
            delete predictor;
            // dlib nests its reason in "while deserializing ..." lines: the first line is the one to tell.
            std::string what = e.what();
            what = what.substr(0, what.find_first_of("\r\n"));
            for (auto &c : what) if (c == '\t') c = ' ';
            while (!what.empty() && what.back() == ' ') what.pop_back();
            write_message(message, message_len, "not a dlib shape predictor, or a truncated one (" + what + ")");
            return WV_MODEL_NOT_DLIB;
        }
        if (model.num_parts() != 68) {
            write_message(message, message_len,
                          "a dlib shape predictor with " + std::to_string(model.num_parts()) +
                              " landmarks, but winkd needs the 68-point model (shape_predictor_68_face_landmarks.dat)");
            delete predictor;
            return WV_MODEL_WRONG_PARTS;
        }
        std::string why = winkvision::take_from_dlib(model, predictor->model);
        if (!why.empty()) {
            delete predictor;
            write_message(message, message_len, "a dlib shape predictor winkd cannot evaluate (" + why + ")");
            return WV_MODEL_NOT_DLIB;
        }
    } catch (...) {
        delete predictor;
        write_message(message, message_len, "not a dlib shape predictor");
        return WV_MODEL_NOT_DLIB;
    }
    *out = predictor;
    return WV_OK;
}

void wv_predictor_destroy(wv_predictor *predictor) { delete predictor; }

int wv_predictor_parts(const wv_predictor *predictor) {
    return predictor ? static_cast<int>(predictor->model.parts()) : 0;
}


wv_status wv_predict(wv_predictor *predictor, const uint8_t *gray, int width, int height, int stride,
                     wv_rect box, float *out_xy, int out_capacity) {
    if (!predictor || !valid_image(gray, width, height, stride) || !out_xy) return WV_BAD_ARGUMENT;
    int parts = static_cast<int>(predictor->model.parts());
    if (out_capacity < 2 * parts || !valid_box(box)) return WV_BAD_ARGUMENT;
    try {
        winkvision::evaluate(predictor->model, predictor->scratch, gray, width, height, static_cast<size_t>(stride),
                             predictor_rect(box), out_xy);
        return WV_OK;
    } catch (...) {
        return WV_INTERNAL;
    }
}

wv_status wv_predict_dlib(wv_predictor *predictor, const uint8_t *gray, int width, int height, int stride,
                          wv_rect box, float *out_xy, int out_capacity) {
    if (!predictor || !valid_image(gray, width, height, stride) || !out_xy) return WV_BAD_ARGUMENT;
    int parts = static_cast<int>(predictor->model.parts());
    if (out_capacity < 2 * parts || !valid_box(box)) return WV_BAD_ARGUMENT;
    try {
        if (!predictor->reference)
            predictor->reference = new dlib::shape_predictor(winkvision::to_dlib(predictor->model));
        dlib::cv_image<unsigned char> img(wrap(gray, width, height, stride));
        dlib::full_object_detection shape = (*predictor->reference)(img, predictor_rect(box));
        for (int i = 0; i < parts; i++) {
            out_xy[2 * i] = static_cast<float>(shape.part(i).x());
            out_xy[2 * i + 1] = static_cast<float>(shape.part(i).y());
        }
        return WV_OK;
    } catch (...) {
        return WV_INTERNAL;
    }
}

void wv_opencv_single_thread(void) {
    static const bool done = [] {
        try {
            cv::setNumThreads(1);
        } catch (...) {
        }
        return true;
    }();
    (void)done;
}

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

wv_status wv_normalize_contrast(uint8_t *gray, int width, int height, wv_rect box) {
    if (!valid_image(gray, width, height, width)) return WV_BAD_ARGUMENT;
    try {
        cv::Mat img(height, width, CV_8UC1, gray);
        cv::Rect r(static_cast<int>(box.x), static_cast<int>(box.y), static_cast<int>(box.width),
                   static_cast<int>(box.height));
        r &= cv::Rect(0, 0, width, height);
        if (r.width < 4 || r.height < 4) return WV_BAD_ARGUMENT;
        cv::Scalar mean, sd;
        cv::meanStdDev(img(r), mean, sd);
        if (mean[0] >= 70) return WV_OK;  // a lit face is left as it is
        cv::GaussianBlur(img, img, cv::Size(3, 3), 0);
        double alpha = 48.0 / std::max(4.0, sd[0]);
        alpha = std::min(alpha, 4.0);
        img.convertTo(img, CV_8U, alpha, 128.0 - alpha * mean[0]);
        return WV_OK;
    } catch (...) {
        return WV_INTERNAL;
    }
}

wv_status wv_sample_patch(const uint8_t *gray, int width, int height, int stride, wv_rect box, int size,
                          float *out) {
    if (!valid_image(gray, width, height, stride) || !out || size < 2 || size > 256) return WV_BAD_ARGUMENT;
    try {
        int x0 = std::max(0, static_cast<int>(std::floor(box.x)));
        int y0 = std::max(0, static_cast<int>(std::floor(box.y)));
        int x1 = std::min(width, static_cast<int>(std::ceil(box.x + box.width)));
        int y1 = std::min(height, static_cast<int>(std::ceil(box.y + box.height)));
        if (x1 - x0 < 2 || y1 - y0 < 2) return WV_BAD_ARGUMENT;
        cv::Mat roi = wrap(gray, width, height, stride)(cv::Rect(x0, y0, x1 - x0, y1 - y0));
        cv::Mat patch(size, size, CV_32FC1, out);
        thread_local cv::Mat small;  // allocated once per thread and size: no allocation per frame
        cv::resize(roi, small, cv::Size(size, size), 0, 0, cv::INTER_AREA);
        small.convertTo(patch, CV_32F);
        cv::Scalar mean = cv::mean(patch);
        // patch -= mean[0] as OpenCV computes it (the scalar narrowed to float, then float subtraction),
        // without the temporary OpenCV allocates for a scalar operand.
        const float m = static_cast<float>(mean[0]);
        for (int i = 0; i < size * size; i++) out[i] -= m;
        double norm = cv::norm(patch);
        if (norm > 1e-6) patch /= norm;
        return WV_OK;
    } catch (...) {
        return WV_INTERNAL;
    }
}

wv_status wv_measure_face(const uint8_t *gray, int width, int height, int stride, const float *xy,
                          wv_face_measure *out) {
    if (!valid_image(gray, width, height, stride) || !xy || !out) return WV_BAD_ARGUMENT;
    try {
        cv::Mat img = wrap(gray, width, height, stride);
        // Cheeks and nose: between the outer eye corners, from below the eyes to the upper lip.
        float eyeBottom = std::max(xy[2 * 41 + 1], xy[2 * 46 + 1]);
        float lip = xy[2 * 51 + 1];
        int x0 = static_cast<int>(xy[2 * 36]), x1 = static_cast<int>(xy[2 * 45]);
        int y0 = static_cast<int>(eyeBottom), y1 = static_cast<int>(lip);
        if (x1 - x0 < 2 || y1 - y0 < 2) {  // degenerate landmarks: fall back to the whole landmark box
            x0 = width; x1 = 0; y0 = height; y1 = 0;
            for (int i = 0; i < 68; i++) {
                x0 = std::min(x0, static_cast<int>(xy[2 * i])); x1 = std::max(x1, static_cast<int>(xy[2 * i]));
                y0 = std::min(y0, static_cast<int>(xy[2 * i + 1])); y1 = std::max(y1, static_cast<int>(xy[2 * i + 1]));
            }
        }
        float median = median_in(img, x0, y0, x1, y1);
        out->median_brightness = median;
        out->right_eye.aspect_ratio = eye_aspect_ratio(xy, 36);
        out->left_eye.aspect_ratio = eye_aspect_ratio(xy, 42);
        float left_logit = 0, right_logit = 0;  // a degenerate eye counts as undecided
        if (wv_eye_closure(gray, width, height, stride, xy, &left_logit, &right_logit) != WV_OK) {
            left_logit = right_logit = 0;
        }
        out->left_eye.closed_logit = left_logit;
        out->right_eye.closed_logit = right_logit;
        float minx = 1e9f, maxx = -1e9f, miny = 1e9f, maxy = -1e9f;
        for (int i = 0; i < 68; i++) {
            minx = std::min(minx, xy[2 * i]); maxx = std::max(maxx, xy[2 * i]);
            miny = std::min(miny, xy[2 * i + 1]); maxy = std::max(maxy, xy[2 * i + 1]);
        }
        float area = std::max(1.0f, (maxx - minx) * (maxy - miny));
        float vw = std::max(0.0f, std::min(maxx, static_cast<float>(width)) - std::max(minx, 0.0f));
        float vh = std::max(0.0f, std::min(maxy, static_cast<float>(height)) - std::max(miny, 0.0f));
        out->visible_fraction = std::clamp(vw * vh / area, 0.0f, 1.0f);
        return WV_OK;
    } catch (...) {
        return WV_INTERNAL;
    }
}

wv_status wv_head_pose(const float *xy, int width, int height, float *yaw, float *pitch, float *roll) {
    if (!xy || width <= 0 || height <= 0 || !yaw || !pitch || !roll) return WV_BAD_ARGUMENT;
    try {
        double img[7][2];
        for (int k = 0; k < 7; k++) {
            img[k][0] = xy[2 * pose_index[k]];
            img[k][1] = xy[2 * pose_index[k] + 1];
        }
        const double f = width, cx = width / 2.0, cy = height / 2.0;
        // Start from a frontal face at the distance its eye-corner span implies, so the solver converges to
        // the upright solution and not to a mirrored or upside-down one.
        const double iod = std::max(1.0, std::hypot(img[3][0] - img[2][0], img[3][1] - img[2][1]));
        const double z = f * 450.0 / iod;
        double p[6] = {0, 0, 0, (img[0][0] - cx) * z / f, (img[0][1] - cy) * z / f, z};
        opencv_pose_refinement(p, img, f, cx, cy);
        double R[9], dR[3][9];
        rodrigues(p, R, dR);
        return pose_angles(cv::Matx33d(R), yaw, pitch, roll) ? WV_OK : WV_INTERNAL;
    } catch (...) {
        return WV_INTERNAL;
    }
}

wv_status wv_head_pose_opencv(const float *xy, int width, int height, float *yaw, float *pitch, float *roll) {
    if (!xy || width <= 0 || height <= 0 || !yaw || !pitch || !roll) return WV_BAD_ARGUMENT;
    try {
        std::vector<cv::Point3d> object;
        for (const auto &p : pose_model) object.emplace_back(p[0], p[1], p[2]);
        std::vector<cv::Point2d> image;
        for (int i : pose_index) image.emplace_back(xy[2 * i], xy[2 * i + 1]);
        double f = width;
        cv::Matx33d camera(f, 0, width / 2.0, 0, f, height / 2.0, 0, 0, 1);
        const double iod = std::max(1.0, std::hypot(image[3].x - image[2].x, image[3].y - image[2].y));
        const double z = f * 450.0 / iod;
        cv::Vec3d rvec(0, 0, 0), tvec((image[0].x - width / 2.0) * z / f, (image[0].y - height / 2.0) * z / f, z);
        if (!cv::solvePnP(object, image, camera, cv::noArray(), rvec, tvec, true, cv::SOLVEPNP_ITERATIVE))
            return WV_INTERNAL;
        cv::Matx33d R;
        cv::Rodrigues(rvec, R);
        return pose_angles(R, yaw, pitch, roll) ? WV_OK : WV_INTERNAL;
    } catch (...) {
        return WV_INTERNAL;
    }
}

}  // extern "C"
