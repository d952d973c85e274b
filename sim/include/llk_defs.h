// The LLK enums kernels name (tt-llk's llk_defs.h for Wormhole): in namespace ckernel, with the same
// enumerators and values, so template arguments such as PoolType::SUM or BroadcastType::COL mean the
// same thing here as on the device.
#pragma once

#include <cstdint>


namespace ckernel {

enum class VectorMode : std::uint8_t { None = 0, R = 1, C = 2, RC = 4, RC_custom = 6, Invalid = 0xFF };
enum class ReduceDim : std::uint8_t { REDUCE_ROW, REDUCE_COL, REDUCE_SCALAR };
enum class PoolType : std::uint8_t { SUM, AVG, MAX, MIN };
enum class DataCopyType : std::uint8_t { A2D, B2D };
enum class EltwiseBinaryType : std::uint8_t { ELWMUL, ELWDIV, ELWADD, ELWSUB, ELWLESS };
enum class EltwiseBinaryReuseDestType { NONE = 0, DEST_TO_SRCA = 1, DEST_TO_SRCB = 2 };
enum class DstSync : std::uint8_t { SyncHalf = 0, SyncFull = 1 };
enum class BroadcastType : std::uint8_t { NONE = 0x0, COL = 0x1, ROW = 0x2, SCALAR = 0x3 };
enum class Transpose : std::uint8_t { None = 0, IntraFace = 1, InterFace = 2, Both = 3 };
enum class ReluType : std::uint8_t { NO_RELU = 0, ZERO_RELU, MIN_THRESHOLD_RELU, MAX_THRESHOLD_RELU };
enum class MathFidelity : std::uint8_t { LoFi = 0, HiFi2 = 2, HiFi3 = 3, HiFi4 = 4 };
enum class StochRndType : std::uint8_t { None = 0, Fpu = 1, Pack = 2, All = 0xf };

constexpr bool UnpackToDestEn = true;
constexpr bool UnpackToDestDis = false;

// The packer's ReLU setting (pack_relu_config): a mode and, for the threshold modes, a threshold whose
// low 16 bits are a value in the packer's format.
class ReluConfig {
public:
    static constexpr ReluConfig none() { return ReluConfig(ReluType::NO_RELU, 0); }
    static constexpr ReluConfig zero() { return ReluConfig(ReluType::ZERO_RELU, 0); }
    static constexpr ReluConfig min_threshold(std::uint32_t t) { return ReluConfig(ReluType::MIN_THRESHOLD_RELU, t); }
    static constexpr ReluConfig max_threshold(std::uint32_t t) { return ReluConfig(ReluType::MAX_THRESHOLD_RELU, t); }
    // The packed form the host passes as one word: mode in bits 0-1, threshold in bits 16-31.
    static constexpr ReluConfig from_packed(std::uint32_t packed) {
        return ReluConfig(static_cast<ReluType>(packed & 0x3u), (packed >> 16) & 0xFFFFu);
    }
    constexpr ReluType get_mode() const { return mode_; }
    constexpr std::uint32_t get_threshold() const { return threshold_; }

private:
    constexpr ReluConfig(ReluType mode, std::uint32_t threshold) : mode_(mode), threshold_(threshold) {}
    ReluType mode_;
    std::uint32_t threshold_;
};

}  // namespace ckernel
