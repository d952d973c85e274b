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
