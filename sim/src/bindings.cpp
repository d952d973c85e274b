// Python bindings of the simulator (module ttprefill._sim), with pybind11: it ships with the
// build tools here, handles numpy buffers and exceptions directly, and needs no extra build step.
#include <chrono>
#include <cstring>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "device.h"
#include "numerics.h"
#include "timing.h"

namespace py = pybind11;
using namespace ttsim;

namespace {

CoreXY core_of(const py::handle& h) {
    auto t = h.cast<py::tuple>();
    return {t[0].cast<int>(), t[1].cast<int>()};
}

ProgramSpec program_from_dict(const py::dict& d) {
    ProgramSpec p;
    p.name = d["name"].cast<std::string>();
    p.timing_only = d["timing_only"].cast<bool>();
    p.trace = d.contains("trace") && d["trace"].cast<bool>();
    if (d.contains("cost_setting")) p.cost_setting = d["cost_setting"].cast<int>();
    if (d.contains("l1_reserved")) p.l1_reserved = d["l1_reserved"].cast<uint32_t>();
    if (d.contains("watchdog_cycles")) p.watchdog_cycles = d["watchdog_cycles"].cast<uint64_t>();
    if (d.contains("watchdog_seconds")) p.watchdog_seconds = d["watchdog_seconds"].cast<double>();
    if (d.contains("spin_seconds")) p.spin_seconds = d["spin_seconds"].cast<double>();
    for (auto kh : d["kernels"].cast<py::list>()) {
        auto k = kh.cast<py::dict>();
        KernelSpec ks;
        ks.so_path = k["so_path"].cast<std::string>();
        ks.name = k["name"].cast<std::string>();
        ks.role = RoleKind(k["role"].cast<int>());
        ks.noc = k.contains("noc") ? k["noc"].cast<int>() : (ks.role == RoleKind::Riscv1 ? 1 : 0);
        for (auto c : k["cores"].cast<py::list>()) ks.cores.push_back(core_of(c));
        for (auto item : k["runtime_args"].cast<py::dict>()) {
            ks.runtime_args[core_of(item.first)] = item.second.cast<std::vector<uint32_t>>();
        }
        ks.common_args = k["common_args"].cast<std::vector<uint32_t>>();
        ks.fidelity = MathFidelity(k["fidelity"].cast<int>());
        ks.fp32_dest = k["fp32_dest"].cast<bool>();
        ks.approx = k["approx"].cast<bool>();
        if (k.contains("unpack_to_dest_fp32")) ks.unpack_to_dest_fp32 = k["unpack_to_dest_fp32"].cast<uint32_t>();
        p.kernels.push_back(std::move(ks));
    }
    for (auto ch : d["cbs"].cast<py::list>()) {
        auto c = ch.cast<py::dict>();
        CBSpec cb;
        cb.core = core_of(c["core"]);
        cb.index = c["index"].cast<int>();
        cb.format = DataFormat(c["format"].cast<int>());
        cb.page_size = c["page_size"].cast<uint32_t>();
        cb.num_pages = c["num_pages"].cast<uint32_t>();
        cb.l1_offset = c["l1_offset"].cast<uint32_t>();
        p.cbs.push_back(cb);
    }
    for (auto sh : d["semaphores"].cast<py::list>()) {
        auto s = sh.cast<py::dict>();
        p.semaphores.push_back({core_of(s["core"]), s["id"].cast<int>(), s["initial"].cast<uint32_t>()});
    }
    return p;
}

py::dict result_to_dict(const RunResult& r) {
    py::dict out;
    out["cycles"] = r.cycles;
    py::list cores;
    for (const auto& c : r.cores) {
        py::dict cd;
        cd["core"] = py::make_tuple(c.core.x, c.core.y);
        py::list roles;
        for (const auto& rs : c.roles) {
            py::dict rd;
            rd["role"] = role_name(rs.role);
            rd["kernel"] = rs.kernel;
            rd["end_cycle"] = rs.end_cycle;
            rd["busy_cycles"] = rs.busy_cycles;
            rd["stall_cycles"] = rs.stall_cycles;
            roles.append(rd);
        }
        cd["roles"] = roles;
        cores.append(cd);
    }
    out["cores"] = cores;
    py::dict k;
    k["matmul_tiles"] = r.counters.matmul_tiles;
    k["fpu_flops"] = r.counters.fpu_flops;
    k["fpu_busy_cycles"] = r.counters.fpu_busy_cycles;
    k["sfpu_busy_cycles"] = r.counters.sfpu_busy_cycles;
    k["unpack_busy_cycles"] = r.counters.unpack_busy_cycles;
    k["pack_busy_cycles"] = r.counters.pack_busy_cycles;
    k["dram_read_bytes"] = r.counters.dram_read_bytes;
    k["dram_write_bytes"] = r.counters.dram_write_bytes;
    k["noc_bytes"] = r.counters.noc_bytes;
    k["api_calls"] = r.counters.api_calls;
    k["context_switches"] = r.counters.context_switches;
    k["dram_busy_cycles"] = r.counters.dram_busy_cycles;
    out["counters"] = k;
    py::dict zones;
    for (const auto& [name, z] : r.zones) {
        py::dict zd;
        zd["entries"] = z.entries;
        zd["elapsed"] = z.elapsed;
        zd["unpack"] = z.unpack;
        zd["math"] = z.math;
        zd["pack"] = z.pack;
        zd["busy"] = z.busy;
        zones[py::str(name)] = zd;
    }
    out["zones"] = zones;
    py::list trace;
    for (const auto& t : r.trace) trace.append(py::make_tuple(t.core_x, t.core_y, t.role, t.name, t.start, t.end));
    out["trace"] = trace;
    return out;
}

py::array_t<float> as_floats(py::array_t<float, py::array::c_style | py::array::forcecast> a, size_t n, const char* what) {
    if (size_t(a.size()) != n) throw std::invalid_argument(std::string(what) + ": expected " + std::to_string(n) + " values");
    return a;
}

}  // namespace

