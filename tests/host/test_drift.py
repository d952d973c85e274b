"""The drift report's pieces on small headers and kernels written here, so each check is seen to fail."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ttprefill import drift
from ttprefill.cxx_decls import find_calls, index_headers

REAL = """
    #pragma once
    #define FORCE_INLINE inline __attribute__((always_inline))
    namespace ckernel {
    template <bool approx = false, bool fp32 = DST_ACCUM_MODE>
    ALWI void exp_tile(uint32_t idst, VectorMode mode = VectorMode::RC) { if (x) { y(); } }
    ALWI void copy_tile(std::uint32_t icb, const uint32_t itile, uint32_t idst);
    }
    template <typename DSpec>
    [[deprecated("use noc_async_read_page")]]
    FORCE_INLINE void noc_async_read_tile(const uint32_t id, const TensorAccessor<DSpec>& a, uint32_t l1, uint32_t offset = 0);
    template <typename DSpec>
    struct TensorAccessor {
        TensorAccessor(const Args& args, uint32_t base) : base_(base), page{0} {}
        uint64_t get_noc_addr(uint32_t id, uint32_t offset = 0) const { return 0; }
    };
    inline void cb_wait_front(int32_t operand, int32_t num_pages) {}
    uint32_t scale_only(uint32_t a, uint32_t b = 1 << 4);
"""
SIM = """
    template <bool approx = false>
    ALWI void exp_tile(uint32_t idst, VectorMode mode = VectorMode::RC) {}
    ALWI void copy_tile(uint32_t icb, uint32_t itile, uint32_t idst) {}
    struct TensorAccessor {
        uint64_t get_noc_addr(uint32_t id, uint32_t offset = 0) const { return 0; }
        uint32_t page_size() const { return 0; }
    };
    void noc_async_read_tile(uint32_t id, const TensorAccessor& a, uint32_t l1) {}
    inline void cb_wait_front(uint32_t operand, int32_t num_pages) {}
    uint32_t scale_only(uint32_t a, uint32_t b = 2);
    inline void sim_only_helper(uint32_t x) {}
    namespace ttsim { inline void internal() {} }
