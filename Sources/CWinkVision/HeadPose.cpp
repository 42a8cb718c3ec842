// CWinkVision: head pose from 68 landmarks, OpenCV's SOLVEPNP_ITERATIVE replicated step for step (see
// include/CWinkVision.h for the contract). No exception leaves this file.
#include "CWinkVision.h"

#include <opencv2/calib3d.hpp>
#include <opencv2/core.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <vector>

namespace {

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

// The same model's points that do not move with an expression (nose tip, outer eye corners, nose root):
// the chin drops with the jaw and the mouth corners move with every smile, pout or 'O', and a 7-point fit
// reads them as a turn (a frontal face reads yaw -18 degrees with its mouth closed and -31 with an 'O'
// mouth on liveportrait_d18; a toothy smile reads up to 24 on liveportrait_old_d5). The yaw comes from
// these four, refined from the 7-point solution.
constexpr int rigid_of_pose[4] = {0, 2, 3, 6};  // rows of pose_model: 30, 36, 45, 27
struct RigidModel {
    double model[4][3];
    int index[4];
};
constexpr RigidModel make_rigid_model() {
    RigidModel r{};
    for (int k = 0; k < 4; k++) {
        for (int j = 0; j < 3; j++) r.model[k][j] = pose_model[rigid_of_pose[k]][j];
        r.index[k] = pose_index[rigid_of_pose[k]];
    }
    return r;
}
constexpr RigidModel rigid = make_rigid_model();

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

// cvProjectPoints2 without distortion: the N-point model under pose p = (rvec, tvec) through a pinhole
// camera of focal length f and principal point (cx, cy); err = projected - observed (pixels, x then y per
// point) and, with J, its Jacobian with respect to p.
template <int N>
void project_model(const double (&model)[N][3], const double p[6], const double (&img)[N][2], double f, double cx,
                   double cy, double (&err)[2 * N], double (*J)[6]) {
    double R[9], dR[3][9];
    rodrigues(p, R, dR);
    for (int i = 0; i < N; i++) {
        const double *M = model[i];
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

template <int K>
double norm(const double (&e)[K]) {
    double s = 0;
    for (int i = 0; i < K; i++) s += e[i] * e[i];
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
template <int N>
void opencv_pose_refinement(const double (&model)[N][3], double p[6], const double (&img)[N][2], double f, double cx,
                            double cy) {
    double err[2 * N], J[2 * N][6], JtJ[6][6], JtErr[6], prev[6];
    int lambdaLg10 = -3, iters = 0;
    double prevErrNorm = 0;
    project_model(model, p, img, f, cx, cy, err, J);
    for (;;) {
        for (int a = 0; a < 6; a++) {
            JtErr[a] = 0;
            for (int i = 0; i < 2 * N; i++) JtErr[a] += J[i][a] * err[i];
            for (int b = 0; b < 6; b++) {
                double s = 0;
                for (int i = 0; i < 2 * N; i++) s += J[i][a] * J[i][b];
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
        if (iters == 0) prevErrNorm = norm(err);
        for (;;) {
            project_model(model, p, img, f, cx, cy, err, nullptr);
            const double errNorm = norm(err);
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
        project_model(model, p, img, f, cx, cy, err, J);
    }
}

// Yaw, pitch, roll (degrees, WinkCore.HeadPose's signs) of a camera-frame rotation, by OpenCV's RQ
// decomposition (angles about x, y, z).
bool pose_angles(const cv::Matx33d &R, float *yaw, float *pitch, float *roll) {
    cv::Matx33d Rq, Qq;
    cv::Vec3d angles = cv::RQDecomp3x3(R, Rq, Qq);
    // About y (camera y down): a positive angle brings the model's +x side (the person's left, on the
    // image's right) toward the camera, which is a turn toward the person's own right; HeadPose's yaw is
    // positive toward their own left, so it is the negated angle (a face turned toward the image's left,
    // nose tip left of the jaw's middle, reads negative).
    *pitch = static_cast<float>(-angles[0]);
    *yaw = static_cast<float>(-angles[1]);
    *roll = static_cast<float>(angles[2]);
    return std::isfinite(*yaw) && std::isfinite(*pitch) && std::isfinite(*roll);
}

}  // namespace

extern "C" {

wv_status wv_head_pose(const float *xy, int width, int height, float *yaw, float *pitch, float *roll) {
    if (!xy || width <= 0 || height <= 0 || !yaw || !pitch || !roll) return WV_BAD_ARGUMENT;
    try {
        double img[7][2], rigid_img[4][2];
        for (int k = 0; k < 7; k++) {
            img[k][0] = xy[2 * pose_index[k]];
            img[k][1] = xy[2 * pose_index[k] + 1];
        }
        for (int k = 0; k < 4; k++) {
            rigid_img[k][0] = img[rigid_of_pose[k]][0];
            rigid_img[k][1] = img[rigid_of_pose[k]][1];
        }
        const double f = width, cx = width / 2.0, cy = height / 2.0;
        // Start from a frontal face at the distance its eye-corner span implies, so the solver converges to
        // the upright solution and not to a mirrored or upside-down one.
        const double iod = std::max(1.0, std::hypot(img[3][0] - img[2][0], img[3][1] - img[2][1]));
        const double z = f * 450.0 / iod;
        double p[6] = {0, 0, 0, (img[0][0] - cx) * z / f, (img[0][1] - cy) * z / f, z};
        opencv_pose_refinement(pose_model, p, img, f, cx, cy);
        double R[9], dR[3][9];
        rodrigues(p, R, dR);
        float ignoredYaw;
        if (!pose_angles(cv::Matx33d(R), &ignoredYaw, pitch, roll)) return WV_INTERNAL;
        opencv_pose_refinement(rigid.model, p, rigid_img, f, cx, cy);
        rodrigues(p, R, dR);
        float ignoredPitch, ignoredRoll;
        return pose_angles(cv::Matx33d(R), yaw, &ignoredPitch, &ignoredRoll) ? WV_OK : WV_INTERNAL;
    } catch (...) {
        return WV_INTERNAL;
    }
}

wv_status wv_head_pose_opencv(const float *xy, int width, int height, float *yaw, float *pitch, float *roll) {
    if (!xy || width <= 0 || height <= 0 || !yaw || !pitch || !roll) return WV_BAD_ARGUMENT;
    try {
        cv::Matx33d camera(width, 0, width / 2.0, 0, width, height / 2.0, 0, 0, 1);
        auto solve = [&](const auto &model, const auto &index, cv::Vec3d &rvec, cv::Vec3d &tvec) {
            std::vector<cv::Point3d> object;
            for (const auto &p : model) object.emplace_back(p[0], p[1], p[2]);
            std::vector<cv::Point2d> image;
            for (int i : index) image.emplace_back(xy[2 * i], xy[2 * i + 1]);
            return cv::solvePnP(object, image, camera, cv::noArray(), rvec, tvec, true, cv::SOLVEPNP_ITERATIVE);
        };
        const double dx = xy[2 * 45] - xy[2 * 36], dy = xy[2 * 45 + 1] - xy[2 * 36 + 1];
        const double z = width * 450.0 / std::max(1.0, std::hypot(dx, dy));
        cv::Vec3d rvec(0, 0, 0), tvec((xy[2 * 30] - width / 2.0) * z / width, (xy[2 * 30 + 1] - height / 2.0) * z / width,
                                      z);
        if (!solve(pose_model, pose_index, rvec, tvec)) return WV_INTERNAL;
        cv::Matx33d R;
        cv::Rodrigues(rvec, R);
        float ignoredYaw, ignoredPitch, ignoredRoll;
        if (!pose_angles(R, &ignoredYaw, pitch, roll)) return WV_INTERNAL;
        if (!solve(rigid.model, rigid.index, rvec, tvec)) return WV_INTERNAL;
        cv::Rodrigues(rvec, R);
        return pose_angles(R, yaw, &ignoredPitch, &ignoredRoll) ? WV_OK : WV_INTERNAL;
    } catch (...) {
        return WV_INTERNAL;
    }
}

}  // extern "C"
