"""Cluster descriptors (tt-umd's YAML) for the mesh tier beyond mock_env's n150 / n300.

A T3000: four n300 boards, eight Wormhole chips. Each board's PCIe chip (0-3) is joined to its remote chip
(4-7) by two links on channels 8/9 -> 0/1, as on an n300; the boards are cabled to their neighbours by two
links each (channels 6/7, 14/15, 0/1), which closes the eight chips into a 2x4 grid whose perimeter is a ring
(the wiring tt-metal's own T3000 mock descriptor and fabric graph describe). Chip coordinates are the
descriptor's [x, y, rack, shelf]. One Tensix row of each chip is harvested, leaving the 8x8 worker grid.
"""

from __future__ import annotations

# (x, y) of each chip on the board grid.
T3000_CHIPS = {0: (1, 0), 1: (1, 1), 2: (2, 0), 3: (2, 1), 4: (0, 0), 5: (0, 1), 6: (3, 0), 7: (3, 1)}
# Each link: ((chip, channel), (chip, channel)).
T3000_LINKS = [
    ((0, 6), (2, 6)), ((0, 7), (2, 7)), ((0, 8), (4, 0)), ((0, 9), (4, 1)), ((0, 14), (1, 14)), ((0, 15), (1, 15)),
    ((1, 0), (3, 0)), ((1, 1), (3, 1)), ((1, 8), (5, 0)), ((1, 9), (5, 1)),
    ((2, 8), (6, 0)), ((2, 9), (6, 1)), ((2, 14), (3, 14)), ((2, 15), (3, 15)),
    ((3, 8), (7, 0)), ((3, 9), (7, 1)),
    ((4, 6), (5, 6)), ((4, 7), (5, 7)), ((6, 6), (7, 6)), ((6, 7), (7, 7)),
]
T3000_MMIO = {0: 0, 1: 1, 2: 3, 3: 2}  # chip -> PCIe device
T3000_BOARDS = [(4, 0), (5, 1), (6, 2), (7, 3)]  # (remote, local) chips of each n300


def t3000_descriptor() -> str:
    lines = ["arch: {" + ", ".join(f"{c}: Wormhole" for c in T3000_CHIPS) + "}",
             "chips: {" + ", ".join(f"{c}: [{x}, {y}, 0, 0]" for c, (x, y) in T3000_CHIPS.items()) + "}",
             "ethernet_connections: ["]
    lines += [f"  [{{chip: {a}, chan: {ca}}}, {{chip: {b}, chan: {cb}}}]," for (a, ca), (b, cb) in T3000_LINKS]
    lines += ["]",
              "chips_with_mmio: [" + ", ".join(f"{c}: {d}" for c, d in T3000_MMIO.items()) + "]",
              "harvesting: {" + ", ".join(f"{c}: {{noc_translation: true, harvest_mask: 1}}" for c in T3000_CHIPS) + "}",
              "boards: ["]
    # n300 board ids carry the board type 0x146 in bits 36..55 (tt-umd's UPI), as mock_env's n300.
    lines += [f"  [{{board_id: 0x1000146000000{i + 1:02x}}}, {{board_type: n300}}, {{chips: [{r}, {l}]}}],"
              for i, (r, l) in enumerate(T3000_BOARDS)]
    lines.append("]")
    return "\n".join(lines) + "\n"
