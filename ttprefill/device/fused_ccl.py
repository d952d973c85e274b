"""The card path's fused matmul + collective ops: ttnn.experimental.all_gather_matmul_async and
matmul_reduce_scatter_async (ttnn 0.81.1), called for TTDevice (its all_gather_matmul / matmul_reduce_scatter).

What ttnn 0.81.1 requires of them (its validation and program factories, and what its mock n300 / T3000 answer,
tests/host/mock/mesh_driver.py):
- the collective on dim 3 of rank-4 tensors: the features of [1, 1, M, K] (a split of the tokens cannot use them);
- no cluster axis: the op runs over the whole mesh as one line or ring, so a 2-D mesh is refused here;
- the fused all-gather refuses a line topology ("linear is not support when using fused for all-gather"), and
  ttnn treats a mesh of two chips as a line whatever the fabric: an n300 cannot run it;
- global semaphores for the collective (2 for the gather, 3 for the reduce-scatter) and one barrier semaphore,
  on the worker cores; the reduce-scatter's intermediate and output are persistent buffers the caller allocates
  (intermediate: the matmul output's shape, doubled along dim 0 on a line; output: the last dim / chips);
- the matmul as a 2D-multicast program config on the grid the collective leaves it: the collective's workers and
  mux cores at a grid offset below the matmul's rows (mesh_timing.fused_matmul_grid).
"""

from __future__ import annotations

from ttprefill.device.mesh_timing import fused_matmul_grid
from ttprefill.hw import ETH_CCL_LINKS_PER_NEIGHBOUR_PAIR, TILE


# the collective's global semaphores: the gather's two (one a direction), the reduce-scatter's three (the ring
# needs three; ttnn's validation asks for at least that many on a ring, one on a line)
AG_SEMAPHORES, RS_SEMAPHORES = 2, 3


class FusedOpRefused(ValueError):
    """A fused op ttnn 0.81.1 would refuse for this mesh or these shapes; the message says what to use instead."""


def check_mesh(mesh_shape: tuple[int, int], topology: str, what: str) -> int:
    """The chips of the one mesh axis a fused op runs over; refuses what ttnn would refuse."""
    rows, cols = mesh_shape
    chips = rows * cols
    if chips < 2:
        raise FusedOpRefused(f"{what} needs a mesh of more than one chip")
    if rows > 1 and cols > 1:
        raise FusedOpRefused(f"ttnn 0.81.1's {what} takes no cluster axis and runs over the whole mesh as one line "
                             f"or ring: open the {rows}x{cols} mesh as 1x{chips} (a T3000: 1x8 on a ring fabric)")
    if what == "all_gather_matmul" and (topology != "ring" or chips == 2):
        raise FusedOpRefused(
            "ttnn 0.81.1 refuses the fused all-gather + matmul on a line ('linear is not support when using fused "
            "for all-gather'), and it treats a mesh of two chips as a line: use all_gather then a matmul"
            + ("" if chips == 2 else f", or open the mesh on a ring fabric (topology 'ring')"))
    return chips


def program_config(ttnn, blocking, grid: tuple[int, int]):
    """ttnn's 2D-multicast matmul config from `blocking` (ops/linear/fused_blocking.MatmulBlocking: the planner
    chooses the blocks), which must be for the grid the collective leaves the matmul."""
    if tuple(blocking.grid) != tuple(grid):
        raise FusedOpRefused(f"the matmul blocking is for a {blocking.grid[0]}x{blocking.grid[1]} grid, but the "
                             f"collective leaves the matmul {grid[0]}x{grid[1]}: plan it with "
                             "ops.linear.fused_blocking for this device")
    cols, rows = grid
    return ttnn.MatmulMultiCoreReuseMultiCastProgramConfig(
        compute_with_storage_grid_size=ttnn.CoreCoord(cols, rows), in0_block_w=blocking.in0_block_w,
        out_subblock_h=blocking.out_subblock_h, out_subblock_w=blocking.out_subblock_w,
        out_block_h=blocking.out_block_h, out_block_w=blocking.per_core_n, per_core_M=blocking.per_core_m,
        per_core_N=blocking.per_core_n, transpose_mcast=False, fused_activation=None, fuse_batch=False)


