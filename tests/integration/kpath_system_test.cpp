// Full-system tracing end to end: boots Debian 12's kernel under qemu-system-x86_64 with the system plugin, runs the
// probe (10 instances per path, -smp 2, an ext4 virtio disk), splits the recording into kpath: traces and checks them against what the kernel
// must do. Skipped (one line) only when qemu-system-x86_64, the plugin, capstone or the kernel package cannot be had.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <bitset>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <boost/json.hpp>

#include "smtlab/trace/source.hpp"
#include "smtlab/trace/vector_source.hpp"
#include "smtlab/tracer/kpath.hpp"

namespace smtlab {
namespace {
namespace fs = std::filesystem;

class KpathBoot : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (auto why = systemTracerUnavailableReason()) {
      skip_ = *why;
      return;
    }
    // The kernel comes from Debian's archive; only its absence (no apt, no network) is a reason to skip.
    const std::string script = std::string(SMTLAB_SOURCE_DIR) + "/scripts/kpath_kernel.sh >/dev/null 2>&1";
    if (std::system(script.c_str()) != 0) {
      skip_ = "scripts/kpath_kernel.sh could not get the kernel image (run it to see why)";
      return;
    }
    cache_ = fs::temp_directory_path() / ("smtlab-kpath-test-" + std::to_string(::getpid()));
    fs::create_directories(cache_);
    ::setenv("SMTLAB_KPATH_CACHE", cache_.c_str(), 1);
    KpathBuildOptions o;
    o.count = 10;
    o.quiet = true;
    manifest_ = ensureKpathCache(o);
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    if (!cache_.empty()) fs::remove_all(cache_, ec);
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
  }
  static std::vector<Instr> instance(const std::string& name, int seed) {
    auto src = openTrace("kpath:" + name + ",seed=" + std::to_string(seed));
    return readAll(*src);
  }
  static boost::json::array instances(const std::string& name) {
    std::ifstream in(manifest_);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return boost::json::parse(text).at("paths").at(name).at("instances").as_array();
  }
  static std::uint64_t symbol(const std::string& name) {
    std::ifstream in(manifest_);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return boost::json::parse(text).at("symbols").at(name).to_number<std::uint64_t>();
  }
  static bool runs(const std::vector<Instr>& t, std::uint64_t pc) {
    return std::any_of(t.begin(), t.end(), [&](const Instr& i) { return i.pc == pc; });
  }
  static int userRuns(const std::vector<Instr>& t) {
    int n = 0;
    for (std::size_t i = 0; i < t.size(); ++i) n += t[i].pc < kKernelHalf && (i == 0 || t[i - 1].pc >= kKernelHalf);
    return n;
  }
  static std::uint64_t kernelCount(const std::vector<Instr>& t) {
    return static_cast<std::uint64_t>(std::count_if(t.begin(), t.end(), [](const Instr& i) { return i.pc >= kKernelHalf; }));
  }
  // Bytes of user memory (each counted once) that the kernel's instructions of `t` store (or load).
  static std::size_t userBytes(const std::vector<Instr>& t, bool stores) {
    std::set<Addr> bytes;
    for (const Instr& i : t) {
      if (i.pc < kKernelHalf) continue;
      const auto note = [&](const MemRef& m) {
        if (m.valid() && m.addr < kKernelHalf)
          for (Addr a = m.addr; a < m.addr + m.size; ++a) bytes.insert(a);
      };
      if (stores) {
        for (const MemRef& m : i.stores) note(m);
      } else {
        for (const MemRef& m : i.loads) note(m);
      }
    }
    return bytes.size();
  }
  // The kernel records of a path's instances (the manifest's third field), sorted.
  static std::vector<std::uint64_t> kernelRecords(const std::string& name) {
    std::vector<std::uint64_t> k;
    for (const auto& i : instances(name)) k.push_back(i.as_array().at(2).to_number<std::uint64_t>());
    std::sort(k.begin(), k.end());
    return k;
  }
  static std::uint64_t minKernelRecords(const std::string& name) { return kernelRecords(name).at(0); }
  static std::uint64_t medianKernelRecords(const std::string& name) {
    const auto k = kernelRecords(name);
    return k.at(k.size() / 2);
  }
  void checkEveryPathOfTheProbeHasItsInstances();
  void checkNullSystemCallIsUserThenKernelThenUser();
  void checkWarmInstancesOfOnePathRunTheSameUserCode();
  void checkPageFaultZeroesOneWholePage();
  void checkPipeRoundTripRunsTheOtherProcess();
  void checkSameSeedSameInstance();
  void checkFsyncReachesTheDiskAndTheWriteDoesNot();
  void checkReschedIpiStartsAtItsVectorAndStopsBeforeTheSwitch();
  void checkCrossCpuWakeRunsNoOtherProcess();
  void checkWakeIpiStartsAtItsVectorRunsTheWakeListAndStopsBeforeTheSwitch();
  void checkCrossCpuWakeQueuesOnTheWakeListAndSendsTheIpi();
  void checkTraceInfoWorksOnAKpath();
  void checkFileServerPathsRunTheirFileSystemCode();
  void checkNetworkPathsRunTheirSocketCode();
  void checkChatBatchesMoveEveryMessageInOneCall();
  void checkDiskReadCopiesOneKibFromThePageCache();
  void checkWritebackSubmitsItsFourDirtyPages();
  void checkShellExecsTheProgramWithoutForking();
  static inline std::string skip_;
  static inline fs::path cache_;
  static inline std::string manifest_;
};

