// Stand-in for the SFPI compiler's sfpi.h, for syntax checks of compute kernels with the host g++.
// It declares the SFPI vector types, constants, intrinsics and conditional-execution macros the
// pinned LLK headers use, permissively: every operator and intrinsic accepts any argument and does
// nothing. It lets the headers and our kernels parse; it checks nothing about SFPU code itself.
#pragma once
#include <cstdint>
#include <type_traits>

#define sfpi_inline inline

namespace sfpi {

template <int Kind>
struct V {
    constexpr V() {}
    template <class T>
    constexpr V(const T&) {}
    template <class T> V& operator=(const T&) { return *this; }
    template <class T> V& operator+=(const T&) { return *this; }
    template <class T> V& operator-=(const T&) { return *this; }
    template <class T> V& operator*=(const T&) { return *this; }
    template <class T> V& operator&=(const T&) { return *this; }
    template <class T> V& operator|=(const T&) { return *this; }
    template <class T> V& operator^=(const T&) { return *this; }
    template <class T> V& operator<<=(const T&) { return *this; }
    template <class T> V& operator>>=(const T&) { return *this; }
    V operator-() const { return *this; }
    V operator~() const { return *this; }
    V& operator++() { return *this; }
    V operator++(int) { return *this; }
    V& operator--() { return *this; }
    V operator--(int) { return *this; }
    template <class T> V operator[](const T&) const { return *this; }
    template <auto Layout> V& mode() { return *this; }
    template <class T> V& mode(const T&) { return *this; }
    int get() const { return 0; }
    void in_use() const {}
};

template <class T> struct is_v : std::false_type {};
template <int K> struct is_v<V<K>> : std::true_type {};

using vFloat = V<0>;
using vInt = V<1>;
using vUInt = V<2>;
using vBool = V<3>;
using vFloat16a = V<4>;
using vFloat16b = V<5>;
using vMag = V<6>;
using vSMag = V<7>;
using vSMag8 = V<8>;
using vSMag16 = V<9>;
using vUInt8 = V<10>;
using vUInt16 = V<11>;

#define TTP_SFPI_BINARY(op)                                                                                    \
    template <int K, class T> constexpr V<K> operator op(const V<K>& a, const T&) { return a; }                 \
    template <int K, class T, class = std::enable_if_t<!is_v<T>::value>>                                       \
    constexpr V<K> operator op(const T&, const V<K>& b) { return b; }
TTP_SFPI_BINARY(+)
TTP_SFPI_BINARY(-)
TTP_SFPI_BINARY(*)
TTP_SFPI_BINARY(&)
TTP_SFPI_BINARY(|)
TTP_SFPI_BINARY(^)
TTP_SFPI_BINARY(<<)
TTP_SFPI_BINARY(>>)
#define TTP_SFPI_COMPARE(op)                                                                                   \
    template <int K, class T> constexpr vBool operator op(const V<K>&, const T&) { return {}; }                 \
    template <int K, class T, class = std::enable_if_t<!is_v<T>::value>>                                       \
    constexpr vBool operator op(const T&, const V<K>&) { return {}; }
TTP_SFPI_COMPARE(<)
TTP_SFPI_COMPARE(>)
TTP_SFPI_COMPARE(<=)
TTP_SFPI_COMPARE(>=)
TTP_SFPI_COMPARE(==)
TTP_SFPI_COMPARE(!=)
TTP_SFPI_COMPARE(&&)
TTP_SFPI_COMPARE(||)
constexpr vBool operator!(const vBool& c) { return c; }

struct sFloat16a { template <class T> constexpr sFloat16a(const T&) {} };
struct sFloat16b { template <class T> constexpr sFloat16b(const T&) {} };
struct vLut { template <class... A> constexpr vLut(const A&...) {} };
using vLut16ss = vLut;
using vLut16ii = vLut;
using vLut8si = vLut;

enum class DataLayout { Default, F32, FSrcB, I32, ROW_MAJOR, SM32, TILE, U16, U32 };
enum class ExponentMode { Biased, Unbiased };
enum class LRegs { LReg0, LReg1, LReg2, LReg3, LReg4, LReg5, LReg6, LReg7 };
enum class LutSign { Retain, Update };
enum class MantissaMode { ImplicitOne, NoImplicitOne };
enum class RoundMode { Nearest, NearestStochastic, Stochastic };
enum class ShiftMode { Logical, Arithmetic };

struct DstReg {
    template <class T> vFloat operator[](const T&) const { return {}; }
    template <class T> DstReg& operator+=(const T&) { return *this; }
    DstReg& operator++() { return *this; }
    DstReg operator++(int) { return *this; }
};
inline DstReg dst_reg;
struct LReg {
    template <class T> vFloat operator[](const T&) const { return {}; }
};
inline LReg l_reg;
inline vFloat vConst0, vConst1, vConstNeg1, vConst0p8373, vConst0p6928, vConstLn2, vConst1Ln2, vConstTileId;
inline vFloat vConstFloatPrgm0, vConstFloatPrgm1, vConstFloatPrgm2;
inline vInt vConstIntPrgm0, vConstIntPrgm1, vConstIntPrgm2;

// Instruction modifiers: their values matter only to the real compiler.
constexpr int SFPABS_MOD1_INT = 0, SFPCAST_MOD1_INT32_TO_FP32_RNE = 0, SFPCAST_MOD1_SM32_TO_FP32_RNE = 0,
              SFPENCC_IMM12_BOTH = 0, SFPENCC_MOD1_EI_RI = 0, SFPENCC_MOD1_EU_R1 = 0,
              SFPEXEXP_MOD1_SET_CC_COMP_EXP = 0, SFPEXEXP_MOD1_SET_CC_SGN_EXP = 0, SFPEXMAN_MOD1_PAD9 = 0,
              SFPIADD_MOD1_ARG_2SCOMP_LREG_DST = 0, SFPIADD_MOD1_ARG_IMM = 0, SFPIADD_MOD1_CC_GTE0 = 0,
              SFPIADD_MOD1_CC_LT0 = 0, SFPIADD_MOD1_CC_NONE = 0, SFPLOADI_MOD0_FLOATA = 0, SFPLOADI_MOD0_FLOATB = 0,
              SFPLOADI_MOD0_LOWER = 0, SFPLOADI_MOD0_SHORT = 0, SFPLOADI_MOD0_UPPER = 0, SFPLOADI_MOD0_USHORT = 0,
              SFPLOAD_MOD0_FMT_SRCB = 0, SFPMAD_MOD1_OFFSET_NONE = 0, SFPSETCC_MOD1_LREG_EQ0 = 0,
              SFPSETCC_MOD1_LREG_GTE0 = 0, SFPSETCC_MOD1_LREG_LT0 = 0, SFPSETCC_MOD1_LREG_NE0 = 0,
              SFPSHFT2_MOD1_SHFT_IMM = 0, SFPSHFT2_MOD1_SHFT_LREG = 0, SFPSHFT2_MOD1_SUBVEC_SHFLROR1 = 0,
              SFPSTOCHRND_MOD1_FP32_TO_FP16B = 0, SFPSTOCHRND_MOD1_FP32_TO_INT16 = 0, SFPSTOCHRND_MOD1_FP32_TO_INT8 = 0,
              SFPSTOCHRND_MOD1_FP32_TO_UINT16 = 0, SFPSTOCHRND_MOD1_FP32_TO_UINT8 = 0, SFPSTOCHRND_RND_EVEN = 0,
              SFPSTORE_MOD0_FMT_SRCB = 0, SFPSWAP_MOD1_SWAP = 0, SFPSWAP_MOD1_VEC_MIN_MAX = 0, SFP_DESTREG_STRIDE = 2;

// Intrinsics: any arguments; a vector result (or the type asked for).
#define TTP_SFPI_INTRINSIC(name) \
    template <class... A> constexpr vFloat name(const A&...) { return {}; }
TTP_SFPI_INTRINSIC(abs)
TTP_SFPI_INTRINSIC(addexp)
TTP_SFPI_INTRINSIC(approx_recip)
TTP_SFPI_INTRINSIC(clamp)
TTP_SFPI_INTRINSIC(copyman)
TTP_SFPI_INTRINSIC(copysgn)
TTP_SFPI_INTRINSIC(exexp)
TTP_SFPI_INTRINSIC(exexp_nodebias)
TTP_SFPI_INTRINSIC(exman)
TTP_SFPI_INTRINSIC(exman8)
TTP_SFPI_INTRINSIC(exman9)
TTP_SFPI_INTRINSIC(float_to_fp16a)
TTP_SFPI_INTRINSIC(float_to_fp16b)
TTP_SFPI_INTRINSIC(float_to_int16)
TTP_SFPI_INTRINSIC(float_to_uint16)
TTP_SFPI_INTRINSIC(float_to_int8)
TTP_SFPI_INTRINSIC(float_to_uint8)
TTP_SFPI_INTRINSIC(int32_to_float)
TTP_SFPI_INTRINSIC(lut)
TTP_SFPI_INTRINSIC(lut2)
TTP_SFPI_INTRINSIC(lut2_sign)
TTP_SFPI_INTRINSIC(lut_sign)
TTP_SFPI_INTRINSIC(lz)
TTP_SFPI_INTRINSIC(nearby)
TTP_SFPI_INTRINSIC(reduce)
TTP_SFPI_INTRINSIC(setexp)
TTP_SFPI_INTRINSIC(setman)
TTP_SFPI_INTRINSIC(setsgn)
TTP_SFPI_INTRINSIC(setsgn2)
TTP_SFPI_INTRINSIC(shft)
TTP_SFPI_INTRINSIC(symmetric_clamp)
TTP_SFPI_INTRINSIC(is_finite)
TTP_SFPI_INTRINSIC(is_inf)
TTP_SFPI_INTRINSIC(is_nan)
TTP_SFPI_INTRINSIC(is_neg)
TTP_SFPI_INTRINSIC(is_pos)
template <class A, class B> constexpr A min(const A& a, const B&) { return a; }
template <class A, class B> constexpr A max(const A& a, const B&) { return a; }
template <class... A> constexpr void min_max(A&...) {}
template <class... A> constexpr void vec_min_max(A&...) {}
template <class... A> constexpr void subvec_transp(A&...) {}
template <class... A> constexpr void subvec_shflror1(A&...) {}
struct lreg_pressure {};
template <class T, class... A> constexpr T as(const A&...) { return T{}; }
template <class T, class... A> constexpr T reinterpret(const A&...) { return T{}; }
template <class T, class... A> constexpr T convert(const A&...) { return T{}; }

struct ConditionBlock {
    template <class T> void cc_if(const T&) {}
    template <class T> void cc_elseif(const T&) {}
    void cc_else() {}
    template <class T> void cc_and(const T&) {}
};

}  // namespace sfpi

template <class... A> constexpr sfpi::vFloat __builtin_rvtt_sfpmad(const A&...) { return {}; }
template <class... A> constexpr sfpi::vFloat __builtin_rvtt_sfpgt(const A&...) { return {}; }

#define v_if(x) { ::sfpi::ConditionBlock ttp_cc_; ttp_cc_.cc_if(x);
#define v_elseif(x) ttp_cc_.cc_elseif(x);
#define v_else ttp_cc_.cc_else();
#define v_endif }
#define v_block { ::sfpi::ConditionBlock ttp_cc_;
#define v_endblock }
#define v_and(x) ttp_cc_.cc_and(x)