def _semaphores(ttnn, mesh, grid: tuple[int, int], count: int) -> list:
    cores = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(grid[0] - 1, grid[1] - 1))])
    return [ttnn.create_global_semaphore(mesh, cores, 0) for _ in range(count)]


def _layout(links: int | None, grid: tuple[int, int]) -> tuple[int, tuple[int, int], object]:
    links = ETH_CCL_LINKS_PER_NEIGHBOUR_PAIR if links is None else links
    matmul_grid = fused_matmul_grid(links, grid)
    return links, matmul_grid, (0, matmul_grid[1])  # the collective's cores: the rows below the matmul's


def all_gather_matmul(ttnn, mesh, x_tt, weight_tt, m: int, k_shard: int, k: int, n: int, chips: int,
                      grid: tuple[int, int], blocking, links: int | None = None):
    """(gathered [1, 1, m, k], out [1, 1, m, n]) of x [m, k_shard] a chip gathered along its columns, times the
    weight [k, n]."""
    links, matmul_grid, offset = _layout(links, grid)
    if k_shard * chips != k:
        raise FusedOpRefused(f"the gathered width {k_shard} x {chips} chips is not the weight's K ({k})")
    semaphores = _semaphores(ttnn, mesh, grid, AG_SEMAPHORES)
    barrier = _semaphores(ttnn, mesh, grid, 1)[0]
    return ttnn.experimental.all_gather_matmul_async(
        ttnn.reshape(x_tt, [1, 1, m, k_shard]), ttnn.reshape(weight_tt, [1, 1, k, n]), None, 3, semaphores,
        ttnn.CoreCoord(*offset), num_links=links, topology=ttnn.Topology.Ring, barrier_semaphore=barrier,
        memory_config_ag=ttnn.DRAM_MEMORY_CONFIG, memory_config_mm=ttnn.DRAM_MEMORY_CONFIG,
        program_config=program_config(ttnn, blocking, matmul_grid))


def matmul_reduce_scatter(ttnn, mesh, x_tt, weight_tt, m: int, k: int, n: int, chips: int, batches: int,
                          topology: str, grid: tuple[int, int], blocking, links: int | None = None):
    """(mm [batches, 1, m / batches, n], reduced [batches, 1, m / batches, n / chips]): x [m, k] @ weight [k, n] on
    every chip, the sum over chips scattered along the columns, the rows cut into `batches` so the reduce-scatter
    of a batch runs under the matmul of the next."""
    links, matmul_grid, offset = _layout(links, grid)
    if batches < 1 or m % (TILE * batches):
        raise FusedOpRefused(f"{m} rows do not cut into {batches} batches of whole tile rows")
    if n % (TILE * chips):
        raise FusedOpRefused(f"the output's {n} columns do not split into whole tiles over {chips} chips")
    rows = m // batches
    line = topology != "ring" or chips == 2
    dtype, tile, dram = ttnn.bfloat16, ttnn.TILE_LAYOUT, ttnn.DRAM_MEMORY_CONFIG
    intermediate = ttnn.allocate_tensor_on_device(ttnn.Shape([batches * (2 if line else 1), 1, rows, n]), dtype,
                                                  tile, mesh, dram)
    output = ttnn.allocate_tensor_on_device(ttnn.Shape([batches, 1, rows, n // chips]), dtype, tile, mesh, dram)
    semaphores = _semaphores(ttnn, mesh, grid, RS_SEMAPHORES)
    barrier = _semaphores(ttnn, mesh, grid, 1)[0]
    return ttnn.experimental.matmul_reduce_scatter_async(
        ttnn.reshape(x_tt, [batches, 1, rows, k]), ttnn.reshape(weight_tt, [1, 1, k, n]), intermediate, output, 3,
        semaphores, ttnn.CoreCoord(*offset), barrier_semaphore=barrier, num_links=links,
        topology=ttnn.Topology.Linear if line else ttnn.Topology.Ring, memory_config_rs=dram,
        intermediate_memory_config_rs=dram, memory_config_mm=dram,
        program_config=program_config(ttnn, blocking, matmul_grid))
