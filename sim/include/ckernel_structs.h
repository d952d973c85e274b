// The Tensix semaphore and stall ids kernels name (tt-llk's ckernel_structs.h and ckernel_instr_params.h
// for Wormhole), with the device's values.
#pragma once

#include <cstdint>

namespace ckernel {

struct semaphore {
    constexpr static std::uint32_t FPU_SFPU = 0;
    constexpr static std::uint32_t MATH_PACK = 1;
    constexpr static std::uint32_t UNPACK_TO_DEST = 2;
    constexpr static std::uint32_t UNPACK_OPERAND_SYNC = 3;
    constexpr static std::uint32_t PACK_DONE = 4;
    constexpr static std::uint32_t UNPACK_SYNC = 5;
    constexpr static std::uint32_t UNPACK_MATH_DONE = 6;
    constexpr static std::uint32_t MATH_DONE = 7;
    constexpr static std::uint8_t NUM_SEMAPHORES = 8;
    constexpr static std::uint8_t SEMAPHORE_BIT_COUNT = 4;
    constexpr static std::uint8_t SEMAPHORE_MAX_VALUE = (1 << SEMAPHORE_BIT_COUNT) - 1;
    constexpr static std::uint16_t t6_sem(const std::uint8_t sem_index) { return std::uint16_t(1u << sem_index); }
};

struct p_stall {
    // What a stall waits on
    constexpr static std::uint32_t NONE = 0x0;
    constexpr static std::uint32_t THCON = 0x1;
    constexpr static std::uint32_t UNPACK0 = 0x2;
    constexpr static std::uint32_t UNPACK1 = 0x4;
    constexpr static std::uint32_t UNPACK = UNPACK0 | UNPACK1;
    constexpr static std::uint32_t PACK0 = 0x8;
    constexpr static std::uint32_t MATH = 0x80;
    constexpr static std::uint32_t WAIT_SFPU = 0x4000;
    // What is stalled
    constexpr static std::uint32_t STALL_TDMA = 0x1;
    constexpr static std::uint32_t STALL_SYNC = 0x2;
    constexpr static std::uint32_t STALL_PACK = 0x4;
    constexpr static std::uint32_t STALL_UNPACK = 0x8;
    constexpr static std::uint32_t STALL_XMOV = 0x10;
    constexpr static std::uint32_t STALL_THCON = 0x20;
    constexpr static std::uint32_t STALL_MATH = 0x40;
    constexpr static std::uint32_t STALL_CFG = 0x80;
    constexpr static std::uint32_t STALL_SFPU = 0x100;
    // Semaphore wait conditions
    constexpr static std::uint32_t STALL_ON_ZERO = 0x1;
    constexpr static std::uint32_t STALL_ON_MAX = 0x2;
};

}  // namespace ckernel
