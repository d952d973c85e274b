// Fault guards around kernel fibers (docs/faults.md):
//
//  * crashes: SIGSEGV/SIGBUS/SIGILL/SIGFPE raised while a kernel fiber runs are caught on an
//    alternate signal stack (the fiber's own stack may be what overflowed) and turned into a SimError
//    naming the core, kernel and faulting address; the handler jumps back to the scheduler's context,
//    abandoning the fiber, so the process and the device survive. Faults anywhere else (the scheduler,
//    other threads) go to whatever handler was installed before the run.
//  * spinning: a timer on the simulator thread's CPU clock ticks every spin_seconds / 2. A fiber that
//    has gone two ticks without an API call, while the interrupted instruction is in its kernel's own
//    code, is preempted (swapcontext out of the signal handler): it polls L1 through a plain pointer
//    or loops forever. It runs again once its core's L1 is written (scheduler.cpp), so a volatile poll
//    of a semaphore works; if nothing else can run, it is a hang and the run stops with every core's state.
//  * the watchdog: the same tick counts CPU time without CB, NoC or semaphore traffic.
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <sstream>

#include "scheduler.h"

namespace ttsim {

namespace {
// The scheduler whose run is on thread g_tid (Device::run serialises runs, so there is at most one).
Scheduler* volatile g_active = nullptr;
volatile pid_t g_tid = 0;
// SIGABRT too: a failed assert or std::terminate in a kernel aborts on the kernel's fiber.
const int kFaultSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
constexpr int kNumFaultSignals = 5;
struct sigaction g_old_fault[kNumFaultSignals];
struct sigaction g_old_tick;
stack_t g_old_altstack;
// The signal that the spin timer raises: a real-time signal nothing else in the process uses.
int tick_signal() { return SIGRTMIN + 4; }

pid_t my_tid() { return pid_t(syscall(SYS_gettid)); }

uintptr_t pc_of(void* uctx) { return uintptr_t(static_cast<ucontext_t*>(uctx)->uc_mcontext.gregs[REG_RIP]); }
uintptr_t sp_of(void* uctx) { return uintptr_t(static_cast<ucontext_t*>(uctx)->uc_mcontext.gregs[REG_RSP]); }

const char* signal_name(int sig) {
    switch (sig) {
        case SIGSEGV: return "SIGSEGV (invalid memory access)";
        case SIGBUS: return "SIGBUS (misaligned or unmapped memory access)";
        case SIGILL: return "SIGILL (illegal instruction)";
        case SIGFPE: return "SIGFPE (arithmetic fault, e.g. an integer division by zero)";
        case SIGABRT: return "SIGABRT (abort: a failed assert, std::abort or an uncaught non-std exception)";
    }
    return "signal";
}
}  // namespace

// ---------------------------------------------------------------- handlers

void Scheduler::on_fault_signal(int sig, siginfo_t* info, void* uctx) {
    Scheduler* s = g_active;
    Fiber* f = s && my_tid() == g_tid ? s->current_ : nullptr;
    const uintptr_t sp = sp_of(uctx);
    const uintptr_t lo = f ? uintptr_t(f->stack) - kFiberGuardBytes : 0, hi = f ? uintptr_t(f->stack) + kFiberStackBytes : 0;
    if (!f || sp < lo || sp >= hi) {
        // Not a kernel's fault: put back the previous handler and return; the faulting instruction runs
        // again and faults under it (Python's faulthandler, or the default core dump).
        for (int i = 0; i < kNumFaultSignals; ++i)
            if (kFaultSignals[i] == sig) sigaction(sig, &g_old_fault[i], nullptr);
        return;
    }
    CaughtFault& c = s->fault_;
    c.sig = sig;
    c.code = info->si_code;
    c.addr = uintptr_t(info->si_addr);
    c.pc = pc_of(uctx);
    c.in_kernel_code = s->pc_in_kernel(c.pc, *f);
    c.stack_overflow = sig == SIGSEGV && c.addr >= lo && c.addr < uintptr_t(f->stack);
    s->fault_caught_ = true;
    f->state = FiberState::Failed;
    // Back to the scheduler's context; setcontext restores its signal mask, unblocking `sig`.
    setcontext(&s->main_ctx_);
}

void Scheduler::on_tick_signal(int, siginfo_t*, void* uctx) {
    Scheduler* s = g_active;
    if (!s || my_tid() != g_tid) return;
    if (s->progress_ != s->tick_progress_) {
        s->tick_progress_ = s->progress_;
        s->idle_ticks_ = 0;
    } else if (++s->idle_ticks_ * s->program_->spin_seconds / 2 >= s->program_->watchdog_seconds) {
        s->watchdog_fired_ = true;  // acted on at the fiber's next API call or when it is preempted below
    }
    // Anything a kernel does through the API moves one of these.
    const uint64_t seen = s->counters_.context_switches + s->counters_.api_calls + s->progress_;
    if (seen != s->tick_switches_) {
        s->tick_switches_ = seen;
        s->still_ticks_ = 0;
    } else {
        ++s->still_ticks_;
    }
    Fiber* f = s->current_;
    const bool spinning = s->still_ticks_ >= 2;
    if (!(spinning || s->watchdog_fired_) || !f || f->state != FiberState::Ready) return;
    const uintptr_t sp = sp_of(uctx);
    // Last resort: twice the watchdog's time without progress and the fiber never came back to its own
    // code (an API call that never returns): abandon it wherever it is, as for a crash. The simulator's
    // state is rebuilt by the next run; a lock it held (malloc's) could still hang the process.
    if (s->watchdog_fired_ && s->idle_ticks_ * s->program_->spin_seconds / 2 >= 2 * s->program_->watchdog_seconds &&
        sp >= uintptr_t(f->stack) && sp < uintptr_t(f->stack) + kFiberStackBytes) {
        s->fault_ = {};
        s->fault_.pc = pc_of(uctx);
        s->fault_caught_ = true;
        f->state = FiberState::Failed;
        setcontext(&s->main_ctx_);
    }
    // Only code of the kernel itself is preempted: simulator or C library code may be half-way through
    // changing shared state or hold a lock that the scheduler's context would then take.
    if (!s->pc_in_kernel(pc_of(uctx), *f) || sp < uintptr_t(f->stack) || sp >= uintptr_t(f->stack) + kFiberStackBytes) return;
    if (s->watchdog_fired_) {
        // A kernel looping on API calls that move nothing (and that do not yield): hand control to the
        // scheduler, which stops the run with every core's state.
        swapcontext(&f->ctx, &s->main_ctx_);
        return;
    }
    s->still_ticks_ = 0;
    f->state = FiberState::Spinning;
    f->spin_mark = s->steps_;
    f->spin_l1_writes = f->core->l1_writes;
    swapcontext(&f->ctx, &s->main_ctx_);
    // resumed by the scheduler: return from the handler into the kernel's loop
}

bool Scheduler::pc_in_kernel(uintptr_t pc, const Fiber& f) const {
    auto it = module_text_.find(f.module);
    if (it == module_text_.end()) return false;
    for (const auto& [lo, hi] : it->second)
        if (pc >= lo && pc < hi) return true;
    return false;
}

void Scheduler::record_module_text(const KernelModule& m) {
    link_map* lm = nullptr;
    if (dlinfo(m.handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm) return;
    struct Want {
        ElfW(Addr) base;
        std::vector<std::pair<uintptr_t, uintptr_t>>* out;
    } want{lm->l_addr, &module_text_[&m]};
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) -> int {
            auto* w = static_cast<Want*>(data);
            if (info->dlpi_addr != w->base) return 0;
            for (int i = 0; i < info->dlpi_phnum; ++i) {
                const ElfW(Phdr)& ph = info->dlpi_phdr[i];
                if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
                    w->out->push_back({info->dlpi_addr + ph.p_vaddr, info->dlpi_addr + ph.p_vaddr + ph.p_memsz});
            }
            return 1;
        },
        &want);
}

