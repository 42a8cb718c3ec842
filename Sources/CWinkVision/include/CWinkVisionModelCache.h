// CWinkVision model cache (Sources/CWinkVision/ModelCache.cpp), behind a plain C interface with the
// conventions and statuses of CWinkVision.h (which includes this header).
//
// A compact binary image of a loaded shape predictor (flat little-endian u32/f32 arrays behind a header
// with the format version, the model file's size and mtime, and the payload's SHA-256; see
// Models/README.md). It loads in tens of milliseconds instead of about 1 s. A cache is only ever used when
// its header matches the model file and its checksum and structure check out; otherwise it is ignored.
#ifndef CWINKVISION_MODEL_CACHE_H
#define CWINKVISION_MODEL_CACHE_H

#include "CWinkVision.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Loads the predictor for `model_path` from `cache_path`. WV_OK with `*out` set only when the cache's
/// header names this model file (same size and modification time), its SHA-256 matches and its contents
/// are a valid 68-point predictor. Otherwise `*out` is NULL, a one-line reason is written to `message`,
/// and the status is WV_MODEL_MISSING (no cache file, or no model file), WV_MODEL_UNREADABLE,
/// WV_MODEL_NOT_DLIB (stale, corrupt or foreign file) or WV_MODEL_WRONG_PARTS.
wv_status wv_predictor_cache_load(const char *model_path, const char *cache_path, wv_predictor **out,
                                  char *message, size_t message_len);

/// Writes the cache of `predictor` (loaded from `model_path`) to `cache_path`, atomically (a temporary
/// file in the same directory, then rename(2)); the directory must exist. On failure nothing is left
/// behind and a one-line reason is written to `message`.
wv_status wv_predictor_cache_write(const wv_predictor *predictor, const char *model_path,
                                   const char *cache_path, char *message, size_t message_len);

/// 1 when both predictors hold exactly the same model (every float bit-identical), else 0.
int wv_predictor_identical(const wv_predictor *a, const wv_predictor *b);

#ifdef __cplusplus
}
#endif
#endif
