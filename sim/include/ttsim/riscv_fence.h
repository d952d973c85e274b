// Kernels order their L1 accesses with the RISC-V `fence` instruction in inline assembly
// (asm volatile("fence")). The host's assembler has no such mnemonic; the simulator runs each kernel's
// memory accesses in program order on coherent host memory, so `fence` assembles to nothing here.
#pragma once

__asm__(".macro fence operands:vararg\n.endm");