// ---------------------------------------------------------------- arming

void Scheduler::arm_guards() {
    fault_ = {};
    fault_caught_ = false;
    watchdog_fired_ = false;
    steps_ = progress_ = last_progress_cycle_ = 0;
    tick_progress_ = tick_switches_ = 0;
    still_ticks_ = idle_ticks_ = 0;
    // The handlers run on their own stack: the fiber's may be the one that overflowed.
    static thread_local char* alt = nullptr;
    constexpr size_t kAltBytes = 64 * 1024;
    if (!alt) alt = static_cast<char*>(mmap(nullptr, kAltBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    stack_t ss{};
    ss.ss_sp = alt;
    ss.ss_size = kAltBytes;
    sigaltstack(&ss, &g_old_altstack);
    g_tid = my_tid();
    g_active = this;
    struct sigaction sa{};
    sa.sa_sigaction = &Scheduler::on_fault_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, tick_signal());
    for (int i = 0; i < kNumFaultSignals; ++i) sigaction(kFaultSignals[i], &sa, &g_old_fault[i]);
    // The tick runs on the fiber's stack (no SA_ONSTACK), so that it can switch away from it.
    struct sigaction tick{};
    tick.sa_sigaction = &Scheduler::on_tick_signal;
    tick.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&tick.sa_mask);
    sigaction(tick_signal(), &tick, &g_old_tick);
    sigevent ev{};
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = tick_signal();
    ev._sigev_un._tid = g_tid;
    timer_t t;
    // The thread's CPU clock: time the machine spends on other work does not count as spinning.
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &t) == 0) {
        const double period = std::max(program_->spin_seconds / 2, 0.0005);
        itimerspec its{};
        its.it_interval.tv_sec = time_t(period);
        its.it_interval.tv_nsec = long((period - double(time_t(period))) * 1e9);
        its.it_value = its.it_interval;
        timer_settime(t, 0, &its, nullptr);
        timer_ = new timer_t(t);
    }
}

