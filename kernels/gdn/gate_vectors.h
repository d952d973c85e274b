// The per-chunk gate vectors of the GDN scan: what the decay g and the write strength beta of a value
// head contribute to one chunk, one 32-token vector per (quantity, token tile). The gate-vector program
// (gate_vectors_*.cpp) computes them for 32 value heads at a time; the scan's readers fetch one head's
// row of them. With gam the inclusive cumulative sum of g inside the chunk, end(I) the gam of the last
// token of token tile I and last = end(nt - 1):
//
//   kBeta          beta_t
//   kGam           gam_t
//   kExpGam        exp(gam_t)                      O's factor on q h
//   kBetaExpGam    beta_t exp(gam_t)               the column factor of T-hat (the key side of Vnew)
//   kToLast        exp(last - gam_t)               K^T's column factor in the state update
//   kLast          exp(last), the same for every t the state's decay over the chunk
//   kToTileEnd     exp(end(tile of t) - gam_t)     right factor of the off-diagonal decay tiles
//   kFromTileEnd+J exp(gam_t - end(J)), for t in tiles after J; zero elsewhere
//                                                  left factor of the off-diagonal decay tiles
//
// Every exponent is <= 0 (g <= 0), so every factor is in [0, 1]: the off-diagonal decay tile (I, J)
// is the product exp(gam_r - end(J)) exp(end(J) - gam_c) of two such factors, so no exp is taken of a
// tile-sized difference and nothing can overflow. Tokens past the sequence's end have g = beta = 0.
//
// Device layout: an fp32 tiled tensor of shape [kinds * head_tiles * 32, row_tiles(token_tiles) * 32]
// with heads along rows and tokens along columns: quantity q of value head h for token t is element
// (q * head_tiles * 32 + h, t); the columns past the tokens are never written or read. A scan reader copies row h % 32 of tile (q * head_tiles + h / 32, t / 32)
// into row 0 of a "vector tile", the form the SFPU's broadcast operations read (row 0 for a row
// broadcast; its transpose puts the values in column 0 for a column broadcast).
//
// In L1 the scan keeps a chunk's vector tiles in one CB, tile q * nt + i for quantity q, token tile i.
#pragma once

#include <cstdint>

namespace gdn::gv {

constexpr uint32_t kBeta = 0;
constexpr uint32_t kGam = 1;
constexpr uint32_t kExpGam = 2;
constexpr uint32_t kBetaExpGam = 3;
constexpr uint32_t kToLast = 4;
constexpr uint32_t kLast = 5;
constexpr uint32_t kToTileEnd = 6;
constexpr uint32_t kFromTileEnd = 7;  // + J, J = 0 .. nt - 2

// Quantities for a chunk of nt token tiles.
inline uint32_t kinds(uint32_t nt) { return kFromTileEnd + nt - 1; }

// Position of quantity q of token tile i in a chunk's vector-tile CB.
inline uint32_t at(uint32_t q, uint32_t i, uint32_t nt) { return q * nt + i; }

// Tiles per row of the device tensor: the token tiles rounded up to a count with no factor in common
// with the 12 DRAM banks (page i lives in bank i % 12). The cores writing the same chunk's tiles then
// spread over every bank; with 256 token tiles (8k tokens), a multiple of 4, the rows of all the
// quantities started on banks 4 apart and every core's writes went to the same 6 banks.
inline uint32_t row_tiles(uint32_t token_tiles) {
    uint32_t n = token_tiles;
    while (n % 2 == 0 || n % 3 == 0) ++n;
    return n;
}

}  // namespace gdn::gv
