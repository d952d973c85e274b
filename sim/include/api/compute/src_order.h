// Which of the two input CBs feeds srcA (api/compute/src_order.h): Regular puts the first operand in
// srcA, Reverse the second (matmul unpacks in1 to srcA).
#pragma once

#include <cstdint>

namespace ckernel {
enum class SrcOrder : uint8_t { Regular = 0, Reverse = 1 };
}  // namespace ckernel