void KpathBoot::checkEveryPathOfTheProbeHasItsInstances() {
  // Every marked path ran 10 times in the guest; on one CPU each region ends where it began, so all 10 arrive.
  // Exceptions: the ctxsw loop stops once the child has ended 10 regions; a region in which a tick preempted the
  // child before its yield is ended later, so 10 arrive unless the loop's cap hit first, hence at least half. The
  // timer path keeps the kernel runs of the 10 spins that a tick interrupted, at least one.
  for (const KpathInfo& k : kpaths()) {
    const auto list = instances(k.name);
    if (k.name == "resched_ipi") {
      // One wake-up per spin: at most one IPI instance each, and at least half of them (a tick between the wake-up
      // and the IPI may do the preemption instead, and that run does not start at the vector). Kernel work the probe
      // does not start (a kworker that a timer on CPU 0 wakes on CPU 1) can send CPU 1 a reschedule IPI of its own
      // during a spin, a real one into the spinner that is kept: up to 2 more (s19 CI2: 31 from 30 spins).
      EXPECT_GE(list.size(), 5u) << k.name;
      EXPECT_LE(list.size(), 12u) << k.name;
    } else if (k.name == "wake_ipi") {
      // One wake-up per region: at most one instance each; the IPI is sent unless the wake-up finds the idle loop
      // polling (the short stretch around HLT with TIF_POLLING_NRFLAG set), so at least half.
      EXPECT_GE(list.size(), 5u) << k.name;
      EXPECT_LE(list.size(), 10u) << k.name;
    } else if (k.excursion) {
      EXPECT_GE(list.size(), 1u) << k.name;
    } else if (k.name == "ctxsw") {
      EXPECT_GE(list.size(), 5u) << k.name;
      EXPECT_LE(list.size(), 10u) << k.name;
    } else if (k.name == "sh_c") {
      EXPECT_EQ(list.size(), 8u) << k.name;  // the probe runs at most 8 (about a million instructions each)
    } else {
      EXPECT_EQ(list.size(), 10u) << k.name;
    }
  }
}

void KpathBoot::checkNullSystemCallIsUserThenKernelThenUser() {
  // getppid(): glibc's syscall() wrapper in user mode, the kernel's entry, do_syscall_64, sys_getppid and the exit
  // work, then back. Linux 6.1 with mitigations=off runs about 150-300 kernel instructions for it; the band is wide
  // but two-sided (a recording of the wrong thing, e.g. a whole tick, is far outside it). An interrupt taken while
  // the call is in kernel mode stays in the instance (system_trace.hpp, removeUserModeInterrupts): a tick, ~2,600 or
  // more, can land in a 300-instruction call when the host is loaded (the guest's clock is the host's), and so can a
  // preemption on the way out (a woken kworker: __schedule, the other task, the switch back). The upper bound holds
  // for the instances with neither, and at least 3 of the 5 must be such.
  const std::uint64_t vectors[] = {symbol("asm_sysvec_apic_timer_interrupt"), symbol("asm_sysvec_reschedule_ipi"),
                                   symbol("asm_sysvec_call_function_single"), symbol("__schedule")};
  int plain = 0;
  for (int seed = 0; seed < 5; ++seed) {
    const auto t = instance("getppid", seed);
    ASSERT_FALSE(t.empty());
    EXPECT_LT(t.front().pc, kKernelHalf);
    EXPECT_LT(t.back().pc, kKernelHalf);
    const std::uint64_t kernel = kernelCount(t);
    EXPECT_GE(kernel, 60u) << "seed " << seed;
    if (std::none_of(std::begin(vectors), std::end(vectors), [&](std::uint64_t v) { return runs(t, v); })) {
      ++plain;
      EXPECT_LE(kernel, 1500u) << "seed " << seed;
    }
    // The kernel reads its per-CPU data and the task (kernel-half addresses) ...
    EXPECT_TRUE(std::any_of(t.begin(), t.end(), [](const Instr& i) {
      return i.pc >= kKernelHalf && i.loads[0].valid() && i.loads[0].addr >= kKernelHalf;
    }));
    // ... and enters with a transfer from user to kernel code that the record marks as taken.
    const auto entry = std::find_if(t.begin(), t.end(), [](const Instr& i) { return i.pc >= kKernelHalf; });
    ASSERT_NE(entry, t.begin());
    EXPECT_TRUE((entry - 1)->taken);
    EXPECT_EQ((entry - 1)->target, entry->pc);
  }
  EXPECT_GE(plain, 3);
}

