// Wormhole's NoC alignment rules, under the name tt-metal's kernels include them by (its
// hw/inc/internal/tt-1xx/wormhole/noc/noc_parameters.h, whose register maps the simulator does not model:
// only the alignments kernels size buffers and strides with are here). Values from that header.
#pragma once

#define NOC_L1_READ_ALIGNMENT_BYTES 16
#define NOC_L1_WRITE_ALIGNMENT_BYTES 16
#define NOC_PCIE_READ_ALIGNMENT_BYTES 32
#define NOC_PCIE_WRITE_ALIGNMENT_BYTES 16
#define NOC_DRAM_READ_ALIGNMENT_BYTES 32
#define NOC_DRAM_WRITE_ALIGNMENT_BYTES 16
#define NOC_REG_ALIGNMENT_BYTES 4
// The larger of the L1 read and write alignments.
#define L1_ALIGNMENT (NOC_L1_READ_ALIGNMENT_BYTES > NOC_L1_WRITE_ALIGNMENT_BYTES ? NOC_L1_READ_ALIGNMENT_BYTES : NOC_L1_WRITE_ALIGNMENT_BYTES)
// The larger of the DRAM read and write alignments (tt-metal passes it to kernels): matmul readers pad
// tile slots to it.
#define DRAM_ALIGNMENT 32
