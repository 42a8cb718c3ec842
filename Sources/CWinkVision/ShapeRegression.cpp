// CWinkVision: the 68-point shape predictor evaluated from flat arrays (see PredictorState.hpp for why).
//
// The arithmetic is dlib's own (dlib/image_processing/shape_predictor.h, release 19.24): the same
// similarity transform between the mean shape and the current shape (find_similarity_transform, Umeyama
// 1991), the same float expression for each feature pixel's position, rounded to a pixel by dlib's own
// point_transform_affine, the same split test, and the leaf increments added in the same tree order. What
// differs is only where the numbers live and the order of independent work: all of a cascade's leaf
// indices are found first (four trees at a time, without branches), then their increments are added
// while the next leaves are prefetched. No exception leaves the functions used by the C interface
// (callers catch).
#include "PredictorState.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace {

// dlib::shape_predictor keeps its state private and offers only its serialiser (slow) and a constructor
// that takes pixel coordinates, which the model file does not store (it stores anchor indices and
// deltas derived from them; recomputing them would not reproduce the floats bit for bit). The members are
// reached instead through explicit template instantiation, for which the standard waives access checking
// ([temp.spec.general]/6 in C++20, [temp.explicit]/12 in C++17). If dlib renames a member this fails
// to compile; it cannot silently read the wrong field.
template <typename Tag, typename Tag::type Member>
struct member_access {
    friend typename Tag::type member_of(Tag) { return Member; }
};
struct initial_shape_tag {
    using type = dlib::matrix<float, 0, 1> dlib::shape_predictor::*;
    friend type member_of(initial_shape_tag);
};
struct forests_tag {
    using type = std::vector<std::vector<dlib::impl::regression_tree>> dlib::shape_predictor::*;
    friend type member_of(forests_tag);
};
struct anchor_idx_tag {
    using type = std::vector<std::vector<unsigned long>> dlib::shape_predictor::*;
    friend type member_of(anchor_idx_tag);
};
struct deltas_tag {
    using type = std::vector<std::vector<dlib::vector<float, 2>>> dlib::shape_predictor::*;
    friend type member_of(deltas_tag);
};
template struct member_access<initial_shape_tag, &dlib::shape_predictor::initial_shape>;
template struct member_access<forests_tag, &dlib::shape_predictor::forests>;
template struct member_access<anchor_idx_tag, &dlib::shape_predictor::anchor_idx>;
template struct member_access<deltas_tag, &dlib::shape_predictor::deltas>;

template <typename Tag> auto &field(dlib::shape_predictor &p) { return p.*member_of(Tag()); }

// How many trees ahead the leaf increments are prefetched (each is dims x 4 bytes: 9 cache lines for the
// 68-point model). Distances from 3 to 24 measured within noise of each other on this machine.
constexpr uint32_t kPrefetchDistance = 8;

}  // namespace

