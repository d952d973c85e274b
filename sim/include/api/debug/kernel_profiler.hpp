// Device profiler zones for the simulator. DeviceZoneScopedN("name") opens a zone that closes at the
// end of the enclosing scope; the simulator adds up, per zone name over all cores, the cycles spent
// inside and each compute pipeline's busy cycles (RunReport.zones). Zones cost no modeled time, so a
// kernel may keep them in its source; on the device the macro is tt-metal's profiler zone.
#pragma once

#include "ttsim/kernel_api.h"

namespace ttsim {
class ProfilerZone {
public:
    explicit ProfilerZone(const char* name) { TTSIM->zone_begin(name); }
    ~ProfilerZone() { TTSIM->zone_end(); }
    ProfilerZone(const ProfilerZone&) = delete;
    ProfilerZone& operator=(const ProfilerZone&) = delete;
};
}  // namespace ttsim

#define TTSIM_ZONE_CONCAT2(a, b) a##b
#define TTSIM_ZONE_CONCAT(a, b) TTSIM_ZONE_CONCAT2(a, b)
#define DeviceZoneScopedN(name) ::ttsim::ProfilerZone TTSIM_ZONE_CONCAT(ttsim_zone_, __LINE__)(name)
