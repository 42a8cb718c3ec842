// CWinkOverlay: PNG decoding to straight-alpha RGBA and image/video writing through OpenCV, for the
// Overlay module only. No C++ exception crosses this header.
#ifndef CWINKOVERLAY_H
#define CWINKOVERLAY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum wo_status {
    WO_OK = 0,
    WO_MISSING = 1,
    WO_UNREADABLE = 2,
    WO_NOT_DECODABLE = 3,
    WO_BAD_ARGUMENT = 4,
    WO_INTERNAL = 5,
} wo_status;

#ifdef __cplusplus
}
#endif
#endif
