// CWinkVision private header (not part of the C interface): the definition of wv_predictor shared by the
// C++ files of this target. It must stay token-for-token identical to any other definition in the target
// (C++ one-definition rule): both CWinkVision.cpp and ModelCache.cpp include it.
#ifndef CWINKVISION_PREDICTOR_STATE_HPP
#define CWINKVISION_PREDICTOR_STATE_HPP

#include <dlib/image_processing.h>

struct wv_predictor {
    dlib::shape_predictor model;
};

#endif