void KpathBoot::checkWarmInstancesOfOnePathRunTheSameUserCode() {
  // The user part of getppid (the wrapper) is the same code every time; only the first, cold instance may take
  // page faults. So the user-mode instruction count of instances 1..9 is one number.
  const auto list = instances("getppid");
  ASSERT_GE(list.size(), 3u);
  std::map<std::uint64_t, int> userCounts;
  for (std::size_t k = 1; k < list.size(); ++k) {
    const auto& i = list[k].as_array();
    ++userCounts[i.at(1).to_number<std::uint64_t>() - i.at(2).to_number<std::uint64_t>()];
  }
  EXPECT_EQ(userCounts.size(), 1u);
}

void KpathBoot::checkPageFaultZeroesOneWholePage() {
  // The first write to an anonymous page makes the kernel allocate a page and clear it: all 4096 bytes of one
  // page-aligned kernel (direct-map) page are stored to, whatever the clearing routine (rep stosb / stosq).
  const auto t = instance("page_fault", 3);
  ASSERT_FALSE(t.empty());
  // Bytes of each kernel page that were stored to: the cleared page has every one of its 4096 bytes covered. (Not a
  // sum of store sizes: other kernel data in the same page may be written too, differently from boot to boot.)
  std::map<Addr, std::bitset<4096>> coveredPerPage;
  for (const Instr& i : t) {
    for (const MemRef& s : i.stores) {
      if (!s.valid() || i.pc < kKernelHalf || s.addr < kKernelHalf) continue;
      for (Addr a = s.addr; a < s.addr + s.size; ++a) coveredPerPage[a & ~Addr{4095}].set(a & 4095);
    }
  }
  std::size_t fullPages = 0;
  for (const auto& [page, covered] : coveredPerPage) fullPages += covered.all() ? 1 : 0;
  EXPECT_GE(fullPages, 1u);
  // The faulting user store runs once, after the handler: the region's last user record before the end is it.
  EXPECT_LT(t.back().pc, kKernelHalf);
  EXPECT_TRUE(t.back().stores[0].valid());
}

void KpathBoot::checkPipeRoundTripRunsTheOtherProcess() {
  // lat_pipe's round trip: two pipe writes, two reads, two context switches and the child's user code. So it runs
  // several times the kernel code of one write to a pipe nobody waits on, and it has more than one user run.
  const auto trip = instance("pipe_roundtrip", 1), write = instance("pipe_write", 1);
  EXPECT_GT(kernelCount(trip), 3 * kernelCount(write));
  int userRuns = 0;
  for (std::size_t i = 0; i < trip.size(); ++i) {
    if (trip[i].pc < kKernelHalf && (i == 0 || trip[i - 1].pc >= kKernelHalf)) ++userRuns;
  }
  EXPECT_GE(userRuns, 3);  // parent before, child in between, parent after
}

void KpathBoot::checkFsyncReachesTheDiskAndTheWriteDoesNot() {
  // fsync on ext4 must submit the file's data block to the block layer (blk_mq_submit_bio) and virtio-blk must queue
  // it (virtio_queue_rq, or virtio_queue_rqs for a plugged batch, in the module); a 1 KiB write() only fills the
  // page cache (delayed allocation), no I/O.
  const std::uint64_t submit = symbol("blk_mq_submit_bio"), queueOne = symbol("virtio_queue_rq"),
                      queueBatch = symbol("virtio_queue_rqs");
  for (int seed = 0; seed < 4; ++seed) {
    const auto sync = instance("fsync", seed), write = instance("disk_write", seed);
    ASSERT_FALSE(sync.empty());
    ASSERT_FALSE(write.empty());
    EXPECT_TRUE(runs(sync, submit)) << "seed " << seed;
    EXPECT_TRUE(runs(sync, queueOne) || runs(sync, queueBatch)) << "seed " << seed;
    EXPECT_FALSE(runs(write, submit)) << "seed " << seed;
    EXPECT_GT(kernelCount(sync), kernelCount(write)) << "seed " << seed;
    EXPECT_LT(sync.front().pc, kKernelHalf);  // called from user mode
    EXPECT_LT(sync.back().pc, kKernelHalf);
  }
}

