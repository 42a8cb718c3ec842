// CWinkVision model cache: a flat little-endian image of the shape predictor (PredictorState.hpp) that loads in a few tens
// of milliseconds instead of dlib's ~1 s deserialiser (which decodes every float from dlib's portable
// variable-length encoding, byte by byte). See include/CWinkVisionModelCache.h for the contract and
// Models/README.md for the file layout. No exception leaves this file.
#include "CWinkVisionModelCache.h"
#include "PredictorState.hpp"
#include "VisionArguments.hpp"

#include <openssl/evp.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace {

using winkvision::RegressionModel;
using winkvision::Split;
using winkvision::write_message;

constexpr char kMagic[8] = {'W', 'I', 'N', 'K', 'S', 'P', 'C', '\0'};
constexpr uint32_t kFormatVersion = 2;
constexpr uint32_t kByteOrderMark = 0x01020304u;  // reads back as 0x04030201 on a big-endian host
// magic, version, byte-order mark, source size, source mtime (ns), payload size, payload SHA-256
constexpr size_t kHeaderSize = 8 + 4 + 4 + 8 + 8 + 8 + 32;
// Sanity bounds for a file that passed its checksum but was written by something else.
constexpr uint32_t kMaxCount = 1u << 24;

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

// Payload layout (all little-endian; u32 counts, f32 IEEE-754 floats), the flat model of PredictorState.hpp:
//   u32 dims, u32 cascades, u32 trees, u32 leaves per tree, u32 features, u32 zero
//   initial_shape: dims x f32
//   anchors:       cascades x features x u32
//   deltas:        cascades x features x (f32 dx, f32 dy)
//   splits:        cascades x trees x (leaves - 1) x (u16 idx1, u16 idx2, f32 thresh)
//   zero padding to a file offset that is a multiple of 64
//   leaves:        cascades x trees x leaves x dims x f32
// The leaves are used in place in the block the file was read into.
constexpr size_t kCountsSize = 6 * 4;
constexpr size_t kLeafAlignment = 64;

size_t leaf_offset(const RegressionModel &m) {
    size_t fixed = kHeaderSize + kCountsSize + size_t(m.dims) * 4 + m.anchors.size() * 4 + m.deltas.size() * 8 +
                   m.splits.size() * sizeof(Split);
    return (fixed + kLeafAlignment - 1) / kLeafAlignment * kLeafAlignment - kHeaderSize;
}

std::vector<uint8_t> encode(const RegressionModel &m) {
    Writer w;
    for (uint32_t v : {m.dims, m.cascades, m.trees, m.leaves_per_tree, m.features, 0u}) w.u32(v);
    w.floats(m.initial_shape.data(), m.initial_shape.size());
    for (uint32_t a : m.anchors) w.u32(a);
    for (const auto &d : m.deltas) { w.f32(d.x()); w.f32(d.y()); }
    for (const Split &s : m.splits) { w.put(&s.idx1, 2); w.put(&s.idx2, 2); w.f32(s.thresh); }
    w.bytes.resize(leaf_offset(m), 0);
    w.floats(m.leaves, m.leaf_count());
    return std::move(w.bytes);
}

// Decodes a payload that starts `kHeaderSize` bytes into a 64-byte aligned block; the leaves stay there.
bool decode(const uint8_t *data, size_t size, RegressionModel &m, std::string &why) {
    Reader r{data, data + size};
    m.dims = r.u32();
    m.cascades = r.u32();
    m.trees = r.u32();
    m.leaves_per_tree = r.u32();
    m.features = r.u32();
    uint32_t zero = r.u32();
    if (!r.ok || zero != 0 || m.dims == 0 || m.dims > 4096 || m.cascades == 0 || m.cascades > 1024 ||
        m.trees == 0 || m.trees > 100000 || m.leaves_per_tree < 2 || m.leaves_per_tree > 65536 ||
        (m.leaves_per_tree & (m.leaves_per_tree - 1)) != 0 || m.features == 0 || m.features > 65535) {
        why = "bad sizes";
        return false;
    }
    m.depth = 0;
    while ((1u << m.depth) < m.leaves_per_tree) m.depth++;
    const uint64_t pixels = uint64_t(m.cascades) * m.features;
    const uint64_t splits = uint64_t(m.cascades) * m.trees * (m.leaves_per_tree - 1);
    const uint64_t leaves = uint64_t(m.cascades) * m.trees * m.leaves_per_tree * m.dims;
    if (leaves > kMaxCount * uint64_t(64) || splits > kMaxCount) { why = "bad sizes"; return false; }
    if (size < kCountsSize + uint64_t(m.dims) * 4 + pixels * 12 + splits * sizeof(Split) + leaves * 4) {
        why = "truncated";
        return false;
    }
    m.initial_shape.resize(m.dims);
    m.anchors.resize(pixels);
    m.deltas.resize(pixels);
    m.splits.resize(splits);
    r.take(m.initial_shape.data(), size_t(m.dims) * 4);
    r.take(m.anchors.data(), pixels * 4);
    for (auto &d : m.deltas) { d.x() = r.f32(); d.y() = r.f32(); }
    for (auto &s : m.splits) { r.take(&s.idx1, 2); r.take(&s.idx2, 2); s.thresh = r.f32(); }
    if (!r.ok) { why = "truncated"; return false; }
    const size_t offset = leaf_offset(m);
    if (offset < size_t(r.p - data) || offset > size || size - offset != leaves * 4) {
        why = size < offset + leaves * 4 ? "truncated" : "trailing bytes";
        return false;
    }
    for (const uint8_t *pad = r.p; pad < data + offset; pad++)
        if (*pad != 0) { why = "bad padding"; return false; }
    m.leaves = reinterpret_cast<const float *>(data + offset);
    why = m.validate();
    return why.empty();
}

