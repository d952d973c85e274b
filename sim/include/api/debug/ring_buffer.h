// The watcher's debug ring buffer (WATCHER_RING_BUFFER_PUSH(value)): kernels log trace words into it
// when tt-metal builds them with the watcher on. The simulator builds kernels as the device does
// without the watcher, where the push compiles to nothing and its argument is not evaluated.
#pragma once

#define WATCHER_RING_BUFFER_PUSH(x)