void KpathBoot::checkReschedIpiStartsAtItsVectorAndStopsBeforeTheSwitch() {
  const std::uint64_t vector = symbol("asm_sysvec_reschedule_ipi"), schedule = symbol("__schedule");
  const std::size_t n = instances("resched_ipi").size();
  ASSERT_GE(n, 1u);
  for (std::size_t seed = 0; seed < n; ++seed) {
    const auto t = instance("resched_ipi", static_cast<int>(seed));
    ASSERT_FALSE(t.empty());
    EXPECT_EQ(t.front().pc, vector);
    EXPECT_EQ(kernelCount(t), t.size());  // kernel mode only
    EXPECT_FALSE(runs(t, schedule));
  }
}

void KpathBoot::checkCrossCpuWakeRunsNoOtherProcess() {
  // The reader sleeps on the other CPU: the writer's CPU runs the write and the wake-up, and returns to the writer
  // (user code before and after the call: two user runs), where on one CPU the reader would run in between. The
  // wake-up's work comes on top of a plain write's: more kernel code than the shortest plain write (one plain write
  // may hold a tick, 4723 kernel records against a waking write's 1805 in one recording).
  std::uint64_t plain = ~0ull;
  for (std::size_t seed = 0; seed < instances("pipe_write").size(); ++seed) {
    plain = std::min(plain, kernelCount(instance("pipe_write", static_cast<int>(seed))));
  }
  for (int seed = 0; seed < 4; ++seed) {
    const auto t = instance("pipe_write_wake", seed);
    EXPECT_EQ(userRuns(t), 2) << "seed " << seed;
    EXPECT_GT(kernelCount(t), plain) << "seed " << seed;
  }
}

void KpathBoot::checkWakeIpiStartsAtItsVectorRunsTheWakeListAndStopsBeforeTheSwitch() {
  // The halted CPU's side: the call-function-single vector's entry first, kernel mode only, cut before __schedule
  // (the switch is the model's own cost), and in at least half of them sched_ttwu_pending (the wake list's enqueue):
  // one instance of 30 in one recording took the vector for another call and ran no sched_ttwu_pending.
  const std::uint64_t vector = symbol("asm_sysvec_call_function_single"), pending = symbol("sched_ttwu_pending"),
                      schedule = symbol("__schedule");
  const std::size_t n = instances("wake_ipi").size();
  ASSERT_GE(n, 1u);
  std::size_t enqueued = 0;
  for (std::size_t seed = 0; seed < n; ++seed) {
    const auto t = instance("wake_ipi", static_cast<int>(seed));
    ASSERT_FALSE(t.empty());
    EXPECT_EQ(t.front().pc, vector) << "seed " << seed;
    EXPECT_EQ(kernelCount(t), t.size()) << "seed " << seed;
    EXPECT_FALSE(runs(t, schedule)) << "seed " << seed;
    enqueued += runs(t, pending);
  }
  EXPECT_GE(2 * enqueued, n);
}

void KpathBoot::checkCrossCpuWakeQueuesOnTheWakeListAndSendsTheIpi() {
  // The waker's side of the same wake-up (its reader asleep on CPU 1, which is halted): the write queues the reader
  // on the wake list (send_call_function_single_ipi) and writes the APIC (native_send_call_func_single_ipi). Not
  // always: if CPU 1 runs something at that moment (nr_running > 0: no wake list) or the reader has not reached its
  // sleep after the probe's 1 ms (a loaded host slows the guest), neither runs; all 30 instances of one recording
  // ran both, 2 of 10 draws of another neither. So at least half, and the APIC write never without the queueing.
  const std::uint64_t queue = symbol("send_call_function_single_ipi"), apic = symbol("native_send_call_func_single_ipi");
  const std::size_t n = instances("pipe_write_wake").size();
  ASSERT_GE(n, 1u);
  std::size_t sent = 0;
  for (std::size_t seed = 0; seed < n; ++seed) {
    const auto t = instance("pipe_write_wake", static_cast<int>(seed));
    const bool queued = runs(t, queue), apicWrite = runs(t, apic);
    EXPECT_TRUE(queued || !apicWrite) << "seed " << seed;
    sent += queued && apicWrite;
  }
  EXPECT_GE(2 * sent, n);
}

void KpathBoot::checkSameSeedSameInstance() {
  EXPECT_EQ(instance("read", 7), instance("read", 7));
  const auto src = openTrace("kpath:fork,seed=2");
  EXPECT_EQ(src->describe().rfind("kpath:fork#", 0), 0u) << src->describe();
}

void KpathBoot::checkTraceInfoWorksOnAKpath() {
  const std::string cmd = std::string(SMTLAB_BINARY) + " trace info kpath:getppid >/dev/null 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
}

