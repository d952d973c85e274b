// Quantization on the SFPU (api/compute/quantization.h): declared only; each call stops the run.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ckernel {

ALWI void quant_tile(uint32_t, uint32_t, uint32_t) { TTSIM_NOT_MODELED("quant_tile", "quantization"); }
ALWI void quant_int8_tile(uint32_t, uint32_t, uint32_t) { TTSIM_NOT_MODELED("quant_int8_tile", "quantization"); }
ALWI void requant_tile(uint32_t, uint32_t, uint32_t) { TTSIM_NOT_MODELED("requant_tile", "quantization"); }
ALWI void requant_int8_tile(uint32_t, uint32_t, uint32_t) { TTSIM_NOT_MODELED("requant_int8_tile", "quantization"); }
ALWI void requant_int8_in_tile(uint32_t, uint32_t, uint32_t) { TTSIM_NOT_MODELED("requant_int8_in_tile", "quantization"); }
ALWI void requant_int8_in_int8_out_tile(uint32_t, uint32_t, uint32_t) { TTSIM_NOT_MODELED("requant_int8_in_int8_out_tile", "quantization"); }
ALWI void dequant_tile(uint32_t, uint32_t, uint32_t) { TTSIM_NOT_MODELED("dequant_tile", "quantization"); }
ALWI void dequant_int8_tile(uint32_t, uint32_t, uint32_t) { TTSIM_NOT_MODELED("dequant_int8_tile", "quantization"); }
ALWI void quant_tile_init([[maybe_unused]] const uint32_t zero_point) { TTSIM_NOT_MODELED("quant_tile_init", "quantization"); }
ALWI void quant_uint8_tile_init([[maybe_unused]] const uint32_t zero_point) { TTSIM_NOT_MODELED("quant_uint8_tile_init", "quantization"); }
ALWI void quant_int8_tile_init([[maybe_unused]] const uint32_t zero_point) { TTSIM_NOT_MODELED("quant_int8_tile_init", "quantization"); }
ALWI void requant_tile_init([[maybe_unused]] const uint32_t zero_point) { TTSIM_NOT_MODELED("requant_tile_init", "quantization"); }
ALWI void requant_uint8_tile_init([[maybe_unused]] const uint32_t zero_point) { TTSIM_NOT_MODELED("requant_uint8_tile_init", "quantization"); }
ALWI void requant_int8_tile_init([[maybe_unused]] const uint32_t zero_point) { TTSIM_NOT_MODELED("requant_int8_tile_init", "quantization"); }
ALWI void requant_int8_in_tile_init([[maybe_unused]] const uint32_t zero_point) { TTSIM_NOT_MODELED("requant_int8_in_tile_init", "quantization"); }
ALWI void requant_int8_in_uint8_out_tile_init([[maybe_unused]] const uint32_t zero_point) { TTSIM_NOT_MODELED("requant_int8_in_uint8_out_tile_init", "quantization"); }
ALWI void requant_int8_in_int8_out_tile_init([[maybe_unused]] const uint32_t zero_point) { TTSIM_NOT_MODELED("requant_int8_in_int8_out_tile_init", "quantization"); }
ALWI void dequant_tile_init([[maybe_unused]] const uint32_t zero_point) { TTSIM_NOT_MODELED("dequant_tile_init", "quantization"); }
ALWI void dequant_int8_tile_init([[maybe_unused]] const uint32_t zero_point) { TTSIM_NOT_MODELED("dequant_int8_tile_init", "quantization"); }

}  // namespace ckernel
