// CWinkVision: dlib's HOG frontal face detector and 68-point shape predictor, plus the per-eye pixel
// measure, the upright-crop warp and solvePnP's head pose (both computed as OpenCV does, without it on
// the frame path), behind a plain C interface.
//
// Conventions: images are 8-bit grey, `width` x `height` pixels, rows `stride` bytes apart, origin at the
// top-left. Coordinates are full-frame pixels (x right, y down). Every call returns a wv_status; no C++
// exception ever crosses this header.
//
// Thread-safety: a wv_detector or wv_predictor must be used by one thread at a time (dlib's objects keep
// scratch state); create one per worker thread. Functions without a handle are thread-safe.
#ifndef CWINKVISION_H
#define CWINKVISION_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What a call did; the comments say when each failure is returned.
typedef enum wv_status {
    WV_OK = 0,
    WV_MODEL_MISSING = 1,      // the model file does not exist
    WV_MODEL_UNREADABLE = 2,   // it exists but cannot be opened or read (permissions, a directory)
    WV_MODEL_NOT_DLIB = 3,     // not a serialised dlib shape_predictor (text, compressed .bz2, truncated)
    WV_MODEL_WRONG_PARTS = 4,  // a dlib shape_predictor, but not with 68 parts (the 5-point model)
    WV_BAD_ARGUMENT = 5,       // a null pointer, a non-positive size, a box outside the image
    WV_INTERNAL = 6,           // dlib or OpenCV threw; the message says what
} wv_status;

/// A rectangle in full-frame pixels. `score` is the detector's confidence (HOG SVM margin), 0 if unknown.
typedef struct wv_rect {
    float x, y, width, height, score;
} wv_rect;

/// dlib's HOG face detector with its scratch state (one thread at a time).
typedef struct wv_detector wv_detector;
/// A loaded 68-point shape predictor with its scratch state (one thread at a time).
typedef struct wv_predictor wv_predictor;

/// Creates dlib's `get_frontal_face_detector()`. Never fails short of memory exhaustion (returns NULL).
wv_detector *wv_detector_create(void);
/// Frees the detector. NULL is ignored.
void wv_detector_destroy(wv_detector *detector);

/// Finds faces. The grey image is resized by `scale` (0 < scale <= 4; INTER_AREA when shrinking,
/// INTER_LINEAR when enlarging) and then upsampled `upsample` (0...3) times by dlib's pyramid (each step
/// x2) before detection; boxes come back in the input's pixels, largest first. dlib's HOG detector finds
/// faces whose box is about 80 px or more after scaling. `adjust_threshold` shifts the SVM threshold
/// (0 = dlib's default; negative finds more, less certain faces). `max_width` (input pixels; 0 = no limit)
/// stops dlib's image pyramid at the last level whose nominal boxes (73 px at the first level, 6/5 wider
/// per level) are at most that wide, so the smaller pyramid levels cost no time and no box much wider
/// comes back (dlib's boxes vary a few percent about a level's nominal width); the levels searched are
/// searched exactly as without a limit (the first level always). To search a region of interest, pass a
/// pointer to its first pixel with the full frame's stride and add the region's origin to the boxes. At
/// most `capacity` boxes are written; `*count` receives how many were written. With `equalize` non-zero
/// the scaled image's contrast is equalised locally first (OpenCV's CLAHE, clip limit 2, 8x8 tiles), for
/// a face washed out by a bright background (backlight), whose outline HOG does not see otherwise.
wv_status wv_detect(wv_detector *detector, const uint8_t *gray, int width, int height, int stride,
                    float scale, int upsample, float adjust_threshold, float max_width, int equalize,
                    wv_rect *out, int capacity, int *count);

/// Loads a dlib shape_predictor file. On failure writes a one-line reason (no path) into `message`.
/// The 68-point model loads in about 1 s (100 MB file).
wv_status wv_predictor_load(const char *path, wv_predictor **out, char *message, size_t message_len);
/// Frees the predictor (and dlib's copy of the model, if `wv_predict_dlib` built one). NULL is ignored.
void wv_predictor_destroy(wv_predictor *predictor);
/// Number of landmarks the model predicts (68 for the iBUG model).
int wv_predictor_parts(const wv_predictor *predictor);