void KpathBoot::checkFileServerPathsRunTheirFileSystemCode() {
  // Each of dbench's operations on the ext4 disk must run the VFS or ext4 function that serves that call in Linux 6.1
  // (fs/ext4/file.c, fs/ext4/namei.c, fs/ext4/dir.c, fs/locks.c, fs/open.c), reached through the file or inode
  // operations (so never inlined), from user mode and back; and no path runs another's entry point (a 4 KiB pread
  // does not write, a pwrite does not read).
  const std::vector<std::pair<std::string, std::string>> paths = {
      {"file_open", "ext4_file_open"},     {"file_read", "ext4_file_read_iter"},
      {"file_write", "ext4_file_write_iter"}, {"file_lock", "fcntl_setlk"},
      {"file_close", "filp_close"},        {"file_create", "ext4_create"},
      {"rename", "ext4_rename2"},          {"getdents", "ext4_readdir"}};
  for (int seed = 0; seed < 4; ++seed) {
    for (const auto& [path, entry] : paths) {
      const auto t = instance(path, seed);
      ASSERT_FALSE(t.empty()) << path;
      EXPECT_TRUE(runs(t, symbol(entry))) << path << " seed " << seed;
      EXPECT_LT(t.front().pc, kKernelHalf) << path;
      EXPECT_LT(t.back().pc, kKernelHalf) << path;
    }
    EXPECT_FALSE(runs(instance("file_read", seed), symbol("ext4_file_write_iter"))) << "seed " << seed;
    EXPECT_FALSE(runs(instance("file_write", seed), symbol("ext4_file_read_iter"))) << "seed " << seed;
  }
}

void KpathBoot::checkNetworkPathsRunTheirSocketCode() {
  // LMbench 2's select on 10 TCP fds (probe_net.c): 10 dups of one socket in the write set, all writable, so
  // do_select's first pass polls each descriptor once through the socket's file operations (sock_poll -> the
  // protocol's poll, tcp_poll: both indirect calls, never inlined) and returns; 10 entries of each, where the
  // regular-file select runs none.
  const std::uint64_t doSelect = symbol("do_select"), sockPoll = symbol("sock_poll"), tcpPoll = symbol("tcp_poll");
  const auto entries = [](const std::vector<Instr>& t, std::uint64_t pc) {
    return std::count_if(t.begin(), t.end(), [&](const Instr& i) { return i.pc == pc; });
  };
  for (int seed = 0; seed < 4; ++seed) {
    const auto tcp = instance("select_tcp", seed), file = instance("select", seed);
    ASSERT_FALSE(tcp.empty());
    EXPECT_TRUE(runs(tcp, doSelect)) << "seed " << seed;
    EXPECT_EQ(entries(tcp, sockPoll), 10) << "seed " << seed;
    EXPECT_EQ(entries(tcp, tcpPoll), 10) << "seed " << seed;
    EXPECT_EQ(entries(file, tcpPoll), 0) << "seed " << seed;
    EXPECT_LT(tcp.front().pc, kKernelHalf);
    EXPECT_LT(tcp.back().pc, kKernelHalf);
  }
  // tbench's reply: the 4 KiB send runs tcp_sendmsg and its copy from the user buffer reads all 4096 bytes (kernel
  // loads from user addresses, counted once per byte), where the 16-byte send reads its 16 and the kernel reads no
  // other user memory for a send(), so fewer than 1 KiB; the 4 KiB recv runs tcp_recvmsg and its copy stores all
  // 4096 bytes into the user buffer, the 16-byte recv fewer than 1 KiB.
  const std::uint64_t sendmsg = symbol("tcp_sendmsg"), recvmsg = symbol("tcp_recvmsg");
  for (int seed = 0; seed < 4; ++seed) {
    const auto send4k = instance("tcp_send_4k", seed), recv4k = instance("tcp_recv_4k", seed);
    const auto send16 = instance("tcp_send", seed), recv16 = instance("tcp_recv", seed);
    ASSERT_FALSE(send4k.empty());
    ASSERT_FALSE(recv4k.empty());
    EXPECT_TRUE(runs(send4k, sendmsg)) << "seed " << seed;
    EXPECT_TRUE(runs(recv4k, recvmsg)) << "seed " << seed;
    EXPECT_FALSE(runs(send4k, recvmsg)) << "seed " << seed;  // nobody reads in the send's region
    EXPECT_GE(userBytes(send4k, false), 4096u) << "seed " << seed;
    EXPECT_LT(userBytes(send16, false), 1024u) << "seed " << seed;
    EXPECT_GE(userBytes(recv4k, true), 4096u) << "seed " << seed;
    EXPECT_LT(userBytes(recv16, true), 1024u) << "seed " << seed;
    for (const auto* t : {&send4k, &recv4k}) {
      EXPECT_LT(t->front().pc, kKernelHalf) << "seed " << seed;
      EXPECT_LT(t->back().pc, kKernelHalf) << "seed " << seed;
    }
  }
}

