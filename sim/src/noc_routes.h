// Where the simulated cores and DRAM banks sit on Wormhole's NoC, and the links a transfer crosses.
//
// Kernels address cores and DRAM banks by the simulator's own coordinates (device.h): worker (x, y) of the
// 8 x 8 grid, DRAM bank b at (kDramNocX0 + b, kDramNocY). Routing needs their places on the chip, which
// these tables give. Each NoC is a torus over the chip's 10 x 12 nodes with dimension-ordered routing:
// NoC 0 runs east (x + 1) until the column is right, then south (y + 1); NoC 1 runs north (y - 1), then
// west (x - 1); both wrap at the edges (tt-npe device_models/wormhole_b0.hpp unicastRoute). Every link
// between neighbouring nodes carries 30 B/cycle (timing.h kNocLinkBytesPerCycle).
#pragma once

#include <bitset>
#include <cstdint>

#include "device.h"

namespace ttsim::noc_routes {

// Wormhole B0's NoC grid (tt-metal soc_descriptors/wormhole_b0_80_arch.yaml: x_size 10, y_size 12).
constexpr int kCols = 10, kRows = 12;
// Tensix columns are 1-4 and 6-9 (0 and 5 hold DRAM, ARC, PCIe and router-only nodes), Tensix rows 1-5
// and 7-11 (0 and 6 are Ethernet): the soc descriptor's functional_workers.
constexpr int kWorkerCol[kGridX] = {1, 2, 3, 4, 6, 7, 8, 9};
// Eight of those ten rows hold the 8 x 8 compute grid; the others are harvested or run dispatch, and
// which ones differs from chip to chip. Estimate: the first eight (the two dropped rows move the busiest
// link of an all-core DRAM write by -8 % to +20 % over the 45 possible choices; docs/TIMING.md).
constexpr int kWorkerRow[kGridY] = {1, 2, 3, 4, 5, 7, 8, 9};
// The NoC node each DRAM bank answers workers at: the soc descriptor's dram_preferred_worker_endpoint
// (0-11, 0-1, 0-5, 0-7, 5-1, 5-11, 5-2, 5-9, 5-8, 5-3, 5-5, 5-7 as x-y), the endpoints ttnn's allocator
// hands workers for banks 0-11.
constexpr int kDramCol[kDramBanks] = {0, 0, 0, 0, 5, 5, 5, 5, 5, 5, 5, 5};
constexpr int kDramRow[kDramBanks] = {11, 1, 5, 7, 1, 11, 2, 9, 8, 3, 5, 7};

struct Node {
    int col, row;
};

inline Node worker_node(int x, int y) { return {kWorkerCol[x], kWorkerRow[y]}; }
inline Node dram_node(int bank) { return {kDramCol[bank], kDramRow[bank]}; }

// One NoC's links: two leaving each node (NoC 0: east, south; NoC 1: north, west), indexed by the node
// they leave from.
constexpr int kLinksPerNoc = kCols * kRows * 2;
using LinkSet = std::bitset<kLinksPerNoc>;

inline int link_index(int col, int row, int second_dimension) { return (row * kCols + col) * 2 + second_dimension; }

// The links a unicast from `from` to `to` crosses on `noc`, added to `links`.
inline void add_unicast(int noc, Node from, Node to, LinkSet& links) {
    int col = from.col, row = from.row;
    if (noc == 0) {
        for (; col != to.col; col = (col + 1) % kCols) links.set(link_index(col, row, 0));
        for (; row != to.row; row = (row + 1) % kRows) links.set(link_index(col, row, 1));
    } else {
        for (; row != to.row; row = (row + kRows - 1) % kRows) links.set(link_index(col, row, 0));
        for (; col != to.col; col = (col + kCols - 1) % kCols) links.set(link_index(col, row, 1));
    }
}

// A multicast to the rectangle of nodes [lo, hi] is one packet stream that forks where its routes part:
// the union of the unicast routes to the far end of each line of the rectangle along the NoC's second
// direction (NoC 0: each column down to the rectangle's southern row; NoC 1: each row across to its
// western column), as tt-npe's multicast route builds it.
inline void add_multicast(int noc, Node from, Node lo, Node hi, LinkSet& links) {
    if (noc == 0) {
        for (int col = lo.col; col <= hi.col; ++col) add_unicast(0, from, {col, hi.row}, links);
    } else {
        for (int row = lo.row; row <= hi.row; ++row) add_unicast(1, from, {lo.col, row}, links);
    }
}

}  // namespace ttsim::noc_routes