/// Predicts the landmarks inside `box` (full-frame pixels). Writes 2 x parts floats `x0,y0,x1,y1,...`,
/// whole pixels. Evaluates the model from flat arrays with dlib's arithmetic (Sources/CWinkVision/
/// ShapeRegression.cpp): the same landmarks as dlib's shape_predictor in about half the time, with no
/// heap allocation after the first call. WV_BAD_ARGUMENT for a box not over 1 px wide and high or not
/// finite.
wv_status wv_predict(wv_predictor *predictor, const uint8_t *gray, int width, int height, int stride,
                     wv_rect box, float *out_xy, int out_capacity);

/// `wv_predict` through dlib's own dlib::shape_predictor::operator() on the same numbers, to check the
/// flat evaluator against dlib. The first call builds dlib's copy of the model (about 70 MB more, kept
/// until the predictor is destroyed): for tests and `winkctl bench`, not for the frame path.
wv_status wv_predict_dlib(wv_predictor *predictor, const uint8_t *gray, int width, int height, int stride,
                          wv_rect box, float *out_xy, int out_capacity);

/// Resamples the grey frame into `out` (`out_width` x `out_height`, stride = out_width) through the affine
/// map `m` (row-major 2x3) that takes OUTPUT pixel coordinates to FRAME pixel coordinates (bilinear,
/// border replicated). Used to look at a tracked face upright and at a fixed size. Byte for byte the
/// result of OpenCV's cv::warpAffine (INTER_LINEAR | WARP_INVERSE_MAP, BORDER_REPLICATE; see
/// `wv_warp_affine_opencv`), computed with OpenCV's fixed-point arithmetic in about half its time (AVX2;
/// scalar in a WINK_PORTABLE build), without heap allocation for outputs up to 1024 pixels wide (wider
/// ones go through OpenCV). Thread-safe.
wv_status wv_warp_affine(const uint8_t *gray, int width, int height, int stride, const float *m,
                         uint8_t *out, int out_width, int out_height);

/// `wv_warp_affine` through OpenCV's own cv::warpAffine, to check it against OpenCV: for tests, not
/// for the frame path (it allocates). Thread-safe.
wv_status wv_warp_affine_opencv(const uint8_t *gray, int width, int height, int stride, const float *m,
                                uint8_t *out, int out_width, int out_height);

/// When the pixels of `box` are dark (mean below 70 grey levels), smooths the grey image in place with a 3x3
/// Gaussian and stretches its contrast so that `box` has a mean of 128 and a standard deviation of 48 (a
/// linear map, clipped); a lit face is left untouched. dlib's predictor compares raw pixel differences with
/// thresholds learned on well-lit faces; a dim, noisy face then reads like a lit one. The image is tightly
/// packed (stride = width). WV_BAD_ARGUMENT for an invalid image or a `box` under 4 px a side once clipped to
/// it. Thread-safe.
wv_status wv_normalize_contrast(uint8_t *gray, int width, int height, wv_rect box);

/// Samples `box` (full-frame pixels, clipped to the image) into a `size` x `size` patch (INTER_AREA) and
/// normalises it to zero mean and unit length, so the dot product of two patches is their normalised
/// cross-correlation (-1...1). `out` receives size*size floats. A box entirely outside the image gives
/// WV_BAD_ARGUMENT.
wv_status wv_sample_patch(const uint8_t *gray, int width, int height, int stride, wv_rect box, int size,
                          float *out);

/// Per-eye pixel evidence for a 68-point face.
typedef struct wv_eye_measure {
    float closed_logit;       // the eye-state model's log-odds that the eye is closed (wv_eye_closure)
    float aspect_ratio;       // eye aspect ratio (Soukupova & Cech 2016)
} wv_eye_measure;

/// What `wv_measure_face` reads from one face: both eyes, brightness and how much of the face is in frame.
typedef struct wv_face_measure {
    wv_eye_measure right_eye;  // the person's right eye, landmarks 36-41
    wv_eye_measure left_eye;   // the person's left eye, landmarks 42-47
    float median_brightness;   // median grey level of the cheeks-and-nose region, 0...255
    float visible_fraction;    // fraction of the landmarks' bounding box inside the frame
    float eyes_visible_fraction;   // the same for the brows and eyes (iBUG 17-26, 36-47)
    float mouth_visible_fraction;  // the same for the chin, nose, eyes and mouth (iBUG 5-11, 27-67)
} wv_face_measure;

/// Measures the eyes and the face brightness from the grey frame and 68 landmarks (`xy`, 136 floats).
/// WV_BAD_ARGUMENT for a NULL pointer or an invalid image; WV_INTERNAL when OpenCV throws. Thread-safe.
wv_status wv_measure_face(const uint8_t *gray, int width, int height, int stride, const float *xy,
                          wv_face_measure *out);

