// Program execution: set-up, the fiber scheduler, and the data-movement half of the kernel API.
// The compute half (DST, FPU, SFPU, packer) is in compute.cpp.
#include "scheduler.h"

#include <dlfcn.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <mutex>
#include <sstream>

#include "timing.h"

namespace ttsim {

namespace {
// A fiber may run this many cycles past the slowest runnable fiber before it yields, which keeps
// the order of events close to time order without a context switch per API call.
constexpr uint64_t kQuantumCycles = 2000;

uint32_t noc_x_of(uint64_t a) { return uint32_t((a >> kNocAddrBits) & 0x3f); }
uint32_t noc_y_of(uint64_t a) { return uint32_t((a >> (kNocAddrBits + 6)) & 0x3f); }
uint64_t noc_local_of(uint64_t a) { return a & kNocLocalMask; }
// Where each kernel's runtime args (then its common args) are copied in its core's L1 at the start of a
// run, for get_arg_addr: a region per processor in the firmware area between the semaphores and the
// circular buffers, as tt-metal keeps them in the kernel config buffer there. tt-metal caps a kernel's
// args at 341 words, which each half holds.
constexpr uint32_t kArgsL1Offset = 4096, kArgsL1RegionBytes = 4096;
constexpr size_t kArgsL1Words = kArgsL1RegionBytes / 2 / 4;
uint32_t args_l1_offset(RoleKind role, bool common) {
    return kArgsL1Offset + uint32_t(role) * kArgsL1RegionBytes + (common ? kArgsL1RegionBytes / 2 : 0);
}
uint64_t encode_noc(uint32_t x, uint32_t y, uint64_t local) {
    return (uint64_t(y) << (kNocAddrBits + 6)) | (uint64_t(x) << kNocAddrBits) | (local & kNocLocalMask);
}
bool is_dram_coord(uint32_t x, uint32_t y) { return y == kDramNocY && x >= kDramNocX0 && x < kDramNocX0 + kDramBanks; }
}  // namespace

const char* role_name(RoleKind r) {
    switch (r) {
        case RoleKind::Riscv0: return "riscv_0";
        case RoleKind::Riscv1: return "riscv_1";
        case RoleKind::Compute: return "compute";
    }
    return "?";
}

namespace {
// All cores' L1 in one mapping below 2 GiB: kernels hold L1 addresses in 32-bit integers and
// dereference them, exactly as on the device. The low 2 GiB are scarce, and runs are serialised
// (Device::run), so every device of the process shares this one arena; each run zeroes what it uses.
uint8_t* shared_l1_arena(size_t bytes) {
    static uint8_t* arena = [bytes] {
        void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
        if (p == MAP_FAILED) throw SimError("cannot map simulated L1 below 4 GiB");
        // The gap after each core's L1 faults on access: a raw store past L1's end is caught (guard.cpp).
        for (size_t at = kL1Bytes; at < bytes; at += kL1Stride)
            mprotect(static_cast<uint8_t*>(p) + at, kL1Stride - kL1Bytes, PROT_NONE);
        return static_cast<uint8_t*>(p);
    }();
    return arena;
}
}  // namespace

Scheduler::Scheduler(Dram& dram) : dram_(dram) {
    l1_arena_ = shared_l1_arena(size_t(kL1Stride) * cores_.size());
    for (int y = 0; y < kGridY; ++y) {
        for (int x = 0; x < kGridX; ++x) {
            Core& c = cores_[y * kGridX + x];
            c.xy = {x, y};
            c.l1 = l1_arena_ + size_t(kL1Stride) * (y * kGridX + x);
            c.l1_base = uint32_t(reinterpret_cast<uintptr_t>(c.l1));
        }
    }
}

Scheduler::~Scheduler() {
    for (char* s : stack_pool_) munmap(s - kFiberGuardBytes, kFiberGuardBytes + kFiberStackBytes);
    for (auto& [path, m] : modules_) {
        if (m.handle) dlclose(m.handle);
    }
}

KernelModule* Scheduler::load_module(const std::string& path) {
    auto it = modules_.find(path);
    if (it != modules_.end()) return &it->second;
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) throw SimError("cannot load kernel " + path + ": " + dlerror());
    auto bind = reinterpret_cast<void (*)(KernelApi*)>(dlsym(h, "ttsim_bind"));
    auto entry = reinterpret_cast<void (*)()>(dlsym(h, "ttsim_kernel_entry"));
    if (!bind || !entry) {
        dlclose(h);
        throw SimError("kernel " + path + " was not built by the simulator JIT (no ttsim_bind/ttsim_kernel_entry)");
    }
    KernelModule m{h, bind, entry};
    KernelModule* stored = &(modules_[path] = m);
    record_module_text(*stored);
    return stored;
}

