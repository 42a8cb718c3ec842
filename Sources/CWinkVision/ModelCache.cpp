// CWinkVision model cache: a flat little-endian dump of a dlib::shape_predictor that loads in a few tens
// of milliseconds instead of dlib's ~1 s deserialiser (which decodes every float from dlib's portable
// variable-length encoding, byte by byte). See include/CWinkVision.h ("Model cache") for the contract
// and Models/README.md for the file layout. No exception leaves this file.
#include "CWinkVision.h"
#include "PredictorState.hpp"

#include <openssl/evp.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

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
template <typename Tag> const auto &field(const dlib::shape_predictor &p) { return p.*member_of(Tag()); }

constexpr char kMagic[8] = {'W', 'I', 'N', 'K', 'S', 'P', 'C', '\0'};
constexpr uint32_t kFormatVersion = 1;
constexpr uint32_t kByteOrderMark = 0x01020304u;  // reads back as 0x04030201 on a big-endian host
// magic, version, byte-order mark, source size, source mtime (ns), payload size, payload SHA-256
constexpr size_t kHeaderSize = 8 + 4 + 4 + 8 + 8 + 8 + 32;
// Sanity bounds for a file that passed its checksum but was written by something else.
constexpr uint32_t kMaxCount = 1u << 24;

void write_message(char *message, size_t len, const std::string &text) {
    if (message == nullptr || len == 0) return;
    std::snprintf(message, len, "%s", text.c_str());
}

bool sha256(const uint8_t *data, size_t size, uint8_t digest[32]) {
    unsigned int n = 0;
    return EVP_Digest(data, size, digest, &n, EVP_sha256(), nullptr) == 1 && n == 32;
}

struct Writer {
    std::vector<uint8_t> bytes;
    void u32(uint32_t v) { put(&v, 4); }
    void u64(uint64_t v) { put(&v, 8); }
    void f32(float v) { put(&v, 4); }
    void floats(const float *v, size_t n) { put(v, n * 4); }
    void put(const void *p, size_t n) {
        const uint8_t *b = static_cast<const uint8_t *>(p);
        bytes.insert(bytes.end(), b, b + n);
    }
};

struct Reader {
    const uint8_t *p;
    const uint8_t *end;
    bool ok = true;
    bool take(void *out, size_t n) {
        if (!ok || static_cast<size_t>(end - p) < n) return ok = false;
        std::memcpy(out, p, n);
        p += n;
        return true;
    }
    uint32_t u32() { uint32_t v = 0; take(&v, 4); return v; }
    uint64_t u64() { uint64_t v = 0; take(&v, 8); return v; }
    float f32() { float v = 0; take(&v, 4); return v; }
    // A count no larger than kMaxCount and than what the remaining bytes could hold at `unit` bytes each.
    uint32_t count(size_t unit) {
        uint32_t n = u32();
        if (!ok || n > kMaxCount || (unit > 0 && static_cast<size_t>(end - p) / unit < n)) ok = false;
        return ok ? n : 0;
    }
};

bool source_identity(const char *model_path, uint64_t &size, int64_t &mtime_ns, std::string &why) {
    struct stat st;
    if (stat(model_path, &st) != 0) {
        why = std::string("cannot stat the model file: ") + std::strerror(errno);
        return false;
    }
    if (!S_ISREG(st.st_mode)) {
        why = "the model path is not a regular file";
        return false;
    }
    size = static_cast<uint64_t>(st.st_size);
    mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    return true;
}