void KpathBoot::checkChatBatchesMoveEveryMessageInOneCall() {
  // chat's batches (probe_net.c, CHAT_BATCHES): the echo of B messages is one send() of B x 100 bytes, so its kernel
  // code loads those bytes of user memory, and never reads; the recv of B queued messages stores B x 100 bytes into
  // the user buffer in one tcp_recvmsg. Besides the copy the kernel touches little user-half memory (in a recording
  // of 2026-11-25, 9 of 420 instances of the sizes 2-8 add one 8-byte load, or two 8-byte stores in a recv, all at
  // one address outside the buffer, 0x37059ca8; not traced further), so fewer than one more message's 100 bytes: a
  // batch of B copies B messages, not B - 1 or B + 1. Lengths, in kernel records with rep iterations counted one by
  // one (docs/tracing.md): an instance may also run ACK and timer work that the loopback softirq happens to do (the
  // 16-byte tcp_send's median is longer than the 2-message echo's), in half the instances or more of some sizes in
  // some recordings, so the bounds use each size's shortest instance. A send of B copies (B - 2) x 100 bytes more
  // than a send of 2: at least that many records longer, and shorter than two such calls and that copy. A recv of B
  // copies B x 100 - 16 bytes more than the 16-byte recv, so it is at least that much longer than its shortest
  // instance; and it is shorter than the same B messages read two at a time in B / 2 calls plus one more call. Not
  // checked: that a batch is longer than the next smaller one; a recv's ACK, whose processing at the peer runs in the
  // same softirq, depends on the connection's state when the size was recorded (docs/tracing.md).
  const std::uint64_t sendmsg = symbol("tcp_sendmsg"), recvmsg = symbol("tcp_recvmsg");
  const auto entries = [](const std::vector<Instr>& t, std::uint64_t pc) {
    return std::count_if(t.begin(), t.end(), [&](const Instr& i) { return i.pc == pc; });
  };
  for (int b = 2; b <= 20; ++b) {
    const std::string send = "tcp_send_b" + std::to_string(b), recv = "tcp_recv_b" + std::to_string(b);
    const std::size_t bytes = static_cast<std::size_t>(b) * 100;
    for (int seed = 0; seed < 4; ++seed) {
      const auto s = instance(send, seed), r = instance(recv, seed);
      ASSERT_FALSE(s.empty()) << send;
      ASSERT_FALSE(r.empty()) << recv;
      EXPECT_EQ(entries(s, sendmsg), 1) << send << " seed " << seed;
      EXPECT_FALSE(runs(s, recvmsg)) << send << " seed " << seed;  // nobody reads in the send's region
      EXPECT_EQ(entries(r, recvmsg), 1) << recv << " seed " << seed;
      EXPECT_GE(userBytes(s, false), bytes) << send << " seed " << seed;
      EXPECT_LT(userBytes(s, false), bytes + 100) << send << " seed " << seed;
      EXPECT_GE(userBytes(r, true), bytes) << recv << " seed " << seed;
      EXPECT_LT(userBytes(r, true), bytes + 100) << recv << " seed " << seed;
      for (const auto* t : {&s, &r}) {
        EXPECT_LT(t->front().pc, kKernelHalf) << "seed " << seed;
        EXPECT_LT(t->back().pc, kKernelHalf) << "seed " << seed;
      }
    }
    const std::uint64_t sendOfTwo = minKernelRecords("tcp_send_b2"), copied = static_cast<std::uint64_t>(b - 2) * 100;
    EXPECT_GE(minKernelRecords(send), sendOfTwo + copied) << send;
    EXPECT_LT(minKernelRecords(send), 2 * sendOfTwo + copied) << send;
    EXPECT_GE(minKernelRecords(recv), minKernelRecords("tcp_recv") + bytes - 16) << recv;
    const std::uint64_t recvOfTwo = medianKernelRecords("tcp_recv_b2");
    EXPECT_LT(2 * minKernelRecords(recv), static_cast<std::uint64_t>(b + 2) * recvOfTwo) << recv;
  }
}