namespace winkvision {

RegressionModel::~RegressionModel() { std::free(storage); }

std::string RegressionModel::validate() const {
    if (dims == 0 || dims % 2 != 0) return "bad initial shape";
    if (cascades == 0 || trees == 0) return "no cascades or trees";
    if (leaves_per_tree < 2 || (leaves_per_tree & (leaves_per_tree - 1)) != 0 || depth > 16 ||
        (1u << depth) != leaves_per_tree)
        return "trees are not complete binary trees";
    if (features == 0 || features > 65535) return "bad feature pixel count";
    if (initial_shape.size() != dims) return "initial shape size differs";
    const size_t pixels = size_t(cascades) * features;
    if (anchors.size() != pixels || deltas.size() != pixels) return "anchor or delta count differs";
    for (uint32_t a : anchors)
        if (a >= parts()) return "anchor index out of range";
    if (splits.size() != size_t(cascades) * trees * splits_per_tree()) return "split count differs";
    for (const Split &s : splits)
        if (s.idx1 >= features || s.idx2 >= features) return "split index out of range";
    if (leaves == nullptr) return "no leaf values";
    return "";
}

std::string take_from_dlib(dlib::shape_predictor &source, RegressionModel &model) {
    auto &shape = field<initial_shape_tag>(source);
    auto &forests = field<forests_tag>(source);
    auto &anchors = field<anchor_idx_tag>(source);
    auto &deltas = field<deltas_tag>(source);
    if (forests.empty() || forests[0].empty() || forests[0][0].leaf_values.empty())
        return "a shape predictor without trees";
    model.dims = static_cast<uint32_t>(shape.size());
    model.cascades = static_cast<uint32_t>(forests.size());
    model.trees = static_cast<uint32_t>(forests[0].size());
    model.leaves_per_tree = static_cast<uint32_t>(forests[0][0].leaf_values.size());
    model.depth = 0;
    while (model.depth < 31 && (1u << model.depth) < model.leaves_per_tree) model.depth++;
    model.features = anchors.empty() ? 0 : static_cast<uint32_t>(anchors[0].size());
    if (anchors.size() != forests.size() || deltas.size() != forests.size())
        return "anchor or delta count differs from the cascade count";
    model.initial_shape.assign(shape.begin(), shape.end());
    model.anchors.clear();
    model.deltas.clear();
    for (size_t c = 0; c < forests.size(); c++) {
        if (anchors[c].size() != model.features || deltas[c].size() != model.features)
            return "cascades with different feature pixel counts";
        for (unsigned long a : anchors[c]) model.anchors.push_back(a > UINT32_MAX ? UINT32_MAX : uint32_t(a));
        model.deltas.insert(model.deltas.end(), deltas[c].begin(), deltas[c].end());
    }
    model.splits.clear();
    model.splits.reserve(size_t(model.cascades) * model.trees * model.splits_per_tree());
    model.owned_leaves.clear();
    model.owned_leaves.reserve(model.leaf_count());
    for (auto &forest : forests) {
        if (forest.size() != model.trees) return "cascades with different tree counts";
        for (auto &tree : forest) {
            if (tree.leaf_values.size() != model.leaves_per_tree || tree.splits.size() != model.splits_per_tree())
                return "trees of different depths";
            for (const auto &s : tree.splits) {
                if (s.idx1 > 65535 || s.idx2 > 65535) return "split index out of range";
                model.splits.push_back(Split{uint16_t(s.idx1), uint16_t(s.idx2), s.thresh});
            }
            for (const auto &leaf : tree.leaf_values) {
                if (leaf.size() != model.dims) return "a leaf of another size than the shape";
                model.owned_leaves.insert(model.owned_leaves.end(), leaf.begin(), leaf.end());
            }
            std::vector<dlib::matrix<float, 0, 1>>().swap(tree.leaf_values);  // keep the peak near one model
        }
    }
    model.leaves = model.owned_leaves.data();
    return model.validate();
}

dlib::shape_predictor to_dlib(const RegressionModel &model) {
    dlib::shape_predictor out;
    auto &shape = field<initial_shape_tag>(out);
    shape.set_size(model.dims);
    std::copy(model.initial_shape.begin(), model.initial_shape.end(), shape.begin());
    auto &forests = field<forests_tag>(out);
    forests.assign(model.cascades, std::vector<dlib::impl::regression_tree>(model.trees));
    const float *leaf = model.leaves;
    const Split *split = model.splits.data();
    for (auto &forest : forests)
        for (auto &tree : forest) {
            for (size_t s = 0; s < model.splits_per_tree(); s++, split++) {
                dlib::impl::split_feature f;
                f.idx1 = split->idx1;
                f.idx2 = split->idx2;
                f.thresh = split->thresh;
                tree.splits.push_back(f);
            }
            tree.leaf_values.resize(model.leaves_per_tree);
            for (auto &values : tree.leaf_values) {
                values.set_size(model.dims);
                std::copy(leaf, leaf + model.dims, values.begin());
                leaf += model.dims;
            }
        }
    auto &anchors = field<anchor_idx_tag>(out);
    auto &deltas = field<deltas_tag>(out);
    anchors.assign(model.cascades, {});
    deltas.assign(model.cascades, {});
    for (size_t c = 0; c < model.cascades; c++) {
        anchors[c].assign(model.anchors.begin() + c * model.features, model.anchors.begin() + (c + 1) * model.features);
        deltas[c].assign(model.deltas.begin() + c * model.features, model.deltas.begin() + (c + 1) * model.features);
    }
    return out;
}

void evaluate(const RegressionModel &model, PredictorScratch &s, const uint8_t *gray, int width, int height,
              size_t stride, const dlib::rectangle &rect, float *out_xy) {
    const uint32_t dims = model.dims, parts = dims / 2, features = model.features;
    const uint32_t trees = model.trees, inner = static_cast<uint32_t>(model.splits_per_tree());
    if (s.current.size() != dims) {
        s.reference.set_size(dims);
        s.current.set_size(dims);
        std::copy(model.initial_shape.begin(), model.initial_shape.end(), s.reference.begin());
        s.from.resize(parts);
        s.to.resize(parts);
        for (uint32_t i = 0; i < parts; i++) s.from[i] = dlib::impl::location(s.reference, i);
        s.features.resize(features);
        s.leaf.resize(trees);
    }
    std::copy(model.initial_shape.begin(), model.initial_shape.end(), s.current.begin());
    float *current = &s.current(0);
    float *feature = s.features.data();
    uint32_t *leaf = s.leaf.data();
    const dlib::point_transform_affine tform_to_img = dlib::impl::unnormalizing_tform(rect);

    for (uint32_t c = 0; c < model.cascades; c++) {
        // dlib::impl::extract_feature_pixel_values, with find_tform_between_shapes's point lists reused.
        for (uint32_t i = 0; i < parts; i++) s.to[i] = dlib::impl::location(s.current, i);
        const dlib::matrix<float, 2, 2> tform =
            dlib::matrix_cast<float>(dlib::find_similarity_transform(s.from, s.to).get_m());
        const uint32_t *anchor = &model.anchors[size_t(c) * features];
        const dlib::vector<float, 2> *delta = &model.deltas[size_t(c) * features];
        for (uint32_t i = 0; i < features; i++) {
            dlib::point p = tform_to_img(tform * delta[i] + dlib::impl::location(s.current, anchor[i]));
            feature[i] = (p.x() >= 0 && p.y() >= 0 && p.x() < width && p.y() < height)
                             ? float(gray[size_t(p.y()) * stride + size_t(p.x())])
                             : 0.0f;
        }

        // Every tree's leaf, four trees interleaved: i = 2i+1 (left) when the split holds, else 2i+2.
        const Split *split = &model.splits[size_t(c) * trees * inner];
        uint32_t t = 0;
        for (; t + 4 <= trees; t += 4) {
            const Split *a = split + size_t(t) * inner, *b = a + inner, *d = b + inner, *e = d + inner;
            uint32_t i0 = 0, i1 = 0, i2 = 0, i3 = 0;
            for (uint32_t level = 0; level < model.depth; level++) {
                i0 = 2 * i0 + 2 - uint32_t(feature[a[i0].idx1] - feature[a[i0].idx2] > a[i0].thresh);
                i1 = 2 * i1 + 2 - uint32_t(feature[b[i1].idx1] - feature[b[i1].idx2] > b[i1].thresh);
                i2 = 2 * i2 + 2 - uint32_t(feature[d[i2].idx1] - feature[d[i2].idx2] > d[i2].thresh);
                i3 = 2 * i3 + 2 - uint32_t(feature[e[i3].idx1] - feature[e[i3].idx2] > e[i3].thresh);
            }
            leaf[t] = i0 - inner;
            leaf[t + 1] = i1 - inner;
            leaf[t + 2] = i2 - inner;
            leaf[t + 3] = i3 - inner;
        }
        for (; t < trees; t++) {
            const Split *a = split + size_t(t) * inner;
            uint32_t i = 0;
            for (uint32_t level = 0; level < model.depth; level++)
                i = 2 * i + 2 - uint32_t(feature[a[i].idx1] - feature[a[i].idx2] > a[i].thresh);
            leaf[t] = i - inner;
        }

        // current_shape += leaf, tree by tree (the order dlib adds them in).
        const float *base = model.leaves + size_t(c) * trees * model.leaves_per_tree * dims;
        const size_t tree_stride = size_t(model.leaves_per_tree) * dims;
        for (t = 0; t < trees; t++) {
            if (t + kPrefetchDistance < trees) {
                const char *next = reinterpret_cast<const char *>(
                    base + (t + kPrefetchDistance) * tree_stride + size_t(leaf[t + kPrefetchDistance]) * dims);
                for (size_t byte = 0; byte < dims * sizeof(float); byte += 64) __builtin_prefetch(next + byte);
            }
            const float *increment = base + t * tree_stride + size_t(leaf[t]) * dims;
            for (uint32_t j = 0; j < dims; j++) current[j] += increment[j];
        }
    }

    for (uint32_t i = 0; i < parts; i++) {
        dlib::point p = tform_to_img(dlib::impl::location(s.current, i));
        out_xy[2 * i] = static_cast<float>(p.x());
        out_xy[2 * i + 1] = static_cast<float>(p.y());
    }
}

}  // namespace winkvision