// ---- Eye state (Sources/CWinkVision/EyeState.cpp) --------------------------------------------------------
// Whether each eye is closed, judged from its pixels by a linear classifier over dlib's FHOG features of an
// eye patch aligned on the eye's landmarks. The weights are compiled in (EyeStateModel.inc, written by
// Scripts/train_eye_model.py from the labelled fixtures; see Models/README.md).

/// Patch size of `wv_eye_patches`, pixels.
#define WV_EYE_PATCH_WIDTH 48
#define WV_EYE_PATCH_HEIGHT 24

/// Number of floats `wv_eye_features` writes.
int wv_eye_feature_count(void);

/// Replaces the built-in eye-state model for the rest of the process with `count` = feature count + 1 floats:
/// the weights, then the bias (NULL: back to the built-in one). For evaluating a retrained model without
/// rebuilding (`winkctl evaluate --eye-model`, leave-one-person-out in Scripts/train_eye_model.py).
/// WV_BAD_ARGUMENT for a wrong count or a non-finite number. Thread-safe (the swap is atomic).
wv_status wv_eye_model_set(const float *weights_and_bias, int count);

/// Resamples both eyes of a 68-point face (`xy`, 136 floats, frame pixels) into 48x24 grey patches
/// (stride 48) aligned on each eye's corners (iBUG 36/39 and 42/45), 1.6 corner distances wide, with the
/// person's left eye mirrored so that the outer corner is on the left in both. Bilinear, border
/// replicated, no heap allocation. WV_BAD_ARGUMENT for a null pointer or an eye under 2 px wide.
/// Thread-safe.
wv_status wv_eye_patches(const uint8_t *gray, int width, int height, int stride, const float *xy,
                         uint8_t *left, uint8_t *right);

/// The eye-state model's features of one `wv_eye_patches` patch (dlib FHOG, row by row); `capacity` must
/// be at least `wv_eye_feature_count()`. Thread-safe (per-thread scratch).
wv_status wv_eye_features(const uint8_t *patch, float *out, int capacity);

/// The eye-state model on both eyes: each eye's log-odds of being closed (positive: more likely closed
/// than open; logistic regression, so 1 / (1 + exp(-logit)) is the probability the model was fitted to).
/// Thread-safe.
wv_status wv_eye_closure(const uint8_t *gray, int width, int height, int stride, const float *xy,
                         float *left_logit, float *right_logit);

/// Switches OpenCV's internal worker pool off for the whole process (cv::setNumThreads(1)): winkd's
/// frames are small, it overlaps capture and processing on its own threads, and the pool's workers cost
/// CPU on the other core while idle-spinning between calls (seen as libtbb and sched_yield in perf).
/// Thread-safe; idempotent.
void wv_opencv_single_thread(void);

/// Head pose from 68 landmarks (`xy`, 136 floats, frame pixels): the rotation of a generic 3D face (7
/// points: nose tip, chin, outer eye corners, mouth corners, nose root) fitted through a pinhole camera of
/// focal length = image width and the principal point at the image centre, from a frontal face at the
/// distance the eye corners imply, by OpenCV `solvePnP`'s SOLVEPNP_ITERATIVE Levenberg-Marquardt
/// replicated step for step (`wv_head_pose_opencv` calls OpenCV itself): the same angles to rounding, in
/// about a tenth of the time and without heap allocation. Pitch and roll are that fit's; the yaw is then
/// refined from it on the four rigid points alone (nose tip, nose root, outer eye corners), since the chin
/// and mouth corners move with the jaw and lips and the 7-point fit reads an open mouth or a smile as a
/// turn (up to 13 and 24 degrees on frontal faces of the people set). Writes yaw, pitch, roll in degrees
/// (see WinkCore.HeadPose for signs). Thread-safe.
wv_status wv_head_pose(const float *xy, int width, int height, float *yaw, float *pitch, float *roll);

/// `wv_head_pose` through OpenCV's cv::solvePnP (SOLVEPNP_ITERATIVE, same models, camera and starts), to
/// check it against OpenCV: for tests, not for the frame path (it allocates). Thread-safe.
wv_status wv_head_pose_opencv(const float *xy, int width, int height, float *yaw, float *pitch, float *roll);

#ifdef __cplusplus
}
#endif

// The model cache's functions (wv_predictor_cache_load, ...) have their own header; it is part of this
// module's interface.
#include "CWinkVisionModelCache.h"

#endif
