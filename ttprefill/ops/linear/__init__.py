"""Dense projections (x @ W^T) on the device, through tt-metal's own 2D-multicast matmul kernels.

Why tt-metal's kernels and not ours: the card runs ttnn.matmul through exactly these kernels, they
already run unmodified on the simulator (ttprefill/ops/upstream/matmul_mcast.py mirrors their
factory), and a projection needs nothing they lack. What is ours is the plan: which grid, per-core
block, K block and sub-block a Qwen3.5 shape gets, and how a long sequence is cut into row slabs
that each fit one 8x8 program (planner.py).

    shapes.py    LinearShape and the projections of a ModelConfig layer
    planner.py   LinearPlan / plan_linear: blocking under the L1 budget
    program.py   the Program of each row slab (the mirror, moved to the slab's first row)
    linear.py    DenseWeight (resident, transposed once on the host) and linear() on DeviceTensors;
                 ChunkedDenseWeight / linear_chunked for outputs too wide for one program (the LM
                 head); split_query_gate for q_proj's per-head query and gate rows
    swiglu.py    the MLP's gate | up projection with silu(gate) * up in its compute kernel (ours), one
                 program a column group and row slab; pair_gate_up lays the two weights out as one

Projections that share their input and have narrow outputs (in_proj_b and in_proj_a: one tile column
each) are bound by the 8 cores of the left column reading x: fusing them with a wide projection of the
same x (rows of one resident weight) amortises that read.
"""

from .linear import ChunkedDenseWeight, DenseWeight, linear, linear_chunked, linear_host, split_query_gate
from .planner import LinearPlan, plan_linear
from .shapes import LinearShape, projection_shapes

__all__ = ["ChunkedDenseWeight", "DenseWeight", "LinearPlan", "LinearShape", "linear", "linear_chunked", "linear_host",
           "plan_linear", "projection_shapes", "split_query_gate"]