// Payload layout (all little-endian; u32 counts, f32 IEEE-754 floats):
//   initial_shape: u32 n, n x f32
//   forests:       u32 cascades, per cascade u32 trees, per tree
//                    u32 splits, splits x (u32 idx1, u32 idx2, f32 thresh),
//                    u32 leaves, u32 leaf_size, leaves x leaf_size x f32
//   anchor_idx:    u32 cascades, per cascade u32 n, n x u32
//   deltas:        u32 cascades, per cascade u32 n, n x (f32 x, f32 y)
std::vector<uint8_t> encode(const dlib::shape_predictor &model) {
    Writer w;
    const auto &shape = field<initial_shape_tag>(model);
    w.u32(static_cast<uint32_t>(shape.size()));
    w.floats(&shape(0), shape.size());
    const auto &forests = field<forests_tag>(model);
    w.u32(static_cast<uint32_t>(forests.size()));
    for (const auto &forest : forests) {
        w.u32(static_cast<uint32_t>(forest.size()));
        for (const auto &tree : forest) {
            w.u32(static_cast<uint32_t>(tree.splits.size()));
            for (const auto &s : tree.splits) {
                w.u32(static_cast<uint32_t>(s.idx1));
                w.u32(static_cast<uint32_t>(s.idx2));
                w.f32(s.thresh);
            }
            w.u32(static_cast<uint32_t>(tree.leaf_values.size()));
            uint32_t leaf_size = tree.leaf_values.empty() ? 0 : static_cast<uint32_t>(tree.leaf_values[0].size());
            w.u32(leaf_size);
            for (const auto &leaf : tree.leaf_values) w.floats(&leaf(0), leaf_size);
        }
    }
    const auto &anchors = field<anchor_idx_tag>(model);
    w.u32(static_cast<uint32_t>(anchors.size()));
    for (const auto &a : anchors) {
        w.u32(static_cast<uint32_t>(a.size()));
        for (unsigned long i : a) w.u32(static_cast<uint32_t>(i));
    }
    const auto &deltas = field<deltas_tag>(model);
    w.u32(static_cast<uint32_t>(deltas.size()));
    for (const auto &d : deltas) {
        w.u32(static_cast<uint32_t>(d.size()));
        for (const auto &v : d) { w.f32(v.x()); w.f32(v.y()); }
    }
    return std::move(w.bytes);
}

// Whether every value fits in the u32 fields of the layout and every leaf has the shape's size.
bool encodable(const dlib::shape_predictor &model) {
    const auto &shape = field<initial_shape_tag>(model);
    if (shape.size() == 0) return false;
    for (const auto &forest : field<forests_tag>(model))
        for (const auto &tree : forest) {
            for (const auto &s : tree.splits)
                if (s.idx1 > UINT32_MAX || s.idx2 > UINT32_MAX) return false;
            for (const auto &leaf : tree.leaf_values)
                if (leaf.size() != shape.size()) return false;
        }
    for (const auto &a : field<anchor_idx_tag>(model))
        for (unsigned long i : a) if (i > UINT32_MAX) return false;
    return true;
}

