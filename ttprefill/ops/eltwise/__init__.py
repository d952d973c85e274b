"""Element-wise ops of the layer stack on the device, through tt-metal's binary_ng kernels.

    residual_add   x + y                      (both residual connections of every layer)
    silu_mul       silu(gate) * up            (the SwiGLU MLP between its projections)
    sigmoid_gate   o * sigmoid(g)             (the attention output gate)

Why tt-metal's kernels: ttnn runs exactly these ops as binary_ng with an activation fused on one
operand (ttnn.multiply(gate, up, input_tensor_a_activations=[SILU]) is how tt-transformers' MLP does
it), its reader, compute and writer kernels already run unmodified on the simulator
(ops/upstream/binary.py mirrors the plain factory), and an element-wise op has nothing a kernel of
ours could do better: it is DRAM-bound, one tile in per operand and one out.

    program.py   binary_ng's program with per-operand SFPU activations (the factory's defines and CBs)
    eltwise.py   the three ops on DeviceTensors, and *_host forms for tests
"""

from .eltwise import residual_add, sigmoid_gate, silu_mul
from .program import ACTIVATIONS, Activation, binary_program

__all__ = ["ACTIVATIONS", "Activation", "binary_program", "residual_add", "sigmoid_gate", "silu_mul"]