void Scheduler::disarm_guards() {
    if (timer_) {
        timer_delete(*static_cast<timer_t*>(timer_));
        delete static_cast<timer_t*>(timer_);
        timer_ = nullptr;
    }
    g_active = nullptr;
    // A tick may still be pending; its handler sees no active scheduler and returns.
    sigaction(tick_signal(), &g_old_tick, nullptr);
    for (int i = 0; i < kNumFaultSignals; ++i) sigaction(kFaultSignals[i], &g_old_fault[i], nullptr);
    sigaltstack(&g_old_altstack, nullptr);
}

// ---------------------------------------------------------------- reports

std::string Scheduler::fault_message(const CaughtFault& c) const {
    std::ostringstream os;
    char buf[64];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(c.addr));
    if (c.sig == 0) {
        os << "watchdog: stuck inside the simulator for " << 2 * program_->watchdog_seconds
           << " s without progress (an API call that never returns); the run was abandoned";
    } else if (c.stack_overflow) {
        os << "stack overflow: the kernel's stack went past the " << (kFiberStackBytes >> 10)
           << " KiB a kernel gets (a large local array belongs in L1, e.g. a CB; fault at " << buf << ")";
    } else {
        os << "crashed with " << signal_name(c.sig);
        if (c.sig == SIGSEGV || c.sig == SIGBUS) {
            os << " at address " << buf;
            const uintptr_t arena = uintptr_t(l1_arena_);
            if (c.addr < 65536) {
                os << " (a null or near-null pointer)";
            } else if (c.addr >= arena && c.addr < arena + size_t(kL1Stride) * cores_.size()) {
                const size_t i = (c.addr - arena) / kL1Stride;
                os << " (" << (c.addr - arena) % kL1Stride - kL1Bytes << " bytes past the end of core ("
                   << cores_[i].xy.x << "," << cores_[i].xy.y << ")'s " << kL1Bytes << "-byte L1)";
            }
        }
    }
    if (c.in_kernel_code) {
        Dl_info di{};
        if (dladdr(reinterpret_cast<void*>(c.pc), &di) && di.dli_fbase) {
            std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(c.pc - uintptr_t(di.dli_fbase)));
            os << ", in kernel code at " << buf << " of " << (di.dli_fname ? di.dli_fname : "?");
        }
    } else {
        const char* call = current_ ? current_->call : "";
        if (*call) os << ", inside the simulator while serving the kernel's call " << call;
        else os << ", outside the kernel's own code (in the simulator or a library it called)";
    }
    return os.str();
}

std::string Scheduler::state_report() const {
    std::ostringstream os;
    for (const auto& f : fibers_) {
        os << "  core (" << f->core->xy.x << "," << f->core->xy.y << ") " << role_name(f->spec->role) << " "
           << f->spec->name << " at cycle " << f->clock << ": ";
        switch (f->state) {
            case FiberState::Done: os << "finished"; break;
            case FiberState::Ready: os << "running (last API call " << (*f->call ? f->call : "none") << ")"; break;
            case FiberState::Blocked: os << "blocked in " << f->wait_desc; break;
            case FiberState::Spinning:
                os << "spinning in kernel code without API calls (an infinite loop, or a poll of an L1 word that no "
                      "other kernel writes)";
                break;
            case FiberState::Failed: os << "failed"; break;
        }
        os << "\n";
    }
    os << "circular buffers (pages filled / capacity, pushed, popped):\n";
    for (const Core& c : cores_) {
        if (!c.active) continue;
        bool any = false;
        for (int i = 0; i < kNumCircularBuffers; ++i) {
            const CircularBuffer& cb = c.cbs[i];
            if (!cb.configured) continue;
            if (!any) os << "  core (" << c.xy.x << "," << c.xy.y << "):";
            any = true;
            os << " cb" << i << "=" << cb.fill() << "/" << cb.num_pages << " (pushed " << cb.pushed << ", popped "
               << cb.popped << ")";
        }
        if (any) os << "\n";
    }
    return os.str();
}

