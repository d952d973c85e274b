// Kernel assertions (api/debug/assert.h). The simulator always checks them, as tt-metal does with its
// watcher enabled: a false condition stops the run with the kernel's source line instead of hanging
// the core.
#pragma once

#include <cstdint>
#include <string>

#include "ttsim/common.h"

enum debug_assert_type_t {
    DebugAssertOK = 2,
    DebugAssertTripped = 3,
    DebugAssertNCriscNOCReadsFlushedTripped = 4,
    DebugAssertNCriscNOCNonpostedWritesSentTripped = 5,
    DebugAssertNCriscNOCNonpostedAtomicsFlushedTripped = 6,
    DebugAssertNCriscNOCPostedWritesSentTripped = 7,
    DebugAssertRtaOutOfBounds = 8,
    DebugAssertCrtaOutOfBounds = 9,
    DebugAssertHwFault = 10,
    DebugAssertNCriscNOCPacketTagClearedTripped = 11,
    DebugAssertNocMidNotClearedTripped = 12,
};

inline void assert_and_hang(uint32_t line_num, debug_assert_type_t assert_type = DebugAssertTripped) {
    const std::string msg = "kernel assertion failed at line " + std::to_string(line_num) + " (assert type " +
                            std::to_string(int(assert_type)) + ")";
    TTSIM->fail("ASSERT", msg.c_str());
}

#ifndef ASSERT
#define ASSERT(condition, ...) (void(not(condition) ? assert_and_hang(__LINE__, ##__VA_ARGS__), 0 : 0))
#define ASSERT_ENABLED 1
#endif