PYBIND11_MODULE(_sim, m) {
    m.doc() = "ttprefill's Wormhole simulator (C++ core)";
    py::register_exception<SimError>(m, "SimError", PyExc_RuntimeError);

    py::class_<Device>(m, "Device")
        .def(py::init<>())
        // pages / page_stride: the tensor's page count and aligned page size, so that kernel accesses
        // past its last page (into the banks' padding) fail; 0 leaves the whole allocation accessible.
        .def("dram_alloc",
             [](Device& d, uint64_t bytes_per_bank, uint32_t pages, uint32_t page_stride) {
                 return d.dram().allocate(bytes_per_bank, pages, page_stride);
             },
             py::arg("bytes_per_bank"), py::arg("pages") = 0, py::arg("page_stride") = 0)
        .def("dram_free", [](Device& d, uint32_t base) { d.dram().free(base); })
        .def("dram_bytes_in_use", [](Device& d) { return d.dram().bytes_in_use(); })
        .def("dram_write_pages",
             [](Device& d, uint32_t base, uint32_t aligned_page_size, uint32_t first_page,
                py::array_t<uint8_t, py::array::c_style | py::array::forcecast> data, uint32_t page_size) {
                 size_t n = data.size() / page_size;
                 if (n * page_size != size_t(data.size())) throw SimError("data is not a whole number of pages");
                 const uint8_t* src = data.data();
                 for (size_t i = 0; i < n; ++i) {
                     uint32_t page = first_page + uint32_t(i);
                     uint64_t off = uint64_t(base) + uint64_t(page / kDramBanks) * aligned_page_size;
                     std::memcpy(d.dram().at(page % kDramBanks, off, page_size, "upload"), src + i * page_size, page_size);
                 }
             })
        .def("dram_read_pages",
             [](Device& d, uint32_t base, uint32_t aligned_page_size, uint32_t first_page, uint32_t num_pages,
                uint32_t page_size) {
                 py::array_t<uint8_t> out(size_t(num_pages) * page_size);
                 uint8_t* dst = out.mutable_data();
                 for (uint32_t i = 0; i < num_pages; ++i) {
                     uint32_t page = first_page + i;
                     uint64_t off = uint64_t(base) + uint64_t(page / kDramBanks) * aligned_page_size;
                     std::memcpy(dst + size_t(i) * page_size, d.dram().at(page % kDramBanks, off, page_size, "download"), page_size);
                 }
                 return out;
             })
        .def("run", [](Device& d, const py::dict& program) {
            ProgramSpec spec = program_from_dict(program);
            RunResult r;
            {
                py::gil_scoped_release release;
                r = d.run(spec);
            }
            return result_to_dict(r);
        });

    m.def("tile_bytes", [](int fmt) { return tile_bytes(DataFormat(fmt)); });
    m.attr("timing_model_version") = timing::kModelVersion;
    m.def("timing_costs", [](int setting) {
        const timing::Costs& c = timing::costs(timing::CostSetting(setting));
        py::dict d;
        d["init_site"] = c.init_site;
        d["llk_call"] = c.llk_call;
        d["matmul_tile_extra"] = c.matmul_tile_extra;
        d["dram_efficiency"] = c.dram_efficiency;
        d["dram_latency"] = c.dram_latency;
        d["l1_latency"] = c.l1_latency;
        d["unpack_joint_bytes_per_cycle"] = c.unpack_joint_bytes_per_cycle;
        return d;
    });
    m.def("pack_tile", [](int fmt, py::array_t<float, py::array::c_style | py::array::forcecast> values) {
        auto v = as_floats(values, TILE_ELEMS, "pack_tile");
        uint32_t n = tile_bytes(DataFormat(fmt));
        std::string out(n, '\0');
        pack_tile(DataFormat(fmt), v.data(), reinterpret_cast<uint8_t*>(out.data()));
        return py::bytes(out);
    });
    m.def("unpack_tile", [](int fmt, py::bytes data) {
        std::string s = data;
        if (s.size() != tile_bytes(DataFormat(fmt))) throw std::invalid_argument("unpack_tile: wrong number of bytes");
        py::array_t<float> out(TILE_ELEMS);
        unpack_tile(DataFormat(fmt), reinterpret_cast<const uint8_t*>(s.data()), out.mutable_data());
        return out;
    });
    m.def("matmul_tile", [](py::array_t<float, py::array::c_style | py::array::forcecast> a,
                            py::array_t<float, py::array::c_style | py::array::forcecast> b, int fidelity, bool transpose_b) {
        auto av = as_floats(a, TILE_ELEMS, "matmul_tile a");
        auto bv = as_floats(b, TILE_ELEMS, "matmul_tile b");
        py::array_t<float> out({TILE_DIM, TILE_DIM});
        std::fill(out.mutable_data(), out.mutable_data() + TILE_ELEMS, 0.0f);
        matmul_tile_acc(av.data(), bv.data(), out.mutable_data(), MathFidelity(fidelity), transpose_b);
        return out;
    });
    m.def("matmul_tile_rate", [](int fidelity, int count) {
        // Tile matmuls per second of wall time on this machine, for `ttprefill bench sim`.
        std::vector<float> a(TILE_ELEMS, 0.5f), b(TILE_ELEMS, 0.25f), acc(TILE_ELEMS, 0.0f);
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < count; ++i) matmul_tile_acc(a.data(), b.data(), acc.data(), MathFidelity(fidelity), false);
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return count / s;
    });
}
