// CWinkVision private header (not part of the C interface): the 68-point shape predictor as flat arrays,
// shared by the C++ files of this target (Predictor.cpp loads it and predicts with it, ShapeRegression.cpp
// evaluates it, ModelCache.cpp writes and maps it). It must stay token-for-token identical in every file
// that includes it (C++ one-definition rule).
//
// Why not dlib::shape_predictor itself: its 65 MB of leaf vectors live in 7,500 separately allocated
// dlib matrices, and evaluating a face walks 7,500 of them (4 MB) in a dependent order, so a frame costs
// about 2 ms of cache misses (measured on this machine: dlib 1.9-2.5 ms, the flat evaluator below
// 0.8-1.0 ms per face on single_face.mp4, with identical landmarks). The flat form keeps the model's
// numbers verbatim and evaluates them with dlib's own arithmetic, in the same order; see
// ShapeRegression.cpp.
#ifndef CWINKVISION_PREDICTOR_STATE_HPP
#define CWINKVISION_PREDICTOR_STATE_HPP

#include <dlib/image_processing.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace winkvision {

/// One split of a regression tree: go to the left child when
/// `feature[idx1] - feature[idx2] > thresh` (dlib::impl::split_feature, narrowed to 16-bit indices).
struct Split {
    uint16_t idx1;
    uint16_t idx2;
    float thresh;
};
static_assert(sizeof(Split) == 8, "Split is stored verbatim in the model cache");

/// A cascade of regression trees (Kazemi & Sullivan, "One Millisecond Face Alignment with an Ensemble of
/// Regression Trees", CVPR 2014) in dlib's trained layout: every cascade has the same number of trees
/// and feature pixels, every tree is complete and of the same depth.
///
/// Shapes: `initial_shape` holds `dims` floats (x0, y0, x1, y1, ... in the unit square of the face box);
/// `anchors` and `deltas` hold `cascades x features` entries (the landmark each feature pixel hangs from
/// and its offset in the mean shape's frame); `splits` holds `cascades x trees x (leaves - 1)` splits,
/// each tree in breadth-first order as dlib stores it; `leaves` points at
/// `cascades x trees x leaves x dims` floats, the shape increments.
struct RegressionModel {
    uint32_t dims = 0;
    uint32_t cascades = 0;
    uint32_t trees = 0;
    uint32_t leaves_per_tree = 0;
    uint32_t depth = 0;  // log2(leaves_per_tree)
    uint32_t features = 0;
    std::vector<float> initial_shape;
    std::vector<uint32_t> anchors;
    std::vector<dlib::vector<float, 2>> deltas;
    std::vector<Split> splits;
    /// The leaf increments: in `owned_leaves`, or inside `storage` (the model cache file as read, freed
    /// with the model).
    const float *leaves = nullptr;
    std::vector<float> owned_leaves;
    void *storage = nullptr;

    RegressionModel() = default;
    RegressionModel(const RegressionModel &) = delete;
    RegressionModel &operator=(const RegressionModel &) = delete;
    ~RegressionModel();

    size_t splits_per_tree() const { return leaves_per_tree - 1; }
    size_t leaf_count() const { return size_t(cascades) * trees * leaves_per_tree * dims; }
    unsigned long parts() const { return dims / 2; }

    /// Checks the sizes and every index against what `evaluate` dereferences; "" when sound, else why not.
    std::string validate() const;
};

/// Per-call working memory, reused so that evaluating a face allocates nothing.
struct PredictorScratch {
    dlib::matrix<float, 0, 1> reference;
    dlib::matrix<float, 0, 1> current;
    std::vector<dlib::vector<float, 2>> from;
    std::vector<dlib::vector<float, 2>> to;
    std::vector<float> features;
    std::vector<uint32_t> leaf;
};

/// Moves a deserialised dlib predictor into `model`, releasing dlib's copy tree by tree so the peak
/// memory stays near one model. Returns "" on success, else why the model has a layout winkd does not
/// evaluate (it then leaves `model` unusable).
std::string take_from_dlib(dlib::shape_predictor &source, RegressionModel &model);

/// A dlib::shape_predictor holding the same numbers (for checking the flat evaluator against dlib).
dlib::shape_predictor to_dlib(const RegressionModel &model);

/// The landmarks of the face in `rect` of the 8-bit grey image (`width` x `height` pixels, `stride`
/// bytes per row, origin top-left): `parts()` points in pixels, written as x, y pairs to `out_xy`.
/// Bit-identical to dlib::shape_predictor::operator() on the same model (landmarks rounded to whole
/// pixels, as dlib's full_object_detection holds them). Not thread-safe through `scratch`.
void evaluate(const RegressionModel &model, PredictorScratch &scratch, const uint8_t *gray, int width,
              int height, size_t stride, const dlib::rectangle &rect, float *out_xy);

}  // namespace winkvision

struct wv_predictor {
    winkvision::RegressionModel model;
    winkvision::PredictorScratch scratch;
    /// Built on first use by wv_predict_dlib only (a second 65 MB copy, for tests).
    dlib::shape_predictor *reference = nullptr;
    ~wv_predictor() { delete reference; }
};

#endif