void KpathBoot::checkDiskReadCopiesOneKibFromThePageCache() {
  // AIM9 sync_disk_cp's read (probe_fs.c): read() of 1 KiB from a cached ext4 file goes through ext4's read_iter
  // (a file operation, never inlined) and copies the 1,024 bytes into the user buffer (kernel stores to user
  // addresses, counted once per byte): at least 1,024, and fewer than 2,048 (not a whole 4 KiB page; the kernel
  // writes no other user memory for a read). A page-cache hit submits nothing to the block layer.
  const auto userBytesStored = [](const std::vector<Instr>& t) {
    std::set<Addr> bytes;
    for (const Instr& i : t) {
      if (i.pc < kKernelHalf) continue;
      for (const MemRef& m : i.stores)
        if (m.valid() && m.addr < kKernelHalf)
          for (Addr a = m.addr; a < m.addr + m.size; ++a) bytes.insert(a);
    }
    return bytes.size();
  };
  const std::uint64_t readIter = symbol("ext4_file_read_iter"), submit = symbol("blk_mq_submit_bio");
  for (int seed = 0; seed < 4; ++seed) {
    const auto t = instance("disk_read", seed);
    ASSERT_FALSE(t.empty());
    EXPECT_TRUE(runs(t, readIter)) << "seed " << seed;
    EXPECT_FALSE(runs(t, submit)) << "seed " << seed;
    EXPECT_FALSE(runs(instance("read", seed), readIter)) << "seed " << seed;  // /dev/zero is no ext4 file
    EXPECT_GE(userBytesStored(t), 1024u) << "seed " << seed;
    EXPECT_LT(userBytesStored(t), 2048u) << "seed " << seed;
    EXPECT_LT(t.front().pc, kKernelHalf);
    EXPECT_LT(t.back().pc, kKernelHalf);
  }
}

void KpathBoot::checkWritebackSubmitsItsFourDirtyPages() {
  // The flusher's code (probe_fs.c): sync_file_range(SYNC_FILE_RANGE_WRITE) of 16 KiB that a pwrite dirtied just
  // before. do_writepages calls the address space's writepages once, ext4_writepages (an indirect call, so an
  // entry), which puts each of the 4 dirty pages of 4 KiB into the bio through ext4_bio_write_page (in
  // fs/ext4/page-io.c, called from inode.c: an entry per page, exactly 4); the bio goes to the block layer
  // (blk_mq_submit_bio: 1 to 4 bios for 4 pages) and virtio-blk queues it. The 1 KiB append of disk_write only
  // fills the page cache (delayed allocation): no write-back in it.
  const std::uint64_t doWritepages = symbol("do_writepages"), writepages = symbol("ext4_writepages"),
                      writePage = symbol("ext4_bio_write_page"), submit = symbol("blk_mq_submit_bio"),
                      queueOne = symbol("virtio_queue_rq"), queueBatch = symbol("virtio_queue_rqs");
  const auto entries = [](const std::vector<Instr>& t, std::uint64_t pc) {
    return std::count_if(t.begin(), t.end(), [&](const Instr& i) { return i.pc == pc; });
  };
  for (int seed = 0; seed < 4; ++seed) {
    const auto t = instance("writeback", seed);
    ASSERT_FALSE(t.empty());
    EXPECT_TRUE(runs(t, doWritepages)) << "seed " << seed;
    EXPECT_EQ(entries(t, writepages), 1) << "seed " << seed;
    EXPECT_EQ(entries(t, writePage), 4) << "seed " << seed;
    EXPECT_GE(entries(t, submit), 1) << "seed " << seed;
    EXPECT_LE(entries(t, submit), 4) << "seed " << seed;
    EXPECT_TRUE(runs(t, queueOne) || runs(t, queueBatch)) << "seed " << seed;
    EXPECT_FALSE(runs(instance("disk_write", seed), writepages)) << "seed " << seed;
    EXPECT_LT(t.front().pc, kKernelHalf);
    EXPECT_LT(t.back().pc, kKernelHalf);
  }
}

