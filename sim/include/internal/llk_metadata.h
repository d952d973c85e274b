// The tile description a binding token carries for the LLK calls that take it (internal/llk_metadata.h):
// data format (kNoFormat when the binding has none) and the face geometry.
#pragma once

#include <cstdint>

namespace binding_details {
struct LLKMetadata {
    static constexpr uint8_t kNoFormat = 0xFF;
    uint8_t format = kNoFormat;
    uint8_t face_r_dim = 16;
    uint8_t face_c_dim = 16;
    uint8_t num_faces_r_dim = 2;
    uint8_t num_faces_c_dim = 2;
};
}  // namespace binding_details
