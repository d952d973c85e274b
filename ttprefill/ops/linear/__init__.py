"""Dense projections (x @ W^T) on the device, through tt-metal's own 2D-multicast matmul kernels.

Why tt-metal's kernels and not ours: the card runs ttnn.matmul through exactly these kernels, they
already run unmodified on the simulator (ttprefill/ops/upstream/matmul_mcast.py mirrors their
factory), and a projection needs nothing they lack. What is ours is the plan: which grid, per-core
block, K block and sub-block a Qwen3.5 shape gets, and how a long sequence is cut into row slabs
that each fit one 8x8 program (planner.py).

    shapes.py    LinearShape and the projections of a ModelConfig layer
    planner.py   LinearPlan / plan_linear: blocking under the L1 budget
    program.py   the Program of each row slab (the mirror, moved to the slab's first row)
    linear.py    DenseWeight (resident, transposed once on the host) and linear() on DeviceTensors
"""

from .linear import DenseWeight, linear, linear_host
from .planner import LinearPlan, plan_linear
from .shapes import LinearShape, projection_shapes

__all__ = ["DenseWeight", "LinearPlan", "LinearShape", "linear", "linear_host", "plan_linear", "projection_shapes"]