// Decodes a payload, checking every count and index against what dlib's predictor dereferences.
bool decode(const uint8_t *data, size_t size, dlib::shape_predictor &model, std::string &why) {
    Reader r{data, data + size};
    auto &shape = field<initial_shape_tag>(model);
    uint32_t n = r.count(4);
    if (!r.ok || n == 0 || n % 2 != 0) { why = "bad initial shape"; return false; }
    shape.set_size(n);
    r.take(&shape(0), n * 4ull);
    const uint32_t parts = n / 2;

    auto &forests = field<forests_tag>(model);
    uint32_t cascades = r.count(4);
    forests.assign(cascades, {});
    for (auto &forest : forests) {
        uint32_t trees = r.count(8);
        forest.resize(trees);
        for (auto &tree : forest) {
            uint32_t splits = r.count(12);
            tree.splits.resize(splits);
            for (auto &s : tree.splits) { s.idx1 = r.u32(); s.idx2 = r.u32(); s.thresh = r.f32(); }
            uint32_t leaves = r.count(0);
            uint32_t leaf_size = r.u32();
            if (!r.ok || leaves != splits + 1 || (leaves & (leaves - 1)) != 0 || leaf_size != n ||
                static_cast<size_t>(r.end - r.p) / (4ull * leaf_size) < leaves) {
                why = "bad tree";
                return false;
            }
            tree.leaf_values.resize(leaves);
            for (auto &leaf : tree.leaf_values) {
                leaf.set_size(leaf_size);
                r.take(&leaf(0), leaf_size * 4ull);
            }
        }
        if (!r.ok) { why = "truncated forests"; return false; }
    }

    auto &anchors = field<anchor_idx_tag>(model);
    if (r.count(4) != cascades || !r.ok) { why = "anchor count differs from cascade count"; return false; }
    anchors.assign(cascades, {});
    for (auto &a : anchors) {
        uint32_t k = r.count(4);
        a.resize(k);
        for (auto &i : a) {
            i = r.u32();
            if (i >= parts) { why = "anchor index out of range"; return false; }
        }
    }
    auto &deltas = field<deltas_tag>(model);
    if (r.count(8) != cascades || !r.ok) { why = "delta count differs from cascade count"; return false; }
    deltas.assign(cascades, {});
    for (size_t c = 0; c < cascades; c++) {
        uint32_t k = r.count(8);
        if (k != anchors[c].size()) { why = "delta count differs from anchor count"; return false; }
        deltas[c].resize(k);
        for (auto &v : deltas[c]) { v.x() = r.f32(); v.y() = r.f32(); }
        // Every split reads feature pixels by index: they must exist.
        for (const auto &tree : forests[c])
            for (const auto &s : tree.splits)
                if (s.idx1 >= k || s.idx2 >= k) { why = "split index out of range"; return false; }
    }
    if (!r.ok) { why = "truncated"; return false; }
    if (r.p != r.end) { why = "trailing bytes"; return false; }
    return true;
}

bool read_file(const char *path, std::vector<uint8_t> &bytes, std::string &why, int &err) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) { err = errno; why = std::string("cannot open: ") + std::strerror(errno); return false; }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) { close(fd); err = EINVAL; why = "not a regular file"; return false; }
    bytes.resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (done < bytes.size()) {
        ssize_t k = read(fd, bytes.data() + done, bytes.size() - done);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) { err = k < 0 ? errno : EIO; close(fd); why = "read failed"; return false; }
        done += static_cast<size_t>(k);
    }
    close(fd);
    return true;
}

}  // namespace

