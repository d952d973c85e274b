// A tile's shape in faces (tt-llk's tensor_shape.h): face rows and columns and how many faces it has
// in each direction. The simulator stores full 32x32 tiles of four 16x16 faces only, so the calls that
// take a TensorShape accept that one shape (DEFAULT_TENSOR_SHAPE) and stop the run on any other.
#pragma once

#include <cstdint>

namespace ckernel {

constexpr std::uint8_t MAX_FACE_R_DIM = 16;
constexpr std::uint8_t MAX_FACE_C_DIM = 16;
constexpr std::uint8_t MAX_TILE_R_DIM = 32;
constexpr std::uint8_t MAX_TILE_C_DIM = 32;
constexpr std::uint8_t MAX_NUM_FACES_R_DIM = 2;
constexpr std::uint8_t MAX_NUM_FACES_C_DIM = 2;
constexpr std::uint8_t MAX_NUM_FACES = MAX_NUM_FACES_R_DIM * MAX_NUM_FACES_C_DIM;
constexpr std::uint8_t MAX_FPU_ROWS = 8;
constexpr std::uint8_t MAX_FPU_ROWS_LOG2 = 3;
constexpr std::uint8_t MAX_TILES_IN_HALF_DEST = 8;

struct __attribute__((packed)) TensorShape {
    std::uint8_t face_r_dim;
    std::uint8_t face_c_dim;
    std::uint8_t num_faces_r_dim;
    std::uint8_t num_faces_c_dim;

    constexpr std::uint16_t total_row_dim() const { return std::uint16_t(face_r_dim) * num_faces_r_dim; }
    constexpr std::uint16_t total_col_dim() const { return std::uint16_t(face_c_dim) * num_faces_c_dim; }
    constexpr std::uint16_t total_tensor_size() const { return total_row_dim() * total_col_dim(); }
    constexpr std::uint8_t total_num_faces() const { return num_faces_r_dim * num_faces_c_dim; }
};
static_assert(sizeof(TensorShape) == 4, "TensorShape is four bytes on the device");

constexpr TensorShape DEFAULT_TENSOR_SHAPE = {MAX_FACE_R_DIM, MAX_FACE_C_DIM, MAX_NUM_FACES_R_DIM, MAX_NUM_FACES_C_DIM};

constexpr TensorShape make_tensor_shape(std::uint8_t face_r_dim, std::uint8_t face_c_dim, std::uint8_t num_faces_r_dim,
                                        std::uint8_t num_faces_c_dim) {
    return TensorShape{face_r_dim, face_c_dim, num_faces_r_dim, num_faces_c_dim};
}
// Four faces are 2x2; one or two faces lie side by side in a single face row.
constexpr TensorShape tensor_shape_from_num_faces(std::uint32_t face_r_dim = MAX_FACE_R_DIM,
                                                  std::uint32_t num_faces = MAX_NUM_FACES) {
    return TensorShape{static_cast<std::uint8_t>(face_r_dim), MAX_FACE_C_DIM,
                       static_cast<std::uint8_t>(num_faces == 4 ? 2 : 1),
                       static_cast<std::uint8_t>(num_faces == 4 ? 2 : num_faces)};
}
constexpr bool is_full_tile(const TensorShape& s) {
    return s.face_r_dim == MAX_FACE_R_DIM && s.face_c_dim == MAX_FACE_C_DIM && s.num_faces_r_dim == 2 &&
           s.num_faces_c_dim == 2;
}

}  // namespace ckernel