void Scheduler::setup(const ProgramSpec& program) {
    program_ = &program;
    error_.reset();
    counters_ = Counters{};
    fibers_.clear();
    for (auto& d : dram_ledger_) d.reset(timing::kDramChannelPeakBytesPerCycle * costs().dram_efficiency);
    for (auto& p : port_ledger_)
        for (auto& l : p) l.reset(timing::kNocLinkBytesPerCycle);
    for (auto& noc : link_ledger_)
        for (auto& l : noc) l.reset(timing::kNocLinkBytesPerCycle);
    dram_busy_cycles_ = 0;
    trace_.clear();
    zone_totals_.clear();
    for (Core& c : cores_) {
        c.active = false;
        c.cbs = {};
        c.sem_time.clear();
        c.l1_writes = 0;  // a previous run's write times must not delay this run's spinners
        c.l1_write_time = 0;
    }
    for (const CBSpec& cb : program.cbs) {
        if (cb.core.x < 0 || cb.core.x >= kGridX || cb.core.y < 0 || cb.core.y >= kGridY)
            throw SimError("circular buffer on core outside the grid");
        if (cb.index < 0 || cb.index >= kNumCircularBuffers)
            throw SimError("circular buffer index " + std::to_string(cb.index) + " out of range");
        if (cb.num_pages == 0 || cb.page_size == 0) throw SimError("circular buffer with no pages");
        uint64_t end = uint64_t(cb.l1_offset) + uint64_t(cb.page_size) * cb.num_pages;
        if (cb.l1_offset < kSemaphoreBytes || end > kL1Bytes) {
            throw SimError("L1 overflow: circular buffer " + std::to_string(cb.index) + " on core (" +
                           std::to_string(cb.core.x) + "," + std::to_string(cb.core.y) + ") spans [" +
                           std::to_string(cb.l1_offset) + ", " + std::to_string(end) + ") but L1 holds " +
                           std::to_string(kL1Bytes) + " bytes");
        }
        CircularBuffer& c = cores_[cb.core.y * kGridX + cb.core.x].cbs[cb.index];
        c.configured = true;
        c.format = cb.format;
        c.page_size = cb.page_size;
        c.num_pages = cb.num_pages;
        c.l1_offset = cb.l1_offset;
        c.push_time.assign(cb.num_pages, 0);
        c.pop_time.assign(cb.num_pages, 0);
        c.push_by.assign(cb.num_pages, nullptr);
        c.pop_by.assign(cb.num_pages, nullptr);
        c.rewritten_by.assign(cb.num_pages, nullptr);
        c.consumer = nullptr;
        c.push_end.assign(cb.num_pages, 0);
    }
    // Deterministic L1 contents at start: zero what the program uses.
    std::vector<bool> used(cores_.size(), false);
    for (const KernelSpec& k : program.kernels)
        for (const CoreXY& c : k.cores) used[c.y * kGridX + c.x] = true;
    for (size_t i = 0; i < cores_.size(); ++i) {
        if (used[i]) {
            std::memset(cores_[i].l1, 0, kL1Bytes);
            cores_[i].active = true;
        }
    }
    for (const SemaphoreSpec& s : program.semaphores) {
        if (s.id < 0 || s.id >= kMaxSemaphores) throw SimError("semaphore id out of range (0..15)");
        Core& c = cores_[s.core.y * kGridX + s.core.x];
        std::memcpy(c.l1 + s.id * kSemaphoreStride, &s.initial, 4);
    }
    int id = 0;
    for (const KernelSpec& k : program.kernels) {
        KernelModule* m = load_module(k.so_path);
        // dlopen shares one copy of a kernel .so between all devices of the process, so its API
        // pointer must name this scheduler for this run (Device::run serialises runs).
        m->bind(this);
        for (const CoreXY& xy : k.cores) {
            auto f = std::make_unique<Fiber>();
            f->id = id++;
            f->core = &cores_[xy.y * kGridX + xy.x];
            f->spec = &k;
            f->module = m;
            auto a = k.runtime_args.find(xy);
            static const std::vector<uint32_t> kNoArgs;
            f->args = a == k.runtime_args.end() ? &kNoArgs : &a->second;
            // A copy of the kernel's args in its core's L1, for get_arg_addr (see kArgsL1Offset).
            for (const CircularBuffer& cb : f->core->cbs) {
                if (cb.configured && cb.l1_offset < kArgsL1Offset + 3 * kArgsL1RegionBytes) {
                    throw SimError("circular buffer at L1 offset " + std::to_string(cb.l1_offset) +
                                   " overlaps the kernels' runtime args, which the simulator keeps at [" +
                                   std::to_string(kArgsL1Offset) + ", " +
                                   std::to_string(kArgsL1Offset + 3 * kArgsL1RegionBytes) + ")");
                }
            }
            uint8_t* args_l1 = f->core->l1 + args_l1_offset(k.role, false);
            std::memcpy(args_l1, f->args->data(), 4 * std::min<size_t>(f->args->size(), kArgsL1Words));
            std::memcpy(args_l1 + (args_l1_offset(k.role, true) - args_l1_offset(k.role, false)), k.common_args.data(),
                        4 * std::min<size_t>(k.common_args.size(), kArgsL1Words));
            if (k.role == RoleKind::Compute) f->compute = std::make_unique<ComputeState>();
            if (stack_pool_.size() < size_t(id)) {
                void* s = mmap(nullptr, kFiberGuardBytes + kFiberStackBytes, PROT_NONE,
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
                if (s == MAP_FAILED) throw SimError("cannot allocate a fiber stack");
                char* stack = static_cast<char*>(s) + kFiberGuardBytes;  // the guard stays below it
                if (mprotect(stack, kFiberStackBytes, PROT_READ | PROT_WRITE) != 0) throw SimError("cannot allocate a fiber stack");
                stack_pool_.push_back(stack);
            }
            f->stack = stack_pool_[id - 1];
            getcontext(&f->ctx);
            f->ctx.uc_stack.ss_sp = f->stack;
            f->ctx.uc_stack.ss_size = kFiberStackBytes;
            f->ctx.uc_link = &main_ctx_;
            uintptr_t self = reinterpret_cast<uintptr_t>(this);
            makecontext(&f->ctx, reinterpret_cast<void (*)()>(&Scheduler::fiber_trampoline), 2,
                        unsigned(self & 0xffffffffu), unsigned(self >> 32));
            fibers_.push_back(std::move(f));
        }
    }
}

void Scheduler::fiber_trampoline(unsigned lo, unsigned hi) {
    auto* self = reinterpret_cast<Scheduler*>((uintptr_t(hi) << 32) | lo);
    Fiber& f = *self->current_;
    try {
        f.module->entry();
        self->deliver_reads(f);  // reads a kernel never waited for still land
        if (f.compute && f.compute->dst_state != ComputeState::Dst::Free) {
            self->fail("kernel_main", "returned while still holding the DST registers (missing tile_regs_release)");
        }
        f.state = FiberState::Done;
        ++self->progress_;
    } catch (const std::exception& e) {
        self->fail(f.call, e.what());
    }
    // returning resumes main_ctx_ through uc_link
}

RunResult Scheduler::run(const ProgramSpec& program) {
    setup(program);
    {
        // The fault guards are armed only while kernels run (guard.cpp), and disarmed however the run ends.
        struct Armed {
            Scheduler* s;
            ~Armed() { s->disarm_guards(); }
        } armed{this};
        arm_guards();
        schedule();
    }
    check_cb_balance();
    RunResult r;
    counters_.dram_busy_cycles = dram_busy_cycles_;
    r.counters = counters_;
    r.zones = zone_totals_;
    for (const TraceEvent& e : trace_) r.trace.push_back({e.core_x, e.core_y, e.role, e.name, e.start, e.end});
    std::map<CoreXY, CoreStats> per_core;
    for (auto& f : fibers_) {
        CoreStats& cs = per_core[f->core->xy];
        cs.core = f->core->xy;
        RoleStats rs;
        rs.role = f->spec->role;
        rs.kernel = f->spec->name;
        rs.end_cycle = f->clock;
        rs.busy_cycles = f->busy;
        rs.stall_cycles = f->stall;
        cs.roles.push_back(rs);
        r.cycles = std::max(r.cycles, f->clock);
    }
    for (auto& [xy, cs] : per_core) r.cores.push_back(cs);
    fibers_.clear();
    program_ = nullptr;
    return r;
}

void Scheduler::schedule() {
    for (;;) {
        // Wake every blocked fiber whose event has happened; it resumes no earlier than the event.
        for (auto& f : fibers_) {
            if (f->state != FiberState::Blocked) continue;
            if (auto t = f->blocker()) {
                f->state = FiberState::Ready;
            }
        }
        // A fiber spinning on L1 runs again once its core's L1 was written, no earlier than that write.
        for (auto& f : fibers_) {
            if (f->state != FiberState::Spinning || f->core->l1_writes == f->spin_l1_writes) continue;
            f->state = FiberState::Ready;
            f->retrying = false;
            f->clock = std::max(f->clock, f->core->l1_write_time);
        }
        Fiber* next = nullptr;
        uint64_t second = std::numeric_limits<uint64_t>::max();
        for (auto& f : fibers_) {
            if (f->state != FiberState::Ready) continue;
            if (!next || f->clock < next->clock) {
                if (next) second = std::min(second, next->clock);
                next = f.get();
            } else {
                second = std::min(second, f->clock);
            }
        }
        if (!next) {
            // Nothing else can run: fibers spinning since before the last step get one more look at L1
            // (a kernel on their core may have set their word with a plain store); spinning with no step
            // since is a hang.
            for (auto& f : fibers_) {
                if (f->state != FiberState::Spinning || f->spin_mark == steps_) continue;
                f->state = FiberState::Ready;
                f->retrying = true;
                if (!next || f->clock < next->clock) next = f.get();
            }
        }
        if (!next) {
            if (std::any_of(fibers_.begin(), fibers_.end(), [](const auto& f) { return f->state == FiberState::Spinning; })) {
                std::string who;
                for (auto& f : fibers_) {
                    if (f->state != FiberState::Spinning) continue;
                    who += std::string(who.empty() ? "" : ", ") + "core (" + std::to_string(f->core->xy.x) + "," +
                           std::to_string(f->core->xy.y) + ") " + role_name(f->spec->role) + " kernel " + f->spec->name;
                }
                std::string msg = "hang in " + program_->name + ": " + who +
                                  " loops without API calls and nothing else can run\n" + state_report();
                fibers_.clear();
                throw SimError(msg);
            }
            bool all_done = std::all_of(fibers_.begin(), fibers_.end(),
                                        [](const auto& f) { return f->state == FiberState::Done; });
            if (all_done) return;
            throw SimError(deadlock_report());
        }
        horizon_ = second;
        current_ = next;
        ++counters_.context_switches;
        if (!next->retrying) ++steps_;
        next->retrying = false;
        swapcontext(&main_ctx_, &next->ctx);
        if (fault_caught_) {
            fault_caught_ = false;
            std::ostringstream os;
            os << "core (" << next->core->xy.x << "," << next->core->xy.y << ") " << role_name(next->spec->role)
               << " kernel " << next->spec->name << ": " << fault_message(fault_);
            error_ = os.str();
        }
        current_ = nullptr;
        if (watchdog_fired_ && !error_) {
            error_ = "watchdog: " + program_->name + " made no CB, NoC or semaphore progress for " +
                     std::to_string(program_->watchdog_seconds) + " s of simulator time\n" + state_report();
        }
        if (error_) {
            std::string msg = *error_;
            error_.reset();
            fibers_.clear();
            throw SimError(msg);
        }
    }
}

std::string Scheduler::deadlock_report() const {
    std::ostringstream os;
    os << "deadlock in " << program_->name << ": no fiber can make progress\n";
    std::vector<const Core*> involved;
    for (const auto& f : fibers_) {
        if (f->state != FiberState::Blocked) continue;
        os << "  core (" << f->core->xy.x << "," << f->core->xy.y << ") " << role_name(f->spec->role) << " "
           << f->spec->name << " at cycle " << f->clock << ": blocked in " << f->wait_desc << "\n";
        if (std::find(involved.begin(), involved.end(), f->core) == involved.end()) involved.push_back(f->core);
    }
    os << "circular buffers on those cores (pages filled / capacity, pushed, popped):\n";
    for (const Core* c : involved) {
        os << "  core (" << c->xy.x << "," << c->xy.y << "):";
        for (int i = 0; i < kNumCircularBuffers; ++i) {
            const CircularBuffer& cb = c->cbs[i];
            if (!cb.configured) continue;
            os << " cb" << i << "=" << cb.fill() << "/" << cb.num_pages << " (pushed " << cb.pushed << ", popped "
               << cb.popped << ")";
        }
        os << "\n";
    }
    return os.str();
}

void Scheduler::raise(const std::string& message) {
    Fiber& f = me();
    std::ostringstream os;
    os << "core (" << f.core->xy.x << "," << f.core->xy.y << ") " << role_name(f.spec->role) << " kernel "
       << f.spec->name << ": " << message;
    error_ = os.str();
    f.state = FiberState::Failed;
    swapcontext(&f.ctx, &main_ctx_);
    // never resumed
    std::abort();
}

void Scheduler::fail(const char* call, const char* message) { raise(std::string(call) + ": " + message); }

uint64_t Scheduler::block_until(std::function<std::optional<uint64_t>()> ready, std::string desc) {
    Fiber& f = me();
    for (;;) {
        if (auto t = ready()) {
            f.blocker = nullptr;
            if (*t > f.clock && program_->trace) trace_span(f.clock, *t, desc);
            return *t;
        }
        f.state = FiberState::Blocked;
        f.blocker = ready;
        f.wait_desc = desc;
        swapcontext(&f.ctx, &main_ctx_);
    }
}

void Scheduler::advance(uint64_t cycles) {
    Fiber& f = me();
    f.clock += cycles;
    f.busy += cycles;
    // The watchdog: no CB, NoC or semaphore traffic anywhere for watchdog_cycles of this fiber's time,
    // or for watchdog_seconds of CPU time (guard.cpp's tick sets watchdog_fired_).
    if (f.clock > last_progress_cycle_ + program_->watchdog_cycles || watchdog_fired_) {
        raise("watchdog: no CB, NoC or semaphore progress anywhere for " +
              (watchdog_fired_ ? std::to_string(program_->watchdog_seconds) + " s of simulator time"
                               : std::to_string(program_->watchdog_cycles) + " modeled cycles") +
              " (last API call " + f.call + ")\n" + state_report());
    }
    yield_if_ahead();
}

void Scheduler::yield_if_ahead() {
    Fiber& f = me();
    if (f.clock > horizon_ && f.clock - horizon_ > kQuantumCycles) {
        f.state = FiberState::Ready;
        swapcontext(&f.ctx, &main_ctx_);
    }
}

// ---------------------------------------------------------------- arguments

uint32_t Scheduler::arg(int index) {
    Fiber& f = me();
    ++counters_.api_calls;
    if (index < 0 || size_t(index) >= f.args->size()) {
        raise("get_arg_val(" + std::to_string(index) + "): runtime arg index past the " +
              std::to_string(f.args->size()) + " set for this core");
    }
    return (*f.args)[index];
}

uint32_t Scheduler::common_arg(int index) {
    Fiber& f = me();
    ++counters_.api_calls;
    if (index < 0 || size_t(index) >= f.spec->common_args.size()) {
        raise("get_common_arg_val(" + std::to_string(index) + "): common runtime arg index past the " +
              std::to_string(f.spec->common_args.size()) + " set");
    }
    return f.spec->common_args[index];
}

uint32_t Scheduler::arg_address(int index, bool common) {
    Fiber& f = me();
    const size_t n = common ? f.spec->common_args.size() : f.args->size();
    const char* what = common ? "get_common_arg_addr" : "get_arg_addr";
    if (index < 0 || size_t(index) >= n) {
        raise(std::string(what) + "(" + std::to_string(index) + "): index past the " + std::to_string(n) +
              (common ? " common runtime args set" : " runtime args set for this core"));
    }
    if (size_t(index) >= kArgsL1Words) raise(std::string(what) + ": more args than the L1 copy holds");
    return f.core->l1_base + args_l1_offset(f.spec->role, common) + 4 * uint32_t(index);
}

// ---------------------------------------------------------------- circular buffers

CircularBuffer& Scheduler::cb_of(int cb, const char* what) {
    if (cb < 0 || cb >= kNumCircularBuffers) {
        raise(std::string(what) + ": circular buffer index " + std::to_string(cb) + " out of range 0..31");
    }
    CircularBuffer& c = me().core->cbs[cb];
    if (!c.configured) {
        raise(std::string(what) + ": circular buffer " + std::to_string(cb) + " is not configured on this core");
    }
    return c;
}

void Scheduler::cb_reserve_back(int cb, int pages) {
    CircularBuffer& c = cb_of(cb, "cb_reserve_back");
    ++counters_.api_calls;
    if (pages <= 0 || uint32_t(pages) > c.num_pages) {
        raise("cb_reserve_back(" + std::to_string(cb) + ", " + std::to_string(pages) + "): the CB holds " +
              std::to_string(c.num_pages) + " pages");
    }
    // A compute kernel's block may cross the CB's end: the packer and unpacker address its tiles from the
    // block's first page on, into the L1 that follows (the next CB's pages), and the pointers wrap once
    // past the limit, as on the device with LLK asserts off (tt-metal's chunk_gated_delta_rule relies on
    // it). A data-movement push does not wrap past the limit on the device, so there it stays an error.
    if (c.write_slot() + uint32_t(pages) > c.num_pages && !me().compute) {
        raise("cb_reserve_back(" + std::to_string(cb) + ", " + std::to_string(pages) + "): the block would run past the end of the " +
              std::to_string(c.num_pages) + "-page CB at slot " + std::to_string(c.write_slot()) +
              "; make the CB's page count a multiple of the block size");
    }
    uint64_t t = block_until(
        [&c, pages]() -> std::optional<uint64_t> {
            if (c.num_pages - c.fill() < uint64_t(pages)) return std::nullopt;
            uint64_t last = c.pushed + pages - 1;  // the newest page we need room for
            if (last < c.num_pages) return 0;      // that slot was never used
            return c.pop_time[last % c.num_pages];
        },
        "cb_reserve_back(cb " + std::to_string(cb) + ", " + std::to_string(pages) + " pages)");
    Fiber& f = me();
    ComputeState* cs = f.compute.get();
    uint64_t& clk = cs ? cs->t_pack : f.clock;
    if (t > clk) {
        f.stall += t - clk;
        clk = t;
    }
    if (cs) f.clock = std::max({cs->t_unpack, cs->t_math, cs->t_pack});
    c.reserved = std::max<uint32_t>(c.reserved, pages);
    c.open_reservation = uint32_t(pages);
    c.producer = f.spec;
    advance(timing::kApiCallCycles);
}

void Scheduler::cb_push_back(int cb, int pages) {
    CircularBuffer& c = cb_of(cb, "cb_push_back");
    ++counters_.api_calls;
    if (pages <= 0 || c.fill() + pages > c.num_pages) {
        raise("cb_push_back(" + std::to_string(cb) + ", " + std::to_string(pages) + "): pushing more pages than the CB has room for (" +
              std::to_string(c.fill()) + " of " + std::to_string(c.num_pages) + " filled)");
    }
    Fiber& f = me();
    // The pages must not be still arriving: a read into them needs its barrier before the push
    // (on the device the consumer could see them half-written).
    if (!f.pending_reads.empty()) {
        const uint64_t lo = c.l1_offset + uint64_t(c.write_slot()) * c.page_size;
        const uint64_t hi = std::min<uint64_t>(lo + uint64_t(pages) * c.page_size, c.l1_offset + uint64_t(c.num_pages) * c.page_size);
        for (const auto& [a, b] : f.pending_reads) {
            if (a < hi && b > lo) {
                raise("cb_push_back(" + std::to_string(cb) + ", " + std::to_string(pages) + "): a noc_async_read into the pushed pages (L1 offset " +
                      std::to_string(a) + ", " + std::to_string(b - a) + " bytes) has not completed: call noc_async_read_barrier before cb_push_back");
            }
        }
    }
    c.producer = f.spec;
    c.open_reservation = 0;
    note_progress();
    note_l1_write(*f.core, f.clock);
    uint64_t now = f.compute ? f.compute->t_pack : f.clock;
    for (int i = 0; i < pages; ++i) {
        c.push_by[(c.pushed + i) % c.num_pages] = f.spec;
        c.rewritten_by[(c.pushed + i) % c.num_pages] = nullptr;
        c.push_time[(c.pushed + i) % c.num_pages] = now;
        c.push_end[(c.pushed + i) % c.num_pages] = c.pushed + pages;
    }
    c.pushed += pages;
    c.reserved = c.reserved > uint32_t(pages) ? c.reserved - pages : 0;
    c.pack_cursor = 0;
    advance(timing::kApiCallCycles);
}

void Scheduler::cb_wait_front(int cb, int pages) {
    CircularBuffer& c = cb_of(cb, "cb_wait_front");
    ++counters_.api_calls;
    if (pages <= 0 || uint32_t(pages) > c.num_pages) {
        raise("cb_wait_front(" + std::to_string(cb) + ", " + std::to_string(pages) + "): the CB holds " +
              std::to_string(c.num_pages) + " pages, so this wait can never be satisfied");
    }
    uint64_t t = block_until(
        [&c, pages]() -> std::optional<uint64_t> {
            if (c.fill() < uint64_t(pages)) return std::nullopt;
            return c.push_time[(c.popped + pages - 1) % c.num_pages];
        },
        "cb_wait_front(cb " + std::to_string(cb) + ", " + std::to_string(pages) + " pages)");
    check_rewritten_pages(c, cb, pages, "cb_wait_front");
    c.consumer = me().spec;
    c.waited = std::max({c.waited, c.popped + uint64_t(pages), c.push_end[(c.popped + pages - 1) % c.num_pages]});
    Fiber& f = me();
    ComputeState* cs = f.compute.get();
    uint64_t& clk = cs ? cs->t_unpack : f.clock;
    if (t > clk) {
        f.stall += t - clk;
        clk = t;
    }
    if (cs) f.clock = std::max({cs->t_unpack, cs->t_math, cs->t_pack});
    advance(timing::kApiCallCycles);
}

void Scheduler::cb_pop_front(int cb, int pages) {
    CircularBuffer& c = cb_of(cb, "cb_pop_front");
    ++counters_.api_calls;
    if (pages <= 0 || c.fill() < uint64_t(pages)) {
        raise("cb_pop_front(" + std::to_string(cb) + ", " + std::to_string(pages) + "): only " +
              std::to_string(c.fill()) + " pages are in the CB");
    }
    // The pages popped must be ones a cb_wait_front covered: otherwise the producer may not have pushed
    // them yet on the device, and the pop would hand it pages the consumer never read.
    // Pages this kernel pushed itself are exempt: its own program order puts the push before the pop.
    bool own_pushes = true;
    for (uint64_t p = std::max(c.popped, c.waited); p < c.popped + uint64_t(pages); ++p) {
        own_pushes = own_pushes && c.push_by[p % c.num_pages] == me().spec;
    }
    if (c.popped + uint64_t(pages) > c.waited && !own_pushes) {
        raise("cb_pop_front(" + std::to_string(cb) + ", " + std::to_string(pages) + "): pops " + std::to_string(pages) +
              " pages but cb_wait_front covered only " + std::to_string(c.waited > c.popped ? c.waited - c.popped : 0) +
              " of them; wait for at least as many pages as you pop");
    }
    Fiber& f = me();
    // A NoC write still reading from these pages needs its barrier first, or the producer overwrites them.
    if (!f.pending_writes.empty()) {
        const uint64_t lo = c.l1_offset + uint64_t(c.read_slot()) * c.page_size;
        const uint64_t hi = std::min<uint64_t>(lo + uint64_t(pages) * c.page_size, c.l1_offset + uint64_t(c.num_pages) * c.page_size);
        for (const auto& [a, b] : f.pending_writes) {
            if (a < hi && b > lo) {
                raise("cb_pop_front(" + std::to_string(cb) + ", " + std::to_string(pages) + "): a noc_async_write from the popped pages (L1 offset " +
                      std::to_string(a) + ", " + std::to_string(b - a) + " bytes) has not completed: call noc_async_write_barrier (or noc_async_writes_flushed) before cb_pop_front");
            }
        }
    }
    note_progress();
    note_l1_write(*f.core, f.clock);
    // Math must be done with the pages before the unpacker frees them.
    uint64_t now = f.compute ? std::max(f.compute->t_unpack, f.compute->t_math) : f.clock;
    check_rewritten_pages(c, cb, pages, "cb_pop_front");
    for (int i = 0; i < pages; ++i) {
        c.pop_time[(c.popped + i) % c.num_pages] = now;
        c.pop_by[(c.popped + i) % c.num_pages] = f.spec;
    }
    c.consumer = f.spec;
    c.popped += pages;
    advance(timing::kApiCallCycles);
}

// A page the producer's packer rewrote in place after pushing it is its own intermediate; another
// kernel reading it would see the old or the new contents depending on timing, so that is a fault.
void Scheduler::check_rewritten_pages(const CircularBuffer& c, int cb, int pages, const char* what) {
    for (uint64_t p = c.popped; p < c.popped + uint64_t(pages) && p < c.pushed; ++p) {
        const KernelSpec* writer = c.rewritten_by[p % c.num_pages];
        if (writer && writer != me().spec) {
            raise(std::string(what) + "(" + std::to_string(cb) + ", " + std::to_string(pages) + "): page " + std::to_string(p) +
                  " was rewritten in place by " + role_name(writer->role) + " kernel " + writer->name +
                  "'s packer after that kernel pushed it, so this kernel may read it before or after the rewrite on the "
                  "device; the producer should pack into a page it reserves (cb_reserve_back) and push that");
        }
    }
}

bool Scheduler::cb_pages_reservable(int cb, int pages) {
    CircularBuffer& c = cb_of(cb, "cb_pages_reservable_at_back");
    return c.num_pages - c.fill() >= uint64_t(pages);
}

bool Scheduler::cb_pages_available(int cb, int pages) {
    CircularBuffer& c = cb_of(cb, "cb_pages_available_at_front");
    if (c.fill() < uint64_t(pages)) return false;
    // A yes is as good as a wait.
    if (pages > 0) check_rewritten_pages(c, cb, pages, "cb_pages_available_at_front"), c.consumer = me().spec;
    if (pages > 0)
        c.waited = std::max({c.waited, c.popped + uint64_t(pages), c.push_end[(c.popped + pages - 1) % c.num_pages]});
    return true;
}

uint32_t Scheduler::cb_write_ptr(int cb) {
    CircularBuffer& c = cb_of(cb, "get_write_ptr");
    return me().core->l1_base + c.l1_offset + c.write_slot() * c.page_size;
}

uint32_t Scheduler::cb_read_ptr(int cb) {
    CircularBuffer& c = cb_of(cb, "get_read_ptr");
    return me().core->l1_base + c.l1_offset + c.read_slot() * c.page_size;
}

uint32_t Scheduler::cb_page_size(int cb) { return cb_of(cb, "get_tile_size").page_size; }
uint32_t Scheduler::cb_fifo(int cb, CbFifo field) {
    CircularBuffer& c = cb_of(cb, "get_local_cb_interface");
    switch (field) {
        case CbFifo::Base: return me().core->l1_base + c.l1_offset;
        case CbFifo::NumPages: return c.num_pages;
        case CbFifo::PagesPushed: return uint32_t(c.pushed);
        case CbFifo::PagesPopped: return uint32_t(c.popped);
    }
    raise("get_local_cb_interface: unknown field");
}
uint32_t Scheduler::cb_data_format(int cb) { return uint32_t(cb_of(cb, "get_dataformat").format); }

// ---------------------------------------------------------------- identity and addresses

uint32_t Scheduler::my_noc_x() { return me().core->xy.x; }
uint32_t Scheduler::my_noc_y() { return me().core->xy.y; }
uint32_t Scheduler::my_logical_x() { return me().core->xy.x; }
uint32_t Scheduler::my_logical_y() { return me().core->xy.y; }

uint64_t Scheduler::dram_page_noc_addr(uint32_t bank_base, uint32_t page_id, uint32_t page_size, uint32_t offset) {
    uint32_t bank = page_id % kDramBanks;
    uint64_t local = uint64_t(bank_base) + uint64_t(page_id / kDramBanks) * page_size + offset;
    return encode_noc(kDramNocX0 + bank, kDramNocY, local);
}

uint32_t Scheduler::l1_offset_of(uint32_t local_addr, uint32_t size, const char* what) {
    Core& c = *me().core;
    if (local_addr < c.l1_base || uint64_t(local_addr) + size > uint64_t(c.l1_base) + kL1Bytes) {
        raise(std::string(what) + ": L1 address " + std::to_string(local_addr) + " (+" + std::to_string(size) +
              " bytes) is outside this core's L1 [" + std::to_string(c.l1_base) + ", " +
              std::to_string(uint64_t(c.l1_base) + kL1Bytes) + ")");
    }
    return local_addr - c.l1_base;
}

// On the device an L1 address means the same offset in every core's L1. The simulator gives each core
// its own range of host addresses, so an address a kernel got from another core (a CB pointer sent over
// as a message) is mapped back to its offset through the core whose range holds it.
uint32_t Scheduler::l1_offset_on_any_core(uint32_t local_addr, const char* what) {
    const uint32_t first = cores_[0].l1_base;
    if (local_addr >= first) {
        const uint64_t rel = uint64_t(local_addr) - first;
        if (rel / kL1Stride < uint64_t(kGridX * kGridY) && rel % kL1Stride < kL1Bytes) return uint32_t(rel % kL1Stride);
    }
    return l1_offset_of(local_addr, 0, what);  // raises with this core's range in the message
}

uint64_t Scheduler::worker_noc_addr(uint32_t noc_x, uint32_t noc_y, uint32_t local_addr) {
    if (is_dram_coord(noc_x, noc_y)) return encode_noc(noc_x, noc_y, local_addr);
    return encode_noc(noc_x, noc_y, l1_offset_on_any_core(local_addr, "get_noc_addr"));
}

uint64_t Scheduler::multicast_noc_addr(uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1, uint32_t local_addr) {
    uint64_t a = encode_noc(x0, y0, l1_offset_on_any_core(local_addr, "get_noc_multicast_addr"));
    return a | (uint64_t(x1 & 0x3f) << kMcastEndShift) | (uint64_t(y1 & 0x3f) << (kMcastEndShift + 6));
}

Core& Scheduler::core_at(uint32_t noc_x, uint32_t noc_y, const char* what) {
    if (noc_x >= uint32_t(kGridX) || noc_y >= uint32_t(kGridY)) {
        raise(std::string(what) + ": NoC coordinate (" + std::to_string(noc_x) + "," + std::to_string(noc_y) +
              ") is neither a Tensix core nor a DRAM bank");
    }
    return cores_[noc_y * kGridX + noc_x];
}

uint64_t Scheduler::noc_latency(uint32_t x, uint32_t y) const {
    const CoreXY& me_xy = current_->core->xy;
    uint32_t hops = uint32_t(std::abs(int(x) - me_xy.x) + std::abs(int(y) - me_xy.y));
    return costs().l1_latency + timing::kNocCyclesPerHop * hops;
}

// ---------------------------------------------------------------- NoC transfers

uint64_t BandwidthLedger::reserve(uint64_t t, double bytes) {
    const double capacity = rate_ * double(kBucketCycles);
    size_t b = size_t(t / kBucketCycles);
    if (b < first_) {
        throw SimError("internal: a transfer booked at cycle " + std::to_string(t) +
                       ", before the bandwidth ledger's kept window (bucket " + std::to_string(first_) + ")");
    }
    // The first bucket only has the part after t left.
    double first_room = capacity * double((b + 1) * kBucketCycles - t) / double(kBucketCycles);
    double remaining = bytes;
    for (;; ++b) {
        const size_t i = b - first_;
        if (used_.size() <= i) used_.resize(i + 1024, 0.0);
        double room = std::max(0.0, (b == size_t(t / kBucketCycles) ? first_room : capacity) - used_[i]);
        double take = std::min(room, remaining);
        used_[i] += take;
        remaining -= take;
        if (remaining <= 1e-9) {
            uint64_t end = uint64_t(double(b * kBucketCycles) + used_[i] / rate_ + 0.999);
            return std::max(end, t + uint64_t(bytes / rate_ + 0.999));
        }
    }
}

void BandwidthLedger::forget_before(uint64_t t) {
    const size_t b = size_t(t / kBucketCycles);
    if (b <= first_) return;
    const size_t drop = b - first_;
    if (drop >= used_.size()) {
        used_.clear();
        first_ = b;
        return;
    }
    if (drop < 4096) return;  // erase in large steps: the move of the kept buckets stays amortised
    used_.erase(used_.begin(), used_.begin() + std::ptrdiff_t(drop));
    first_ = b;
}

// Every booking starts at its fiber's clock (transfer), fibers' clocks never go back, and only
// data-movement fibers book, so nothing books before the lowest clock of the data-movement fibers
// still running.
void Scheduler::trim_ledgers() {
    uint64_t floor = std::numeric_limits<uint64_t>::max();
    for (const auto& f : fibers_) {
        if (f->state != FiberState::Done && f->state != FiberState::Failed && !f->compute) floor = std::min(floor, f->clock);
    }
    if (floor == std::numeric_limits<uint64_t>::max()) return;
    for (auto& d : dram_ledger_) d.forget_before(floor);
    for (auto& ports : port_ledger_) {
        for (auto& p : ports) p.forget_before(floor);
    }
    for (auto& noc : link_ledger_) {
        for (auto& l : noc) l.forget_before(floor);
    }
}

int Scheduler::noc_of(const Fiber& f) const { return f.spec->noc; }

noc_routes::Node Scheduler::node_of(uint32_t noc_x, uint32_t noc_y) const {
    if (is_dram_coord(noc_x, noc_y)) return noc_routes::dram_node(int(noc_x - kDramNocX0));
    return noc_routes::worker_node(int(noc_x), int(noc_y));
}

uint64_t Scheduler::transfer(int dram_bank, uint32_t size, uint64_t latency, bool write,
                            const noc_routes::LinkSet* route) {
    Fiber& f = me();
    const int core_index = f.core->xy.y * kGridX + f.core->xy.x;
    const int noc = noc_of(f);
    // Small transfers use the link less efficiently (tt-npe's per-size rates): they cost the port
    // as many link cycles as their size at their own rate. A core's DRAM traffic has a lower ceiling.
    double rate = timing::noc_bytes_per_cycle(size);
    if (dram_bank >= 0)
        rate = std::min(rate, write ? timing::kCoreDramWriteBytesPerCycle : timing::kCoreDramReadBytesPerCycle);
    double link_bytes = double(size) * timing::kNocLinkBytesPerCycle / rate;
    if (++transfers_since_trim_ >= 4096) {
        transfers_since_trim_ = 0;
        trim_ledgers();
    }
    uint64_t done = port_ledger_[core_index][noc].reserve(f.clock, link_bytes);
    if (dram_bank >= 0) {
        done = std::max(done, dram_ledger_[dram_bank].reserve(f.clock, double(size)));
        dram_busy_cycles_ += uint64_t(double(size) / (timing::kDramChannelPeakBytesPerCycle * costs().dram_efficiency) + 0.5);
    }
    // Each link of the route carries the transfer's bytes (a small packet's lower rate is its issuing
    // port's cost, as in tt-npe, where a transfer loads each link of its route by its own rate).
    // A write into DRAM holds each link of its route for as long as its channel takes to ingest it
    // (timing::dram_write_link_bytes): bytes booked at the link rate over that time.
    if (route) {
        auto& links = link_ledger_[noc];
        const double route_bytes =
            (dram_bank >= 0 && write) ? timing::dram_write_link_bytes(size) : double(size);
        for (size_t i = route->_Find_first(); i < route->size(); i = route->_Find_next(i))
            done = std::max(done, links[i].reserve(f.clock, route_bytes));
    }
    return done + latency;
}

void Scheduler::trace_span(uint64_t start, uint64_t end, std::string name) {
    if (!program_ || !program_->trace || end <= start) return;
    Fiber& f = me();
    trace_.push_back({f.core->xy.x, f.core->xy.y, role_name(f.spec->role), std::move(name), start, end});
}

void Scheduler::noc_read(uint64_t src, uint32_t dst_local, uint32_t size) {
    ++counters_.api_calls;
    uint32_t dst_off = l1_offset_of(dst_local, size, "noc_async_read (destination)");
    uint32_t x = noc_x_of(src), y = noc_y_of(src);
    const uint8_t* from;
    uint64_t latency;
    int bank = -1;
    if (is_dram_coord(x, y)) {
        bank = int(x - kDramNocX0);
        try {
            from = dram_.at(int(x - kDramNocX0), noc_local_of(src), size, "noc_async_read");
        } catch (const SimError& e) {
            raise(e.what());
        }
        counters_.dram_read_bytes += size;
        latency = costs().dram_latency;
    } else {
        Core& c = core_at(x, y, "noc_async_read");
        uint64_t off = noc_local_of(src);
        if (off + size > kL1Bytes) raise("noc_async_read: source range past the end of L1 of core (" + std::to_string(x) + "," + std::to_string(y) + ")");
        from = c.l1 + off;
        latency = noc_latency(x, y);
    }
    check_l1_target(*me().core, dst_off, size, "noc_async_read (destination)");
    Fiber& f = me();
    uint8_t* to = f.core->l1 + dst_off;
    if (from < to + size && to < from + size) {
        std::memmove(to, from, size);  // a copy onto itself (overlapping): delivered at once
        f.pending_read_sources.push_back(nullptr);
    } else {
        std::memset(to, kReadPoison, size);  // the data arrives at the barrier (noc_read_barrier)
        f.pending_read_sources.push_back(from);
    }
    counters_.noc_bytes += size;
    // The data flows from the source to this core, on this RISC's NoC.
    noc_routes::LinkSet route;
    noc_routes::add_unicast(noc_of(f), node_of(x, y), node_of(f.core->xy.x, f.core->xy.y), route);
    f.read_done = std::max(f.read_done, transfer(bank, size, latency, false, &route));
    f.pending_reads.push_back({dst_off, dst_off + size});
    note_progress();
    note_l1_write(*f.core, f.read_done);
    advance(timing::kNocIssueCycles);
}

void Scheduler::noc_write(uint32_t src_local, uint64_t dst, uint32_t size) {
    ++counters_.api_calls;
    uint32_t src_off = l1_offset_of(src_local, size, "noc_async_write (source)");
    // Sending L1 that a read of this RISC's is still filling: the bytes sent would be whatever was there.
    for (const auto& [a, b] : me().pending_reads) {
        if (a < src_off + size && b > src_off) {
            raise("noc_async_write: its source (L1 offset " + std::to_string(src_off) + ", " + std::to_string(size) +
                  " bytes) is still being filled by a noc_async_read: call noc_async_read_barrier first");
        }
    }
    uint32_t x = noc_x_of(dst), y = noc_y_of(dst);
    uint8_t* to;
    uint64_t latency;
    int bank = -1;
    if (is_dram_coord(x, y)) {
        bank = int(x - kDramNocX0);
        try {
            to = dram_.at(int(x - kDramNocX0), noc_local_of(dst), size, "noc_async_write");
        } catch (const SimError& e) {
            raise(e.what());
        }
        counters_.dram_write_bytes += size;
        latency = costs().dram_latency;
    } else {
        Core& c = core_at(x, y, "noc_async_write");
        uint64_t off = noc_local_of(dst);
        if (off + size > kL1Bytes) raise("noc_async_write: destination range past the end of L1 of core (" + std::to_string(x) + "," + std::to_string(y) + ")");
        check_l1_target(c, off, size, "noc_async_write (destination)");
        to = c.l1 + off;
        latency = noc_latency(x, y);
        if (size == 4) c.sem_time[uint32_t(off)] = me().clock + latency;  // a remote semaphore set
        note_l1_write(c, me().clock + latency);
    }
    // A timing-only run keeps what kernels write to DRAM out of host memory: the values are not
    // computed anyway, and no program steers by data a kernel wrote (what steers kernels, page tables
    // and the like, is uploaded by the host and kept). Writes into L1 (semaphores, hand-offs) are kept.
    if (bank < 0 || !program_->timing_only) std::memmove(to, me().core->l1 + src_off, size);
    counters_.noc_bytes += size;
    Fiber& f = me();
    noc_routes::LinkSet route;
    noc_routes::add_unicast(noc_of(f), node_of(f.core->xy.x, f.core->xy.y), node_of(x, y), route);
    f.write_done = std::max(f.write_done, transfer(bank, size, latency, true, &route));
    f.pending_writes.push_back({src_off, src_off + size});
    note_progress();
    advance(timing::kNocIssueCycles);
}

std::vector<Core*> Scheduler::multicast_targets(uint64_t mcast, bool include_self, uint32_t num_dests,
                                                const char* what) {
    uint32_t x0 = noc_x_of(mcast), y0 = noc_y_of(mcast);
    uint32_t x1 = uint32_t((mcast >> kMcastEndShift) & 0x3f), y1 = uint32_t((mcast >> (kMcastEndShift + 6)) & 0x3f);
    // A rectangle is named from the corner its NoC reaches first: NoC 0 runs towards higher
    // coordinates, so it starts at the low corner; NoC 1 runs the other way and starts at the high
    // one (tt-metal's program factories swap start and end for NoC 1). The wrong order hangs a card.
    const bool noc1 = noc_of(me()) == 1;
    if (noc1 ? (x0 < x1 || y0 < y1) : (x0 > x1 || y0 > y1)) {
        raise(std::string(what) + ": multicast rectangle (" + std::to_string(x0) + "," + std::to_string(y0) + ")-(" +
              std::to_string(x1) + "," + std::to_string(y1) + ") issued on NoC " + (noc1 ? "1" : "0") +
              " must start at its " + (noc1 ? "high" : "low") + " corner and end at its " + (noc1 ? "low" : "high") +
              " one");
    }
    if (noc1) {
        std::swap(x0, x1);
        std::swap(y0, y1);
    }
    if (x1 >= uint32_t(kGridX) || y1 >= uint32_t(kGridY)) {
        raise(std::string(what) + ": multicast rectangle (" + std::to_string(x0) + "," + std::to_string(y0) + ")-(" +
              std::to_string(x1) + "," + std::to_string(y1) + ") is not inside the Tensix grid");
    }
    std::vector<Core*> out;
    Core* self = me().core;
    for (uint32_t y = y0; y <= y1; ++y)
        for (uint32_t x = x0; x <= x1; ++x) {
            Core* c = &cores_[y * kGridX + x];
            if (c == self && !include_self) continue;
            out.push_back(c);
        }
    if (out.size() != num_dests) {
        raise(std::string(what) + ": num_dests is " + std::to_string(num_dests) + " but the rectangle holds " +
              std::to_string(out.size()) + " destination cores" + (include_self ? " (including this one)" : " (excluding this one)"));
    }
    return out;
}

void Scheduler::noc_write_multicast(uint32_t src_local, uint64_t mcast, uint32_t size, uint32_t num_dests,
                                    bool include_self) {
    ++counters_.api_calls;
    uint32_t src_off = l1_offset_of(src_local, size, "noc_async_write_multicast (source)");
    uint64_t off = noc_local_of(mcast);
    if (off + size > kL1Bytes) raise("noc_async_write_multicast: destination range past the end of L1");
    uint64_t worst = 0;
    int lo_col = noc_routes::kCols, lo_row = noc_routes::kRows, hi_col = -1, hi_row = -1;
    for (Core* c : multicast_targets(mcast, include_self, num_dests, "noc_async_write_multicast")) {
        const noc_routes::Node n = node_of(c->xy.x, c->xy.y);
        lo_col = std::min(lo_col, n.col), lo_row = std::min(lo_row, n.row);
        hi_col = std::max(hi_col, n.col), hi_row = std::max(hi_row, n.row);
        check_l1_target(*c, off, size, "noc_async_write_multicast (destination)");
        if (c != me().core) std::memmove(c->l1 + off, me().core->l1 + src_off, size);
        worst = std::max(worst, noc_latency(c->xy.x, c->xy.y));
        note_l1_write(*c, me().clock + noc_latency(c->xy.x, c->xy.y));
    }
    me().pending_writes.push_back({src_off, src_off + size});
    note_progress();
    counters_.noc_bytes += uint64_t(size) * num_dests;
    Fiber& f = me();
    // A multicast is one packet stream from this core's port; the NoC forks it on the way.
    noc_routes::LinkSet route;
    if (hi_col >= 0)
        noc_routes::add_multicast(noc_of(f), node_of(f.core->xy.x, f.core->xy.y), {lo_col, lo_row}, {hi_col, hi_row},
                                  route);
    f.write_done = std::max(f.write_done, transfer(-1, size, worst, false, &route));
    advance(timing::kNocIssueCycles);
}

void Scheduler::deliver_reads(Fiber& f) {
    // In issue order, so that of overlapping reads the later one wins, as when they arrive in order.
    for (size_t i = 0; i < f.pending_reads.size(); ++i) {
        if (const uint8_t* from = f.pending_read_sources[i]) {
            const auto& [a, b] = f.pending_reads[i];
            std::memmove(f.core->l1 + a, from, b - a);
        }
    }
    if (!f.pending_reads.empty()) note_l1_write(*f.core, f.clock);  // a spinner may wait for these bytes
    f.pending_reads.clear();
    f.pending_read_sources.clear();
}

void Scheduler::noc_read_barrier() {
    Fiber& f = me();
    deliver_reads(f);
    if (f.read_done > f.clock) {
        trace_span(f.clock, f.read_done, "noc_async_read_barrier");
        f.stall += f.read_done - f.clock;
        f.clock = f.read_done;
    }
    advance(timing::kApiCallCycles);
}

void Scheduler::noc_write_barrier() {
    Fiber& f = me();
    f.pending_writes.clear();
    if (f.write_done > f.clock) {
        trace_span(f.clock, f.write_done, "noc_async_write_barrier");
        f.stall += f.write_done - f.clock;
        f.clock = f.write_done;
    }
    advance(timing::kApiCallCycles);
}

void Scheduler::noc_writes_flushed() { noc_write_barrier(); }

// ---------------------------------------------------------------- semaphores

uint32_t Scheduler::semaphore_addr(uint32_t id) {
    if (id >= uint32_t(kMaxSemaphores)) raise("get_semaphore(" + std::to_string(id) + "): id out of range");
    return me().core->l1_base + id * kSemaphoreStride;
}

void Scheduler::semaphore_wait(uint32_t local_addr, uint32_t value, bool at_least) {
    ++counters_.api_calls;
    uint32_t off = l1_offset_of(local_addr, 4, at_least ? "noc_semaphore_wait_min" : "noc_semaphore_wait");
    Core* c = me().core;
    auto* p = reinterpret_cast<volatile uint32_t*>(c->l1 + off);
    uint64_t t = block_until(
        [p, value, at_least, c, off]() -> std::optional<uint64_t> {
            uint32_t v = *p;
            if (at_least ? v >= value : v == value) {
                auto it = c->sem_time.find(off);
                return it == c->sem_time.end() ? 0 : it->second;
            }
            return std::nullopt;
        },
        std::string(at_least ? "noc_semaphore_wait_min" : "noc_semaphore_wait") + "(L1 offset " +
            std::to_string(off) + ", until " + std::to_string(value) + ", now " + std::to_string(*p) + ")");
    Fiber& f = me();
    if (t > f.clock) {
        f.stall += t - f.clock;
        f.clock = t;
    }
    advance(timing::kApiCallCycles);
}

void Scheduler::semaphore_set(uint32_t local_addr, uint32_t value) {
    ++counters_.api_calls;
    uint32_t off = l1_offset_of(local_addr, 4, "noc_semaphore_set");
    Core* c = me().core;
    std::memcpy(c->l1 + off, &value, 4);
    c->sem_time[off] = me().clock;
    note_progress();
    note_l1_write(*c, me().clock);
    advance(timing::kApiCallCycles);
}

void Scheduler::semaphore_inc(uint64_t noc_addr, uint32_t incr) {
    ++counters_.api_calls;
    uint32_t x = noc_x_of(noc_addr), y = noc_y_of(noc_addr);
    Core& c = core_at(x, y, "noc_semaphore_inc");
    uint64_t off = noc_local_of(noc_addr);
    if (off + 4 > kL1Bytes) raise("noc_semaphore_inc: address past the end of L1");
    uint32_t v;
    std::memcpy(&v, c.l1 + off, 4);
    v += incr;
    std::memcpy(c.l1 + off, &v, 4);
    c.sem_time[uint32_t(off)] = std::max(c.sem_time[uint32_t(off)], me().clock + noc_latency(x, y));
    note_progress();
    note_l1_write(c, me().clock + noc_latency(x, y));
    advance(timing::kNocIssueCycles);
}

void Scheduler::semaphore_set_multicast(uint32_t src_local, uint64_t mcast, uint32_t num_dests, bool include_self) {
    ++counters_.api_calls;
    uint32_t src_off = l1_offset_of(src_local, 4, "noc_semaphore_set_multicast (source)");
    uint64_t off = noc_local_of(mcast);
    if (off + 4 > kL1Bytes) raise("noc_semaphore_set_multicast: destination past the end of L1");
    for (Core* c : multicast_targets(mcast, include_self, num_dests, "noc_semaphore_set_multicast")) {
        std::memmove(c->l1 + off, me().core->l1 + src_off, 4);
        c->sem_time[uint32_t(off)] = me().clock + noc_latency(c->xy.x, c->xy.y);
        note_l1_write(*c, me().clock + noc_latency(c->xy.x, c->xy.y));
    }
    note_progress();
    advance(timing::kNocIssueCycles);
}

void Scheduler::semaphore_inc_multicast(uint64_t mcast, uint32_t incr, uint32_t num_dests) {
    ++counters_.api_calls;
    uint64_t off = noc_local_of(mcast);
    if (off + 4 > kL1Bytes) raise("noc_semaphore_inc_multicast: destination past the end of L1");
    for (Core* c : multicast_targets(mcast, false, num_dests, "noc_semaphore_inc_multicast")) {
        uint32_t v;
        std::memcpy(&v, c->l1 + off, 4);
        v += incr;
        std::memcpy(c->l1 + off, &v, 4);
        uint64_t& t = c->sem_time[uint32_t(off)];
        t = std::max(t, me().clock + noc_latency(c->xy.x, c->xy.y));
        note_l1_write(*c, t);
    }
    note_progress();
    advance(timing::kNocIssueCycles);
}

void Scheduler::noc_write_inline(uint64_t dst, uint32_t value, uint32_t byte_enable) {
    ++counters_.api_calls;
    uint32_t x = noc_x_of(dst), y = noc_y_of(dst);
    if (is_dram_coord(x, y)) raise("noc_inline_dw_write: inline writes go to a core's L1 or registers, not DRAM");
    Core& c = core_at(x, y, "noc_inline_dw_write");
    uint64_t off = noc_local_of(dst);
    if (off % 4 != 0 || off + 4 > kL1Bytes) raise("noc_inline_dw_write: destination is not a 4-byte word of L1");
    for (int b = 0; b < 4; ++b) {
        if (byte_enable & (1u << b)) c.l1[off + b] = uint8_t(value >> (8 * b));
    }
    uint64_t latency = noc_latency(x, y);
    c.sem_time[uint32_t(off)] = me().clock + latency;  // often a semaphore or flag a waiter polls
    note_progress();
    note_l1_write(c, me().clock + latency);
    counters_.noc_bytes += 4;
    Fiber& f = me();
    f.write_done = std::max(f.write_done, transfer(-1, 4, latency));
    advance(timing::kNocIssueCycles);
}

void Scheduler::noc_read_zeros(uint32_t dst_local, uint32_t size, uint32_t zero_chunk) {
    uint32_t off = l1_offset_of(dst_local, size, "Noc::async_write_zeros (destination)");
    if (zero_chunk == 0) raise("Noc::async_write_zeros: zero region of 0 bytes");
    Core& self = *me().core;
    std::memset(self.l1 + off, 0, size);
    const uint64_t latency = noc_latency(self.xy.x, self.xy.y);
    for (uint32_t done = 0; done < size; done += zero_chunk) {
        ++counters_.api_calls;
        const uint32_t n = std::min(zero_chunk, size - done);
        counters_.noc_bytes += n;
        Fiber& f = me();
        f.read_done = std::max(f.read_done, transfer(-1, n, latency));
        advance(timing::kNocIssueCycles);
    }
}

// ---------------------------------------------------------------- the device

Device::Device() : scheduler_(std::make_unique<Scheduler>(dram_)) {}
Device::~Device() = default;
RunResult Device::run(const ProgramSpec& program) {
    // Kernel shared objects are process-wide (see Scheduler::setup): one program runs at a time.
    static std::mutex run_lock;
    std::lock_guard<std::mutex> guard(run_lock);
    return scheduler_->run(program);
}

}  // namespace ttsim