// Reads the whole cache file into one 64-byte aligned block (the leaves are then used in place). Read,
// not mapped: a mapped file that someone truncates or edits in place would change the model under a
// running daemon or kill it with SIGBUS.
bool read_file(const char *path, void *&base, size_t &size, std::string &why, int &err) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) { err = errno; why = std::string("cannot open: ") + std::strerror(errno); return false; }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) { close(fd); err = EINVAL; why = "not a regular file"; return false; }
    size = static_cast<size_t>(st.st_size);
    base = nullptr;
    if (posix_memalign(&base, 64, size > 0 ? size : 1) != 0) {
        close(fd);
        err = ENOMEM;
        why = "out of memory";
        return false;
    }
    size_t done = 0;
    while (done < size) {
        ssize_t k = read(fd, static_cast<uint8_t *>(base) + done, size - done);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) { err = k < 0 ? errno : EIO; break; }
        done += static_cast<size_t>(k);
    }
    close(fd);
    if (done < size) {  // shrank while being read
        std::free(base);
        base = nullptr;
        why = "read failed";
        return false;
    }
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
        void *base = nullptr;
        size_t file_size = 0;
        int err = 0;
        if (!read_file(cache_path, base, file_size, why, err)) {
            write_message(message, message_len, "no cache (" + why + ")");
            return err == ENOENT ? WV_MODEL_MISSING : WV_MODEL_UNREADABLE;
        }
        // The predictor owns the block from here on (freed when it is destroyed).
        auto predictor = new (std::nothrow) wv_predictor();
        if (!predictor) {
            std::free(base);
            return WV_INTERNAL;
        }
        predictor->model.storage = base;
        auto fail = [&](wv_status status, const std::string &text) {
            delete predictor;
            write_message(message, message_len, text);
            return status;
        };
        const uint8_t *bytes = static_cast<const uint8_t *>(base);
        Reader h{bytes, bytes + file_size};
        char magic[8];
        uint8_t digest[32], actual[32];
        if (file_size < kHeaderSize || !h.take(magic, 8) || std::memcmp(magic, kMagic, 8) != 0)
            return fail(WV_MODEL_NOT_DLIB, "not a winkd model cache");
        uint32_t version = h.u32(), bom = h.u32();
        uint64_t size = h.u64();
        int64_t mtime = static_cast<int64_t>(h.u64());
        uint64_t payload = h.u64();
        h.take(digest, 32);
        if (version != kFormatVersion || bom != kByteOrderMark)
            return fail(WV_MODEL_NOT_DLIB, "cache format version or byte order differs");
        if (size != source_size || mtime != source_mtime)
            return fail(WV_MODEL_NOT_DLIB, "stale cache: the model file's size or modification time changed");
        if (payload != file_size - kHeaderSize) return fail(WV_MODEL_NOT_DLIB, "cache truncated or extended");
        if (!sha256(bytes + kHeaderSize, payload, actual) || std::memcmp(actual, digest, 32) != 0)
            return fail(WV_MODEL_NOT_DLIB, "cache checksum mismatch (SHA-256)");
        if (!decode(bytes + kHeaderSize, payload, predictor->model, why))
            return fail(WV_MODEL_NOT_DLIB, "corrupt cache: " + why);
        if (predictor->model.parts() != 68) return fail(WV_MODEL_WRONG_PARTS, "cache is not of a 68-point model");
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
        // The encoding is a complete, exact (bitwise for floats) image of the model.
        return encode(a->model) == encode(b->model) ? 1 : 0;
    } catch (...) {
        return 0;
    }
}

}  // extern "C"