extern "C" {

wv_status wv_predictor_cache_load(const char *model_path, const char *cache_path, wv_predictor **out,
                                  char *message, size_t message_len) {
    if (!model_path || !cache_path || !out) return WV_BAD_ARGUMENT;
    *out = nullptr;
    try {
        std::string why;
        uint64_t source_size = 0;
        int64_t source_mtime = 0;
        if (!source_identity(model_path, source_size, source_mtime, why)) {
            write_message(message, message_len, why);
            return WV_MODEL_MISSING;
        }
        std::vector<uint8_t> bytes;
        int err = 0;
        if (!read_file(cache_path, bytes, why, err)) {
            write_message(message, message_len, "no cache (" + why + ")");
            return err == ENOENT ? WV_MODEL_MISSING : WV_MODEL_UNREADABLE;
        }
        Reader h{bytes.data(), bytes.data() + bytes.size()};
        char magic[8];
        uint8_t digest[32], actual[32];
        if (bytes.size() < kHeaderSize || !h.take(magic, 8) || std::memcmp(magic, kMagic, 8) != 0) {
            write_message(message, message_len, "not a winkd model cache");
            return WV_MODEL_NOT_DLIB;
        }
        uint32_t version = h.u32(), bom = h.u32();
        uint64_t size = h.u64();
        int64_t mtime = static_cast<int64_t>(h.u64());
        uint64_t payload = h.u64();
        h.take(digest, 32);
        if (version != kFormatVersion || bom != kByteOrderMark) {
            write_message(message, message_len, "cache format version or byte order differs");
            return WV_MODEL_NOT_DLIB;
        }
        if (size != source_size || mtime != source_mtime) {
            write_message(message, message_len, "stale cache: the model file's size or modification time changed");
            return WV_MODEL_NOT_DLIB;
        }
        if (payload != bytes.size() - kHeaderSize) {
            write_message(message, message_len, "cache truncated or extended");
            return WV_MODEL_NOT_DLIB;
        }
        if (!sha256(bytes.data() + kHeaderSize, payload, actual) || std::memcmp(actual, digest, 32) != 0) {
            write_message(message, message_len, "cache checksum mismatch (SHA-256)");
            return WV_MODEL_NOT_DLIB;
        }
        auto predictor = new (std::nothrow) wv_predictor();
        if (!predictor) return WV_INTERNAL;
        if (!decode(bytes.data() + kHeaderSize, payload, predictor->model, why)) {
            delete predictor;
            write_message(message, message_len, "corrupt cache: " + why);
            return WV_MODEL_NOT_DLIB;
        }
        if (predictor->model.num_parts() != 68) {
            delete predictor;
            write_message(message, message_len, "cache is not of a 68-point model");
            return WV_MODEL_WRONG_PARTS;
        }
        *out = predictor;
        return WV_OK;
    } catch (const std::exception &e) {
        write_message(message, message_len, std::string("cache load failed: ") + e.what());
        return WV_INTERNAL;
    } catch (...) {
        write_message(message, message_len, "cache load failed");
        return WV_INTERNAL;
    }
}

wv_status wv_predictor_cache_write(const wv_predictor *predictor, const char *model_path, const char *cache_path,
                                   char *message, size_t message_len) {
    if (!predictor || !model_path || !cache_path) return WV_BAD_ARGUMENT;
    std::string tmp = std::string(cache_path) + ".tmp." + std::to_string(getpid());
    try {
        std::string why;
        uint64_t source_size = 0;
        int64_t source_mtime = 0;
        if (!source_identity(model_path, source_size, source_mtime, why)) {
            write_message(message, message_len, why);
            return WV_MODEL_MISSING;
        }
        if (!encodable(predictor->model)) {
            write_message(message, message_len, "model does not fit the cache layout");
            return WV_BAD_ARGUMENT;
        }
        std::vector<uint8_t> payload = encode(predictor->model);
        uint8_t digest[32];
        if (!sha256(payload.data(), payload.size(), digest)) {
            write_message(message, message_len, "SHA-256 failed");
            return WV_INTERNAL;
        }
        Writer h;
        h.put(kMagic, 8);
        h.u32(kFormatVersion);
        h.u32(kByteOrderMark);
        h.u64(source_size);
        h.u64(static_cast<uint64_t>(source_mtime));
        h.u64(payload.size());
        h.put(digest, 32);

        int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) {
            write_message(message, message_len, std::string("cannot create cache: ") + std::strerror(errno));
            return WV_MODEL_UNREADABLE;
        }
        bool ok = true;
        for (const auto *part : {&h.bytes, &payload}) {
            size_t done = 0;
            while (ok && done < part->size()) {
                ssize_t k = write(fd, part->data() + done, part->size() - done);
                if (k < 0 && errno == EINTR) continue;
                if (k <= 0) { ok = false; break; }
                done += static_cast<size_t>(k);
            }
        }
        int saved = errno;
        if (close(fd) != 0) ok = false;
        if (!ok || rename(tmp.c_str(), cache_path) != 0) {
            if (ok) saved = errno;
            unlink(tmp.c_str());
            write_message(message, message_len, std::string("cannot write cache: ") + std::strerror(saved));
            return WV_MODEL_UNREADABLE;
        }
        return WV_OK;
    } catch (const std::exception &e) {
        unlink(tmp.c_str());
        write_message(message, message_len, std::string("cache write failed: ") + e.what());
        return WV_INTERNAL;
    } catch (...) {
        unlink(tmp.c_str());
        write_message(message, message_len, "cache write failed");
        return WV_INTERNAL;
    }
}

int wv_predictor_identical(const wv_predictor *a, const wv_predictor *b) {
    if (!a || !b) return 0;
    try {
        // The encoding is a complete, exact (bitwise for floats) image of the four members.
        return encode(a->model) == encode(b->model) ? 1 : 0;
    } catch (...) {
        return 0;
    }
}

}  // extern "C"
