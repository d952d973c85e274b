// Compute-kernel arguments and the headers every compute kernel sees (api/compute/common.h).
#pragma once

#include <cstdint>

#include "api/compile_time_args.h"
#include "api/compute/common_globals.h"

template <typename T>
FORCE_INLINE T get_arg_val(int arg_idx) {
    static_assert(sizeof(T) == 4, "runtime arguments are 32-bit");
    uint32_t v = TTSIM->arg(arg_idx);
    return *reinterpret_cast<T*>(&v);
}
template <typename T>
FORCE_INLINE T get_common_arg_val(int arg_idx) {
    static_assert(sizeof(T) == 4, "runtime arguments are 32-bit");
    uint32_t v = TTSIM->common_arg(arg_idx);
    return *reinterpret_cast<T*>(&v);
}

#include "api/compute/cb_api.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/pack.h"
#include "api/compute/reconfig_data_format.h"
#include "api/compute/reg_api.h"

// This core's logical coordinates (absolute: from the grid's origin; relative: from the program's
// sub-device origin, which is the grid's origin in the simulator), as the dataflow API gives them.
inline uint8_t get_absolute_logical_x() { return TTSIM->my_logical_x(); }
inline uint8_t get_absolute_logical_y() { return TTSIM->my_logical_y(); }
inline uint8_t get_relative_logical_x() { return TTSIM->my_logical_x(); }
inline uint8_t get_relative_logical_y() { return TTSIM->my_logical_y(); }

// The L1 address of a runtime argument (of this core's, or of the ones common to all cores).
static FORCE_INLINE uint32_t get_arg_addr(int arg_idx) { return TTSIM->arg_address(arg_idx, false); }
static FORCE_INLINE uint32_t get_common_arg_addr(int arg_idx) { return TTSIM->arg_address(arg_idx, true); }