"""


def _write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture()
def indexes(tmp_path):
    _write(tmp_path / "real", "api/x.h", REAL)
    _write(tmp_path / "sim", "api/x.h", SIM)
    return index_headers(tmp_path / "sim", ("api/**/*.h",)), drift.index_real_headers(tmp_path / "real")


def test_declarations_are_read_with_templates_defaults_and_deprecation(indexes):
    _, real = indexes
    (exp,) = real.functions["exp_tile"]
    assert exp.namespace == "ckernel"
    assert [str(t) for t in exp.template] == ["bool approx = false", "bool fp32 = DST_ACCUM_MODE"]
    assert [(p.type, p.name, p.default) for p in exp.params] == [("uint32_t", "idst", None),
                                                                 ("VectorMode", "mode", "VectorMode::RC")]
    (copy,) = real.functions["copy_tile"]
    assert copy.param_types() == ("uint32_t", "uint32_t", "uint32_t")  # std:: and by-value const dropped
    (read,) = real.functions["noc_async_read_tile"]
    assert read.deprecated == "use noc_async_read_page"
    assert read.param_types()[1] == "const TensorAccessor<$T0>&"
    (ctor,) = real.functions["TensorAccessor::TensorAccessor"]
    assert [p.name for p in ctor.params] == ["args", "base"]  # the member-initializer list is not a body
    assert "TensorAccessor::get_noc_addr" in real.functions
    assert real.class_info["TensorAccessor"].is_template
    assert real.functions["scale_only"][0].params[1].default == "1<<4"


def test_api_check_grades_each_difference(indexes):
    sim, real = indexes
    by_name = {f.subject.split("(")[0].split()[-1]: f for f in drift.check_api(sim, real)}
    assert by_name["copy_tile"].status == "ok"
    assert by_name["exp_tile"].status == "warn" and "omits template parameters" in by_name["exp_tile"].detail
    assert by_name["noc_async_read_tile"].status == "warn"  # prefix of the real one, trailing default omitted
    assert by_name["cb_wait_front"].status == "error" and "parameter 1" in by_name["cb_wait_front"].detail
    assert by_name["scale_only"].status == "warn" and "default of parameter 2" in by_name["scale_only"].detail
    assert by_name["sim_only_helper"].status == "error"
    assert by_name["TensorAccessor::page_size"].status == "error"
    assert by_name["TensorAccessor::get_noc_addr"].status == "ok"
    assert "internal" not in by_name  # the simulator's own namespace is not kernel API


def test_calls_in_a_kernel_are_resolved_against_the_real_headers(indexes, tmp_path):
    sim, real = indexes
    kernel = _write(tmp_path / "repo", "kernels/k/reader.cpp", """
        #include "api/x.h"
        #include "helpers.h"
        #define LOCAL_MACRO(x) x
        struct Record { uint64_t get_noc_addr(int a, int b, int c) const { return 0; } };
        void kernel_main() {
            cb_wait_front(0, 1);
            cb_wait_front(0);                 // wrong arity
            noc_async_read_tile(1, acc, 2);   // deprecated
            sim_only_helper(3);               // simulator only
            local_helper(4);                  // defined beside the kernel
            LOCAL_MACRO(5);
            uint64_t a = acc.get_noc_addr(7);
            Record r;
            r.get_noc_addr(1, 2, 3);          // the kernel's own method, not the accessor's
            std::min(1, 2);
            OP_FROM_DEFINES(1);
        }
    """)
    _write(tmp_path / "repo", "kernels/k/helpers.h", "inline void local_helper(int x) {}\n")
    findings = drift.check_calls(sim, real, [kernel], tmp_path / "repo")
    status = {(f.check, f.subject): f.status for f in findings}
    assert status[("calls", "cb_wait_front(2 args)")] == "ok"
    assert status[("calls", "cb_wait_front(1 args)")] == "error"
    assert status[("deprecated", "noc_async_read_tile(3 args)")] == "warn"
    assert status[("calls", "sim_only_helper(1 args)")] == "error"
    assert status[("calls", ".get_noc_addr(1 args)")] == "ok"
    assert ("calls", ".get_noc_addr(3 args)") not in status  # a method of a struct the kernel defines
    assert status[("calls", "OP_FROM_DEFINES(1 args)")] == "info"
    assert not any("local_helper" in s or "LOCAL_MACRO" in s or "min" in s for _, s in status)


def test_find_calls_counts_arguments_and_template_arguments():
    calls = {(c.name, c.member, c.args, c.template_args) for c in find_calls("void f() { a<1, b<2>>(x, g(y, z)); obj.m(); }")}
    assert {("a", False, 2, 2), ("g", False, 2, None), ("m", True, 0, None)} <= calls
    simple = {(c.name, c.args) for c in find_calls("void k() { g(y, z); obj.m(); h(); }")}
    assert {("g", 2), ("m", 0), ("h", 0)} <= simple


def test_syntax_check_passes_a_good_kernel_and_names_the_error_in_a_bad_one(tmp_path):
    from ttprefill.device.ttnn_env import headers_root

    repo = tmp_path / "repo"
    good = _write(repo, "kernels/ok/writer.cpp", """
        #include "api/dataflow/dataflow_api.h"
        void kernel_main() {
            const uint32_t addr = get_arg_val<uint32_t>(0);
            constexpr auto args = TensorAccessorArgs<0>();
            const auto out = TensorAccessor(args, addr, get_tile_size(16));
            cb_wait_front(16, 1);
            noc_async_write_page(0, out, get_read_ptr(16));
            noc_async_write_barrier();
            cb_pop_front(16, 1);
        }
    """)
    bad = _write(repo, "kernels/bad/writer.cpp", """
        #include "api/dataflow/dataflow_api.h"
        void kernel_main() { noc_async_write_tilez(0, 1, 2); }
    """)
    findings = drift.check_syntax(headers_root(), [good, bad], repo)
    by_kernel = {f.subject: f for f in findings}
    assert by_kernel["kernels/ok/writer.cpp"].status == "ok", by_kernel["kernels/ok/writer.cpp"].detail
    assert by_kernel["kernels/bad/writer.cpp"].status == "error"
    assert "noc_async_write_tilez" in by_kernel["kernels/bad/writer.cpp"].detail


def test_drift_command_exits_2_with_a_clear_message_without_headers(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("TTPREFILL_TTNN_HEADERS", str(tmp_path / "nowhere"))
    assert drift.main([]) == 2
    assert "TTPREFILL_TTNN_HEADERS" in capsys.readouterr().err


def test_compute_kernels_compile_for_the_three_triscs_against_the_real_llk(tmp_path):
    """A compute kernel passes for unpack, math and pack with the stand-in SFPI headers; a call the
    pinned API lacks fails, named, on the first thread that compiles it."""
    from ttprefill.compute_syntax import check_compute_kernels
    from ttprefill.device.ttnn_env import package_root

    repo = Path(__file__).resolve().parents[2]
    good = repo / "kernels" / "examples" / "softmax_compute.cpp"
    bad = _write(tmp_path, "bad/compute.cpp", """
        #include "api/compute/compute_kernel_hw_startup.h"
        #include "api/compute/tile_move_copy.h"
        void kernel_main() { copy_tilez(0, 0, 0); }
    """)
    good_result, bad_result = check_compute_kernels(package_root(), [(good, [4], {}), (bad, [], {})])
    assert good_result.ok, good_result.detail
    assert not bad_result.ok and "copy_tilez" in bad_result.detail and bad_result.detail.startswith("unpack thread")


# The shapes the object-API headers use, each of which once hid a class or a signature from the reader.
REAL_OBJECT_API = """
    #pragma once
    #ifdef ARCH_QUASAR
    #define BUF_TEMPLATE_DECL template <int P>
    #define BUF_CLASS Buffer<P>
    #else
    #define BUF_TEMPLATE_DECL
    #define BUF_CLASS Buffer
    #endif
    BUF_TEMPLATE_DECL
    class Buffer {
    public:
    #ifdef ARCH_QUASAR
        void quasar_only();
    #endif
        uint32_t get_total_size_bytes() const;
        void print(uint8_t cb,
    #if defined(COMPILE_FOR_NCRISC)
                   dprint_cb_t cb_type, dprint_ptr_t ptr_type = WR_PTR,
    #elif defined(COMPILE_FOR_BRISC)
                   dprint_cb_t cb_type, dprint_ptr_t ptr_type = RD_PTR,
    #endif
                   bool endl = true);
    private:
        uint32_t helper();
    };
    template <typename T>
    struct traits_t;
    template <>
    struct traits_t<Buffer> {
        static uint32_t addr(const BUF_CLASS& b);
    };
    void quant_init(uint32_t zero_point);
