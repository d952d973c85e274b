"""The Ethernet timing model of the mesh executor's collectives (modeled, not measured).

A collective over the N chips of one mesh axis is timed as

    handshake + hops * hop latency + (bytes over the busiest link direction) / (links * payload rate)

with the constants of ttprefill.hw ("Ethernet"; sources in docs/TIMING.md); the payload rate is the link's
raw rate times the cost setting's efficiency (low / central / high, as the chips' own cost settings). The busiest link direction
follows from the algorithm (tt-metal tech_reports/EthernetMultichip/CclDeveloperGuide.md):

- line all-gather of shards of S bytes: the link next to an end chip carries the other N-1 shards one
  way, (N-1) S, over N-1 hops;
- ring all-gather (bidirectional: each shard goes both ways, half of it each way, or all of it half way
  round): (N-1) S / 2 each way on every link, over ceil((N-1)/2) hops;
- reduce-scatter of X bytes per chip (out: X/N per chip): a chunk's partial sum travels to its owner,
  line (N-1) X/N over the end link, ring (bidirectional) (N-1) X/(2N), N-1 hops either way; the adds on
  the receiving chips run under the link transfer (an eltwise add of a tile takes far less than the tile
  takes on a link) and are not charged;
- all-reduce: ttnn's composite, a reduce-scatter then an all-gather of its X/N results.

A ring of two chips is a line (the two are joined by the same links either way). DRAM reads and writes
are not charged: a chip's DRAM (288 B/cycle) outruns two links (~24 GB/s) by an order of magnitude.

Collectives do not overlap compute: ttnn runs each one as a program of its own on the chip's command
queue (workers feed the Ethernet data movers), so the next program starts after it. Only fused ops
(all-gather + matmul on sub-devices) overlap, and none is modeled.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from ttprefill.hw import (
    ETH_HANDSHAKE_S,
    ETH_HOP_LATENCY_S,
    ETH_LINK_RAW_BYTES_PER_S,
    ETH_PAYLOAD_EFFICIENCY_BY_SETTING,
)

LINE, RING = "line", "ring"
TOPOLOGIES = (LINE, RING)
COLLECTIVES = ("all_gather", "reduce_scatter", "all_reduce")


@dataclass(frozen=True)
class CollectiveTime:
    """One collective's modeled time and what it is made of."""

    kind: str
    chips: int
    topology: str
    links: int
    busiest_link_bytes: float  # bytes one link direction carries, the bottleneck
    hops: int
    seconds: float

    def as_dict(self) -> dict:
        return asdict(self)


def _check(kind: str, chips: int, topology: str, links: int) -> None:
    if kind not in COLLECTIVES:
        raise ValueError(f"unknown collective {kind!r}; choose one of {', '.join(COLLECTIVES)}")
    if topology not in TOPOLOGIES:
        raise ValueError(f"unknown topology {topology!r}; choose one of {', '.join(TOPOLOGIES)}")
    if chips < 1 or links < 1:
        raise ValueError(f"a collective needs at least one chip and one link, got {chips} chips, {links} links")


def _phase(kind: str, chips: int, topology: str, nbytes: float) -> tuple[float, int]:
    """(busiest link-direction bytes, hops) of one all-gather of `nbytes` shards or one reduce-scatter of
    `nbytes` inputs."""
    n = chips
    ring = topology == RING and n > 2
    if kind == "all_gather":
        return ((n - 1) * nbytes / 2, math.ceil((n - 1) / 2)) if ring else ((n - 1) * nbytes, n - 1)
    chunk = nbytes / n
    return ((n - 1) * chunk / 2, n - 1) if ring else ((n - 1) * chunk, n - 1)


