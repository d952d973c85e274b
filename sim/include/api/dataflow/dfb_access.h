// Access patterns of a dataflow buffer and the DataflowBuffer forward declaration (api/dataflow/dfb_access.h).
// The patterns only matter on Quasar, where a buffer may be shared by several producers/consumers; on
// Wormhole a DataflowBuffer is a plain class over one circular buffer.
#pragma once

#include <cstdint>

namespace dfb {
enum AccessPattern : uint8_t {
    STRIDED,
    ALL,
    BLOCKED,
    UNKNOWN,
};
}  // namespace dfb

class DataflowBuffer;
#define DFB_TEMPLATE_DECL
#define DFB_CLASS DataflowBuffer
using DataflowBufferAnyPattern = DataflowBuffer;

template <typename T>
inline constexpr bool is_dataflow_buffer_v = false;
template <>
inline constexpr bool is_dataflow_buffer_v<DataflowBuffer> = true;