"""
SIM_OBJECT_API = """
    class Buffer {
        uint32_t sim_private_helper();
    public:
        uint32_t get_total_size_bytes() const;
        void print(uint8_t cb,
    #if !defined(COMPILE_FOR_TRISC)
                   dprint_cb_t cb_type, dprint_ptr_t ptr_type = WR_PTR,
    #endif
                   bool endl = true);
    };
    template <>
    struct traits_t<Buffer> {
        static uint32_t addr(const Buffer& b);
    };
    void quant_init(const uint32_t);
    namespace ckernel::detail { inline void reconfig_helper(uint32_t a) {} }
    namespace semaphore_detail { inline void unmodeled(const char* call) {} }
"""


@pytest.fixture()
def object_indexes(tmp_path):
    _write(tmp_path / "real", "api/buf.h", REAL_OBJECT_API)
    _write(tmp_path / "sim", "api/buf.h", SIM_OBJECT_API)
    return index_headers(tmp_path / "sim", ("api/**/*.h",)), drift.index_real_headers(tmp_path / "real")


def test_a_class_declared_through_a_macro_is_read_for_the_wormhole_build(object_indexes):
    _, real = object_indexes
    assert "Buffer" in real.classes and not real.class_info["Buffer"].is_template  # the Quasar branch is not read
    assert "Buffer::get_total_size_bytes" in real.functions
    assert "Buffer::quasar_only" not in real.functions
    (addr,) = real.functions["traits_t::addr"]
    assert addr.param_types() == ("const Buffer&",)  # BUF_CLASS expanded
    (helper,) = real.functions["Buffer::helper"]
    assert helper.access == "private"


def test_only_one_branch_of_an_if_chain_inside_a_parameter_list_is_read(object_indexes):
    _, real = object_indexes
    (print_,) = real.functions["Buffer::print"]
    assert [p.name for p in print_.params] == ["cb", "cb_type", "ptr_type", "endl"]


def test_object_api_findings(object_indexes):
    sim, real = object_indexes
    findings = {f.subject.split("(")[0].split()[-1]: f for f in drift.check_api(sim, real)}
    assert findings["Buffer::get_total_size_bytes"].status == "ok"
    assert findings["Buffer::print"].status == "ok"
    assert findings["traits_t::addr"].status == "ok"
    assert findings["quant_init"].status == "ok"  # `const uint32_t` is an unnamed parameter, not one named uint32_t
    # Private members and detail namespaces are the simulator's own machinery, not kernel API.
    assert not {"Buffer::sim_private_helper", "reconfig_helper", "unmodeled"} & set(findings)
    (quant,) = sim.functions["quant_init"]
    assert (quant.params[0].type, quant.params[0].name) == ("uint32_t", None)


def test_a_call_to_a_callable_parameter_is_not_an_api_call(indexes, tmp_path):
    sim, real = indexes
    _write(tmp_path / "sim", "api/extra.h", "inline uint32_t value(uint32_t a, uint32_t b) { return a; }\n")
    sim = index_headers(tmp_path / "sim", ("api/**/*.h",))
    kernel = _write(tmp_path / "repo", "kernels/k/reader.cpp", """
        template <typename F>
        void fill(uint32_t l1, F value) { for (uint32_t i = 0; i < 4; ++i) store(l1, value(i, 0)); }
        void kernel_main() { fill(0, [](uint32_t i, uint32_t j) { return i + j; }); }
    """)
    findings = drift.check_calls(sim, real, [kernel], tmp_path / "repo")
    assert not any(f.subject.startswith("value(") for f in findings)


def test_an_eager_static_assert_false_is_told_from_other_errors(tmp_path):
    header = _write(tmp_path, "api/mem.h", """
        template <typename T> struct traits {
            template <int N> static void mcast() {
                static_assert(false, "cannot multicast");
            }
            static_assert(sizeof(T) > 0, "real");
        };
    """)
    eager_line = f"{header}:4:27: error: static assertion failed: cannot multicast"
    other_line = f"{header}:6:23: error: static assertion failed: real"
    eager, other = drift.eager_static_assert_false(eager_line + "\n")
    assert eager and not other
    eager, other = drift.eager_static_assert_false(f"{eager_line}\n{other_line}\nk.cpp:3:1: error: 'x' was not declared\n")
    assert len(eager) == 1 and other


def test_kernels_needing_program_generated_headers_are_recognised(tmp_path):
    metal2 = _write(tmp_path, "k/m2.cpp", "void kernel_main() { DataflowBuffer d(dfb::in); uint32_t n = get_arg(args::n); }")
    named = _write(tmp_path, "k/named.cpp", 'void kernel_main() { constexpr uint32_t c = get_named_compile_time_arg_val("cb"); }')
    plain = _write(tmp_path, "k/plain.cpp", "void kernel_main() { noc_async_write_tilez(0, 1, 2); }  // args::n in a comment")
    assert drift.needs_program_headers(metal2) and drift.needs_program_headers(named)
    assert not drift.needs_program_headers(plain)
