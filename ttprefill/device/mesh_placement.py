"""How a tensor lies over a mesh of chips, as ttnn expresses it: one placement per mesh axis, `Replicate()`
(ttnn.PlacementReplicate) or `Shard(dim)` (ttnn.PlacementShard), chips in row-major order. Pure numpy and
no device: the simulated mesh (device/mesh.py) and the card (device/tt_device.py) share these rules.

- Splitting (ttnn's create_mesh_mapper): the row axis splits first, the column axis splits each row's
  part; `shard_placements(dim)` is ttnn.ShardTensorToMesh (dim split over all chips in row-major order).
- Composing (ConcatMeshToTensor / create_mesh_composer): shards of a sharded axis concatenate in chip
  order; a replicated axis contributes its first chip's copy (as ttnn's collective goldens compose).
- Collective outputs are labelled as ttnn's goldens label them (ttnn/operations/ccl.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Replicate:
    """Every chip along this mesh axis holds the whole tensor (ttnn.PlacementReplicate)."""


@dataclass(frozen=True)
class Shard:
    """The chips along this mesh axis each hold one slice of tensor dimension `dim` (ttnn.PlacementShard)."""

    dim: int


REPLICATE = (Replicate(), Replicate())


def shard_placements(dim: int) -> tuple[Shard, Shard]:
    """ttnn.ShardTensorToMesh(mesh, dim): `dim` split over all chips in row-major order (the same as
    sharding it along both mesh axes)."""
    return (Shard(dim), Shard(dim))


def norm_dim(dim: int, rank: int) -> int:
    d = dim + rank if dim < 0 else dim
    if not 0 <= d < rank:
        raise ValueError(f"dim {dim} is outside a tensor of rank {rank}")
    return d


def check_placements(placements, rank: int) -> tuple:
    placements = tuple(placements)
    if len(placements) != 2 or not all(isinstance(p, (Replicate, Shard)) for p in placements):
        raise ValueError(f"placements need one Replicate() or Shard(dim) per mesh axis (2), got {placements!r}")
    return tuple(Shard(norm_dim(p.dim, rank)) if isinstance(p, Shard) else p for p in placements)


def global_shape(shape, placements, mesh_shape) -> tuple[int, ...]:
    """The composed shape of a tensor whose per-chip shape is `shape`."""
    out = list(shape)
    for axis, p in enumerate(placements):
        if isinstance(p, Shard):
            out[p.dim] *= mesh_shape[axis]
    return tuple(out)


def split(array: np.ndarray, placements: tuple, mesh_shape) -> list[np.ndarray]:
    """Per-chip arrays, row-major over the mesh (ttnn's create_mesh_mapper)."""
    rows, cols = mesh_shape
    counts: dict[int, int] = {}
    for axis, p in enumerate(placements):
        if isinstance(p, Shard):
            counts[p.dim] = counts.get(p.dim, 1) * mesh_shape[axis]
    for dim, count in counts.items():
        size = array.shape[dim]
        if size % count:
            raise ValueError(
                f"cannot shard dim {dim} of size {size} over {count} chips of the {rows}x{cols} mesh: {size} is "
                f"not a multiple of {count}; pad dim {dim} to a multiple of {count} or replicate it")
    by_row = np.split(array, rows, axis=placements[0].dim) if isinstance(placements[0], Shard) else [array] * rows
    out = []
    for part in by_row:
        out += np.split(part, cols, axis=placements[1].dim) if isinstance(placements[1], Shard) else [part] * cols
    return [np.ascontiguousarray(a) for a in out]


def compose(shards: list[np.ndarray], placements: tuple, mesh_shape) -> np.ndarray:
    """One array from per-chip arrays (ConcatMeshToTensor / create_mesh_composer; replicated axes: first copy)."""
    rows, cols = mesh_shape
    row_values = []
    for r in range(rows):
        part = shards[r * cols:(r + 1) * cols]
        row_values.append(np.concatenate(part, axis=placements[1].dim) if isinstance(placements[1], Shard)
                          else part[0])
    return np.concatenate(row_values, axis=placements[0].dim) if isinstance(placements[0], Shard) else row_values[0]


def gather_label(placements: tuple, dim: int) -> tuple:
    """After all_gather(dim): axes that sharded `dim` are replicated."""
    return tuple(Replicate() if isinstance(p, Shard) and p.dim == dim else p for p in placements)


def scatter_label(placements: tuple, dim: int, cluster_axis: int | None, mesh_shape) -> tuple:
    """After reduce_scatter(dim): axes that sharded `dim` become replicated, then the cluster axis (every
    axis of more than one chip when None) shards `dim`."""
    if cluster_axis is None:
        return tuple(Shard(dim) if size > 1 else Replicate() for size in mesh_shape)
    out = list(gather_label(placements, dim))
    out[cluster_axis] = Shard(dim)
    return tuple(out)


def reduce_label(placements: tuple, cluster_axis: int | None) -> tuple:
    """After all_reduce: the cluster axis (every axis when None) is replicated."""
    out = list(placements)
    for axis in (range(2) if cluster_axis is None else [cluster_axis]):
        out[axis] = Replicate()
    return tuple(out)
