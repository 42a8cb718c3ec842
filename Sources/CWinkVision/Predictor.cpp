// CWinkVision: loading the 68-point shape predictor from dlib's file and predicting landmarks, through
// the flat evaluator (ShapeRegression.cpp) or dlib's own (see include/CWinkVision.h for the contract).
// No exception leaves this file.
#include "CWinkVision.h"
#include "PredictorState.hpp"  // struct wv_predictor, shared with ModelCache.cpp
#include "VisionArguments.hpp"

#include <dlib/image_processing.h>
#include <dlib/opencv/cv_image.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <new>
#include <string>
#include <sys/stat.h>

using winkvision::valid_image;
using winkvision::wrap;
using winkvision::write_message;

namespace {

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

}  // namespace

extern "C" {

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

}  // extern "C"