// ---------------------------------------------------------------- state checks

// What a correct program leaves in its CBs when every kernel has returned. Benign: pages that a
// consumer waited for and left at the front (a scaler or mask tile read all along and never popped),
// and a CB reserved as scratch L1 that was never pushed at all (or reserved whole once to zero it,
// then filled block by block). Faults: pages pushed that no kernel ever waited for (the producer
// pushes more than the consumer reads), and, on a CB that carries pushes, a last cb_reserve_back that
// no cb_push_back followed (a producer whose last block never went out).
void Scheduler::check_cb_balance() {
    std::ostringstream os;
    for (const Core& c : cores_) {
        if (!c.active) continue;
        for (int i = 0; i < kNumCircularBuffers; ++i) {
            const CircularBuffer& cb = c.cbs[i];
            if (!cb.configured) continue;
            const std::string who = cb.producer ? std::string(role_name(cb.producer->role)) + " kernel " + cb.producer->name
                                                : std::string("?");
            const uint64_t seen = std::max(cb.waited, cb.popped);
            if (cb.pushed > seen) {
                os << "  core (" << c.xy.x << "," << c.xy.y << ") cb " << i << ": " << cb.pushed - seen << " of the "
                   << cb.pushed << " pages " << who << " pushed were never waited for nor popped (pushed " << cb.pushed
                   << ", waited for " << cb.waited << ", popped " << cb.popped
                   << "): the producer pushes more pages than the consumer reads\n";
            }
            if (cb.open_reservation > 0 && cb.pushed > 0) {
                os << "  core (" << c.xy.x << "," << c.xy.y << ") cb " << i << ": " << who << " reserved "
                   << cb.open_reservation << " pages after its last push and never pushed them (cb_reserve_back without cb_push_back)\n";
            }
        }
    }
    if (!os.str().empty()) {
        throw SimError("unbalanced circular buffers at the end of " + program_->name + ":\n" + os.str());
    }
}

void Scheduler::check_l1_target(const Core& c, uint64_t off, uint32_t size, const char* what) {
    const uint64_t end = off + size;
    if (end <= kSemaphoreBytes) return;  // the semaphores
    uint64_t cb_start = program_->l1_reserved;  // 0: not given, the lowest CB then
    bool have_cbs = false;
    for (int i = 0; i < kNumCircularBuffers; ++i) {
        const CircularBuffer& cb = c.cbs[i];
        if (!cb.configured) continue;
        const uint64_t lo = cb.l1_offset, hi = lo + uint64_t(cb.page_size) * cb.num_pages;
        if (off >= lo && end <= hi) return;  // inside one CB
        if (off < hi && end > lo) {
            raise(std::string(what) + ": " + std::to_string(size) + " bytes at L1 offset " + std::to_string(off) +
                  " of core (" + std::to_string(c.xy.x) + "," + std::to_string(c.xy.y) + ") run past circular buffer " +
                  std::to_string(i) + " [" + std::to_string(lo) + ", " + std::to_string(hi) +
                  ") into the L1 next to it (the transfer is larger than the pages reserved for it)");
        }
        if (!program_->l1_reserved) cb_start = have_cbs ? std::min(cb_start, lo) : lo;
        have_cbs = true;
    }
    // Anything above the CBs (or between them) is L1 the program may use; below them is the firmware's.
    if (off < cb_start) {
        raise(std::string(what) + ": " + std::to_string(size) + " bytes at L1 offset " + std::to_string(off) + " of core (" +
              std::to_string(c.xy.x) + "," + std::to_string(c.xy.y) + ") land in the firmware's region [" +
              std::to_string(kSemaphoreBytes) + ", " + std::to_string(cb_start) +
              ") below the circular buffers; NoC writes go to a CB's pages, a semaphore or L1 above the CBs");
    }
}

}  // namespace ttsim
