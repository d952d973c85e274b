// The watcher's debug ring buffer (api/debug/ring_buffer.h): values a kernel pushes for the host to
// dump when a core hangs. Compiled away unless the watcher is enabled, as on the device; the
// simulator names blocked kernels itself, so it never enables it.
#pragma once

#include <cstdint>

#define WATCHER_RING_BUFFER_PUSH(x)
#define WATCHER_RING_BUFFER_INIT()