def collective_time(kind: str, nbytes_per_chip: float, chips: int, topology: str, links: int,
                    costs: str = "central") -> CollectiveTime:
    """The modeled time of one collective over `chips` chips. `nbytes_per_chip` is each chip's input:
    its shard for all_gather, its whole partial tensor for reduce_scatter and all_reduce."""
    _check(kind, chips, topology, links)
    if costs not in ETH_PAYLOAD_EFFICIENCY_BY_SETTING:
        raise ValueError(f"unknown cost setting {costs!r}; choose one of {', '.join(ETH_PAYLOAD_EFFICIENCY_BY_SETTING)}")
    if chips == 1:
        return CollectiveTime(kind, 1, topology, links, 0.0, 0, 0.0)
    rate = links * ETH_LINK_RAW_BYTES_PER_S * ETH_PAYLOAD_EFFICIENCY_BY_SETTING[costs]
    if kind == "all_reduce":
        phases = [_phase("reduce_scatter", chips, topology, nbytes_per_chip),
                  _phase("all_gather", chips, topology, nbytes_per_chip / chips)]
    else:
        phases = [_phase(kind, chips, topology, nbytes_per_chip)]
    seconds = sum(ETH_HANDSHAKE_S + hops * ETH_HOP_LATENCY_S + b / rate for b, hops in phases)
    return CollectiveTime(kind, chips, topology, links, sum(b for b, _ in phases), sum(h for _, h in phases),
                          seconds)


# Device-timed collectives from tt-metal, each compared with the model and none used to set a constant
# (held out): (what, kind, bytes per chip in, chips, topology, links, measured seconds low, high, source).
_BF16_TILE, _BFP8_TILE = 2048, 1088
HELD_OUT = [
    ("Qwen3.5-9B pre-norm all-gather, N300, [2048, 2048] bf16 a chip", "all_gather", 2048 * 2048 * 2, 2, LINE, 1,
     1013e-6, 1245e-6, "docs/calibration_sources.md 4d (tt/prefill_norm_tuned.py, tp_common.py)"),
    ("Qwen3.5-27B post-norm all-gather, T3000 ring of 8, [2048, 640] bf16 a chip", "all_gather",
     2048 * 640 // 1024 * _BF16_TILE, 8, RING, 1, 1163.7e-6, 1201.6e-6, "docs/calibration_sources.md 4d"),
    ("same in bfp8", "all_gather", 2048 * 640 // 1024 * _BFP8_TILE, 8, RING, 1, 678.2e-6, 678.2e-6,
     "docs/calibration_sources.md 4d"),
] + [
    (f"Mixtral prefill all-gather, T3000 ring of 8, bfp8 [{s}, 4096] a chip", "all_gather",
     s * 4096 // 1024 * _BFP8_TILE, 8, RING, 1, t, t, "tt-metal issue #18808 (perf target table)")
    for s, t in ((128, 571060e-9), (1024, 1568544e-9), (8192, 11957881e-9), (32768, 49056211e-9))
]


def held_out_points(costs: str = "central") -> list[dict]:
    """The model against each device-timed collective above (ratio = modeled / measured). At the high setting
    the Qwen points are not held out: its efficiency is what their authors state those collectives reach."""
    out = []
    for what, kind, nbytes, chips, topology, links, low, high, source in HELD_OUT:
        modeled = collective_time(kind, nbytes, chips, topology, links, costs).seconds
        held_out = not (costs == "high" and "calibration_sources" in source)
        out.append({"collective": what, "kind": kind, "bytes_per_chip": nbytes, "chips": chips, "topology": topology,
                    "links": links, "costs": costs, "measured_s": [low, high], "modeled_s": modeled,
                    "ratio": [modeled / high, modeled / low], "held_out": held_out, "source": source})
    return out


if __name__ == "__main__":
    import json

    print(json.dumps({"model": "ethernet collectives (ttprefill/device/mesh_timing.py), modeled",
                      "points": [p for costs in ETH_PAYLOAD_EFFICIENCY_BY_SETTING for p in held_out_points(costs)]},
                     indent=1))
