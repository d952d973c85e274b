// Watcher waypoints (api/debug/waypoint.h): a 4-character marker the device writes to a debug mailbox
// for the host to read when a core hangs. The simulator reports where each kernel is blocked itself,
// so a waypoint has nothing to record and costs no modeled time.
#pragma once

#define WAYPOINT(x)