void KpathBoot::checkShellExecsTheProgramWithoutForking() {
  // LMbench's fork+/bin/sh -c child (probe.c): execve of /bin/sh -c "/probe --sh-end". Busybox ash runs the last
  // command of -c with EV_EXIT, so evalcommand execs it without forkshell: the region holds two execve entries (the
  // shell's, then ash's of the probe), no fork (kernel_clone), and ash's user code between them. That code starts with
  // the same static glibc start-up as the probe's own in kpath:execve (all of that instance's user records but the
  // few before its execve), then busybox's and ash's own start-up and the parse of one command: more user records
  // than the probe's whole execve instance, and (a band chosen an order of magnitude above a shell start-up of tens
  // of thousands of instructions) fewer than 500,000. After the second entry the probe starts up to its main, as in
  // kpath:execve: at least half of that instance's user records (the same program; the tunables' parse of the
  // environment, which ash passes on, only adds).
  const std::uint64_t execve = symbol("__x64_sys_execve"), clone = symbol("kernel_clone");
  for (int seed = 0; seed < 4; ++seed) {
    const auto t = instance("sh_c", seed), direct = instance("execve", seed);
    ASSERT_FALSE(t.empty());
    std::vector<std::size_t> entries;
    for (std::size_t i = 0; i < t.size(); ++i)
      if (t[i].pc == execve) entries.push_back(i);
    ASSERT_EQ(entries.size(), 2u) << "seed " << seed;
    EXPECT_FALSE(runs(t, clone)) << "seed " << seed;
    EXPECT_EQ(std::count_if(direct.begin(), direct.end(), [&](const Instr& i) { return i.pc == execve; }), 1)
        << "seed " << seed;
    const auto userIn = [&](std::size_t from, std::size_t to) {
      return static_cast<std::uint64_t>(
          std::count_if(t.begin() + static_cast<std::ptrdiff_t>(from), t.begin() + static_cast<std::ptrdiff_t>(to),
                        [](const Instr& i) { return i.pc < kKernelHalf; }));
    };
    const std::uint64_t directUser = direct.size() - kernelCount(direct);
    const std::uint64_t shell = userIn(entries[0], entries[1]), program = userIn(entries[1], t.size());
    EXPECT_GT(shell, directUser) << "seed " << seed;
    EXPECT_LT(shell, 500000u) << "seed " << seed;
    EXPECT_GE(2 * program, directUser) << "seed " << seed;
    EXPECT_LT(t.front().pc, kKernelHalf);
    EXPECT_LT(t.back().pc, kKernelHalf);
  }
}

// One test: ctest runs every test in a process of its own, and each process would boot the guest again.
TEST_F(KpathBoot, RecordedPathsAreWhatTheKernelMustRun) {
  {
    SCOPED_TRACE("EveryPathOfTheProbeHasItsInstances");
    checkEveryPathOfTheProbeHasItsInstances();
  }
  {
    SCOPED_TRACE("NullSystemCallIsUserThenKernelThenUser");
    checkNullSystemCallIsUserThenKernelThenUser();
  }
  {
    SCOPED_TRACE("WarmInstancesOfOnePathRunTheSameUserCode");
    checkWarmInstancesOfOnePathRunTheSameUserCode();
  }
  {
    SCOPED_TRACE("PageFaultZeroesOneWholePage");
    checkPageFaultZeroesOneWholePage();
  }
  {
    SCOPED_TRACE("PipeRoundTripRunsTheOtherProcess");
    checkPipeRoundTripRunsTheOtherProcess();
  }
  {
    SCOPED_TRACE("SameSeedSameInstance");
    checkSameSeedSameInstance();
  }
  {
    SCOPED_TRACE("TraceInfoWorksOnAKpath");
    checkTraceInfoWorksOnAKpath();
  }
  {
    SCOPED_TRACE("FsyncReachesTheDiskAndTheWriteDoesNot");
    checkFsyncReachesTheDiskAndTheWriteDoesNot();
  }
  {
    SCOPED_TRACE("ReschedIpiStartsAtItsVectorAndStopsBeforeTheSwitch");
    checkReschedIpiStartsAtItsVectorAndStopsBeforeTheSwitch();
  }
  {
    SCOPED_TRACE("CrossCpuWakeRunsNoOtherProcess");
    checkCrossCpuWakeRunsNoOtherProcess();
  }
  {
    SCOPED_TRACE("WakeIpiStartsAtItsVectorRunsTheWakeListAndStopsBeforeTheSwitch");
    checkWakeIpiStartsAtItsVectorRunsTheWakeListAndStopsBeforeTheSwitch();
  }
  {
    SCOPED_TRACE("CrossCpuWakeQueuesOnTheWakeListAndSendsTheIpi");
    checkCrossCpuWakeQueuesOnTheWakeListAndSendsTheIpi();
  }
  {
    SCOPED_TRACE("FileServerPathsRunTheirFileSystemCode");
    checkFileServerPathsRunTheirFileSystemCode();
  }
  {
    SCOPED_TRACE("NetworkPathsRunTheirSocketCode");
    checkNetworkPathsRunTheirSocketCode();
  }
  {
    SCOPED_TRACE("ChatBatchesMoveEveryMessageInOneCall");
    checkChatBatchesMoveEveryMessageInOneCall();
  }
  {
    SCOPED_TRACE("DiskReadCopiesOneKibFromThePageCache");
    checkDiskReadCopiesOneKibFromThePageCache();
  }
  {
    SCOPED_TRACE("WritebackSubmitsItsFourDirtyPages");
    checkWritebackSubmitsItsFourDirtyPages();
  }
  {
    SCOPED_TRACE("ShellExecsTheProgramWithoutForking");
    checkShellExecsTheProgramWithoutForking();
  }
}

}  // namespace
}  // namespace smtlab
