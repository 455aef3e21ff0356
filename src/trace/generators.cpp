#include "smtlab/trace/generators.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "generator_spec.hpp"
#include "smtlab/common/error.hpp"
#include "smtlab/common/short_quote.hpp"

namespace smtlab {
namespace {

constexpr std::uint64_t kLine = 64;
// Permutation generators keep 4 bytes per line: 4 GiB of footprint costs 256 MiB of host memory.
constexpr std::uint64_t kMaxPermFootprint = 4ull << 30;
constexpr std::uint64_t kMaxFootprint = 1ull << 40;
constexpr std::uint64_t kSlowOrderLines = 1ull << 24;
constexpr RegId kNeverWritten60 = intReg(60);
constexpr RegId kNeverWritten62 = intReg(62);

// Everything the generators share: the position, the instruction budget, the code-address loop and the per-record
// random stream. Subclasses fill a batch in one virtual call, so the per-record work is a tight loop.
class Generator : public TraceSource {
 public:
  Generator(GeneratorSpec& spec, bool usesBody, std::uint64_t defaultBody = 64) : spec_(spec.text()) {
    seed_ = spec.integer("seed", 1, 0, ~std::uint64_t{0});
    count_ = spec.count("count", 1000000);
    if (usesBody) body_ = spec.integer("body", defaultBody, 1, 1u << 24);
    rng_ = SplitMix64(seed_ ^ kGenRecordStreamSalt);
  }

  std::size_t read(std::span<Instr> out) final {
    std::size_t n = out.size();
    if (count_ != 0) n = static_cast<std::size_t>(std::min<std::uint64_t>(n, count_ - index_));
    if (n == 0) return 0;
    generate(out.data(), n);
    index_ += n;
    return n;
  }
  void rewind() final {
    index_ = 0;
    slot_ = 0;
    rng_ = SplitMix64(seed_ ^ kGenRecordStreamSalt);
    reset();
  }
  std::string describe() const final { return spec_; }
  std::optional<std::uint64_t> length() const final {
    if (count_ == 0) return std::nullopt;
    return count_;
  }

 protected:
  // Fills out[0..n) with records index_ .. index_+n-1.
  virtual void generate(Instr* out, std::size_t n) = 0;
  // Resets the subclass's own stream state for rewind().
  virtual void reset() {}

  // The pc of the next record in the body loop: kGenCodeBase + 4 * (index mod body).
  Addr nextPc() {
    const Addr pc = kGenCodeBase + 4 * slot_;
    if (++slot_ == body_) slot_ = 0;
    return pc;
  }

  std::string spec_;
  std::uint64_t seed_ = 1;
  std::uint64_t count_ = 0;
  std::uint64_t index_ = 0;
  std::uint64_t body_ = 64;
  std::uint64_t slot_ = 0;
  SplitMix64 rng_{0};
};

// Copied rather than value-initialised: g++ builds Instr{} on the stack and reloads it unaligned, which stalls
// store forwarding and halved the generators' speed.
const Instr kBlank{};

inline void setOp(Instr& r, Addr pc, OpClass op, RegId dst, RegId src) {
  r = kBlank;
  r.pc = pc;
  r.op = op;
  r.dst[0] = dst;
  r.src[0] = src;
}

// ---------------------------------------------------------------------------------------------------------------

class AluGenerator final : public Generator {
 public:
  explicit AluGenerator(GeneratorSpec& spec) : Generator(spec, true) {}

 private:
  void generate(Instr* out, std::size_t n) override {
    for (std::size_t k = 0; k < n; ++k) {
      const std::uint64_t i = index_ + k;
      setOp(out[k], nextPc(), OpClass::Int, intReg(static_cast<int>(i & 15)), kNeverWritten60);
    }
  }
};

class FpGenerator final : public Generator {
 public:
  explicit FpGenerator(GeneratorSpec& spec) : Generator(spec, true) {}

 private:
  void generate(Instr* out, std::size_t n) override {
    for (std::size_t k = 0; k < n; ++k) {
      const std::uint64_t i = index_ + k;
      setOp(out[k], nextPc(), (i & 1) ? OpClass::FMul : OpClass::FAdd, fpReg(static_cast<int>(i & 15)), fpReg(60));
    }
  }
};

// Walks a random single-cycle permutation of the 64-byte lines of a footprint.
class LineCycle {
 public:
  LineCycle() = default;
  LineCycle(const std::string& generator, std::uint64_t footprint, std::uint64_t seed, std::uint64_t maxLines) {
    SplitMix64 rng(seed);
    const std::uint64_t lines = maxLines > 0 ? std::min(footprint / kLine, maxLines) : footprint / kLine;
    // Ordering 2^24 lines (1 GiB) takes seconds before the first instruction (about 4 s per GiB on a 2-core VM), so
    // a large footprint says what it is doing and how long it took.
    const bool slow = lines >= kSlowOrderLines;
    const auto start = std::chrono::steady_clock::now();
    if (slow)
      fmt::print(stderr, "smtlab: gen:{}: putting the {} lines of a {} MiB footprint in a random order before the first "
                 "instruction ...\n", generator, lines, lines * kLine >> 20);
    order_ = cyclicLineOrder(lines, rng);
    if (slow)
      fmt::print(stderr, "smtlab: gen:{}: ordered in {:.1f} s\n", generator,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  Addr next() {
    const Addr a = kGenDataBase + kLine * order_[pos_];
    if (++pos_ == order_.size()) pos_ = 0;
    return a;
  }
  void reset() { pos_ = 0; }

 private:
  std::vector<std::uint32_t> order_;
  std::size_t pos_ = 0;
};

std::uint64_t lineFootprint(GeneratorSpec& spec, std::uint64_t def, std::uint64_t max) {
  const std::uint64_t f = spec.size("footprint", def, kLine, max);
  if (f % kLine != 0) spec.fail("footprint", fmt::format("{} bytes is not a multiple of the 64-byte line", f));
  return f;
}

class ChainGenerator final : public Generator {
 public:
  explicit ChainGenerator(GeneratorSpec& spec) : Generator(spec, true) {
    static const std::vector<std::string_view> kOps = {"int", "imul", "idiv", "fadd", "fmul", "fdiv", "load"};
    static constexpr OpClass kOpClasses[] = {OpClass::Int,  OpClass::IMul, OpClass::IDiv, OpClass::FAdd,
                                             OpClass::FMul, OpClass::FDiv, OpClass::Load};
    op_ = kOpClasses[spec.choice("op", "int", kOps)];
    const std::uint64_t footprint = lineFootprint(spec, 4096, kMaxPermFootprint);
    reg_ = (op_ == OpClass::FAdd || op_ == OpClass::FMul || op_ == OpClass::FDiv) ? fpReg(1) : intReg(1);
    if (op_ == OpClass::Load) lines_ = LineCycle(spec.name(), footprint, seed_, spec.maxCycleLines());
  }

 private:
  void generate(Instr* out, std::size_t n) override {
    for (std::size_t k = 0; k < n; ++k) {
      setOp(out[k], nextPc(), op_, reg_, reg_);
      if (op_ == OpClass::Load) out[k].loads[0] = MemRef{lines_.next(), 8};
    }
  }
  void reset() override { lines_.reset(); }

  OpClass op_;
  RegId reg_;
  LineCycle lines_;
};

class ChaseGenerator final : public Generator {
 public:
  explicit ChaseGenerator(GeneratorSpec& spec) : Generator(spec, true) {
    const std::uint64_t footprint = lineFootprint(spec, 64ull << 20, kMaxPermFootprint);
    work_ = spec.integer("work", 0, 0, 1u << 20);
    lines_ = LineCycle(spec.name(), footprint, seed_, spec.maxCycleLines());
  }

 private:
  void generate(Instr* out, std::size_t n) override {
    for (std::size_t k = 0; k < n; ++k) {
      Instr& r = out[k];
      if (q_ == 0) {
        setOp(r, nextPc(), OpClass::Load, intReg(1), intReg(1));
        r.loads[0] = MemRef{lines_.next(), 8};
      } else {
        setOp(r, nextPc(), OpClass::Int, intReg(2 + static_cast<int>((q_ - 1) % 14)), kNeverWritten60);
      }
      if (++q_ > work_) q_ = 0;
    }
  }
  void reset() override {
    lines_.reset();
    q_ = 0;
  }

  std::uint64_t work_ = 0;
  std::uint64_t q_ = 0;  // position in the (load, work ints) group
  LineCycle lines_;
};

class StreamGenerator final : public Generator {
 public:
  explicit StreamGenerator(GeneratorSpec& spec) : Generator(spec, true) {
    footprint_ = lineFootprint(spec, 64ull << 20, kMaxFootprint);
    storeEvery_ = spec.integer("store_every", 0, 0, ~std::uint64_t{0} >> 1);
  }

 private:
  void generate(Instr* out, std::size_t n) override {
    for (std::size_t k = 0; k < n; ++k) {
      Instr& r = out[k];
      const Addr pc = nextPc();
      if (storeEvery_ != 0 && ++sinceStore_ == storeEvery_) {
        sinceStore_ = 0;
        setOp(r, pc, OpClass::Store, kNoReg, kNeverWritten62);
        r.stores[0] = MemRef{kGenDataBase + footprint_ + storeOffset_, 8};
        storeOffset_ += 8;
        if (storeOffset_ == footprint_) storeOffset_ = 0;
      } else {
        setOp(r, pc, OpClass::Load, intReg(static_cast<int>(loads_ & 7)), kNeverWritten62);
        r.loads[0] = MemRef{kGenDataBase + loadOffset_, 8};
        ++loads_;
        loadOffset_ += 8;
        if (loadOffset_ == footprint_) loadOffset_ = 0;
      }
    }
  }
  void reset() override { loads_ = loadOffset_ = storeOffset_ = sinceStore_ = 0; }

  std::uint64_t footprint_ = 0;
  std::uint64_t storeEvery_ = 0;
  std::uint64_t loads_ = 0, loadOffset_ = 0, storeOffset_ = 0, sinceStore_ = 0;
};

class BranchyGenerator final : public Generator {
 public:
  explicit BranchyGenerator(GeneratorSpec& spec) : Generator(spec, false) {
    work_ = spec.integer("work", 3, 0, 1u << 16);
    branches_ = spec.integer("branches", 16, 1, 1u << 16);
    taken_ = spec.real("predictability", 0.5, 0.0, 1.0);
    stride_ = 4 * work_ + 64;
  }

 private:
  void generate(Instr* out, std::size_t n) override {
    for (std::size_t k = 0; k < n; ++k) {
      Instr& r = out[k];
      const Addr pc = kGenCodeBase + block_ * stride_ + 4 * q_;
      if (q_ < work_) {
        setOp(r, pc, OpClass::Int, intReg(2 + static_cast<int>(q_ % 14)), kNeverWritten60);
        ++q_;
      } else {
        setOp(r, pc, OpClass::Branch, kNoReg, kNeverWritten60);
        r.branch = BranchKind::Conditional;
        r.taken = rng_.uniform() < taken_;
        r.target = pc + 64;
        q_ = 0;
        if (++block_ == branches_) block_ = 0;
      }
    }
  }
  void reset() override { q_ = block_ = 0; }

  std::uint64_t work_, branches_, stride_;
  double taken_;
  std::uint64_t q_ = 0, block_ = 0;
};

class SpinGenerator final : public Generator {
 public:
  explicit SpinGenerator(GeneratorSpec& spec) : Generator(spec, false) {
    pause_ = spec.integer("pause", 0, 0, 1) != 0;
  }

 private:
  void generate(Instr* out, std::size_t n) override {
    const std::uint64_t len = pause_ ? 4 : 3;
    for (std::size_t k = 0; k < n; ++k) {
      Instr& r = out[k];
      const Addr pc = kGenCodeBase + 4 * q_;
      switch (q_ + (pause_ ? 0 : 1)) {
        case 0: setOp(r, pc, OpClass::Pause, kNoReg, kNoReg); break;
        case 1:
          setOp(r, pc, OpClass::Load, intReg(1), kNeverWritten62);
          r.loads[0] = MemRef{kGenDataBase, 8};
          break;
        case 2: setOp(r, pc, OpClass::Int, intReg(2), intReg(1)); break;
        default:
          setOp(r, pc, OpClass::Branch, kNoReg, intReg(2));
          r.branch = BranchKind::Conditional;
          r.taken = true;
          r.target = kGenCodeBase;
          break;
      }
      if (++q_ == len) q_ = 0;
    }
  }
  void reset() override { q_ = 0; }

  bool pause_ = false;
  std::uint64_t q_ = 0;
};

// A synthetic integer program; see docs/traces.md "mix" for the exact definition.
class MixGenerator final : public Generator {
 public:
  static constexpr int kRotating = 31;  // destinations rotate over r1..r31 (f1..f31 for fp ops)

  explicit MixGenerator(GeneratorSpec& spec) : Generator(spec, true, 256) {
    const double load = spec.real("load", 0.25, 0, 1);
    const double store = spec.real("store", 0.10, 0, 1);
    const double branch = spec.real("branch", 0.12, 0, 1);
    const double imul = spec.real("imul", 0.02, 0, 1);
    const double fp = spec.real("fp", 0.0, 0, 1);
    if (load + store + branch + imul + fp > 1.0 + 1e-12) {
      spec.fail("load", "the fractions load + store + branch + imul + fp exceed 1");
    }
    cut_ = {load, load + store, load + store + branch, load + store + branch + imul,
            load + store + branch + imul + fp};
    const double dep = spec.real("dep", 4.0, 1.0, 1e9);
    footprint_ = lineFootprint(spec, 1ull << 20, kMaxFootprint);
    hot_ = spec.real("hot", 0.9, 0.0, 1.0);
    // The hot region (whole KiB) lies inside the footprint: when the two conflict, name both values and which one was
    // a default, rather than a range such as [1, 0] computed from the other key.
    if (footprint_ < 1024) {
      spec.fail("footprint", fmt::format("{} bytes is smaller than the smallest hot region (hot_kb = 1, i.e. 1 KiB); "
                                         "gen:mix needs footprint >= 1k",
                                         footprint_));
    }
    const std::uint64_t hotKb = spec.integer("hot_kb", 16, 1, kMaxFootprint / 1024);
    if (hotKb > footprint_ / 1024) {
      spec.fail("hot_kb", fmt::format("the hot region of {} KiB{} is larger than footprint = {} KiB: give hot_kb <= {} "
                                      "or a larger footprint",
                                      hotKb, spec.has("hot_kb") ? "" : " (the default)", footprint_ / 1024,
                                      footprint_ / 1024));
    }
    hotBytes_ = hotKb * 1024;
    taken_ = spec.real("predictability", 0.95, 0.0, 1.0);
    // Inverse CDF of the geometric distance, truncated at kRotating with the tail given to the last entry.
    const double p = 1.0 / dep;
    for (int d = 1; d <= kRotating; ++d) cdf_[d - 1] = 1.0 - std::pow(1.0 - p, d);
    cdf_[kRotating - 1] = 2.0;  // above every uniform() value
    for (int b = 0; b < kBuckets; ++b) {
      const double lo = static_cast<double>(b) / kBuckets, hi = static_cast<double>(b + 1) / kBuckets;
      int d = 1;
      while (lo >= cdf_[d - 1]) ++d;
      bucketDistance_[b] = static_cast<std::uint8_t>(hi <= cdf_[d - 1] ? d : 0);
    }
    reset();
  }

 private:
  RegId source() {
    // Equal to "the smallest d with uniform() < cdf_[d-1]"; the bucket table skips the scan (and its branch
    // mispredictions) for the ~97% of uniform values whose whole 1/1024 bucket maps to one distance.
    const std::uint64_t m = rng_.next() >> 11;
    int d = bucketDistance_[m >> 43];
    if (d == 0) {
      const double u = static_cast<double>(m) * 0x1.0p-53;
      d = 1;
      while (u >= cdf_[d - 1]) ++d;
    }
    if (static_cast<std::uint64_t>(d) > writers_) return kNeverWritten62;
    return written_[(writers_ - static_cast<std::uint64_t>(d)) & 31];
  }
  Addr address() {
    if (rng_.uniform() < hot_ || hotBytes_ == footprint_) return kGenDataBase + 8 * rng_.below(hotBytes_ / 8);
    return kGenDataBase + hotBytes_ + 8 * rng_.below((footprint_ - hotBytes_) / 8);
  }
  void write(Instr& r, bool fp) {
    const int n = 1 + static_cast<int>(writers_ % kRotating);
    const RegId reg = fp ? fpReg(n) : intReg(n);
    r.dst[0] = reg;
    written_[writers_ & 31] = reg;
    ++writers_;
  }

  void generate(Instr* out, std::size_t n) override {
    for (std::size_t k = 0; k < n; ++k) {
      Instr& r = out[k];
      r = kBlank;
      r.pc = nextPc();
      const double u = rng_.uniform();
      if (u < cut_[0]) {
        r.op = OpClass::Load;
        r.src[0] = source();
        r.loads[0] = MemRef{address(), 8};
        write(r, false);
      } else if (u < cut_[1]) {
        r.op = OpClass::Store;
        r.src[0] = source();
        r.src[1] = source();
        r.stores[0] = MemRef{address(), 8};
      } else if (u < cut_[2]) {
        r.op = OpClass::Branch;
        r.branch = BranchKind::Conditional;
        r.src[0] = source();
        r.taken = rng_.uniform() < taken_;
        r.target = r.pc + 64;
      } else {
        const bool fp = u >= cut_[3] && u < cut_[4];
        r.op = u < cut_[3] ? OpClass::IMul : fp ? ((index_ + k) & 1 ? OpClass::FMul : OpClass::FAdd) : OpClass::Int;
        r.src[0] = source();
        r.src[1] = source();
        write(r, fp);
      }
    }
  }
  void reset() override {
    writers_ = 0;
    written_.fill(kNeverWritten62);
  }

  std::array<double, 5> cut_{};
  static constexpr int kBuckets = 1024;
  std::array<double, kRotating> cdf_{};
  std::array<std::uint8_t, kBuckets> bucketDistance_{};  // distance for a whole bucket of uniform values, or 0
  std::uint64_t footprint_, hotBytes_;
  double hot_, taken_;
  std::uint64_t writers_ = 0;
  std::array<RegId, 32> written_{};  // destination of writer w at [w & 31]
};

template <class G>
std::unique_ptr<TraceSource> make(GeneratorSpec& spec) {
  return std::make_unique<G>(spec);
}

struct Entry {
  std::string_view name;
  std::unique_ptr<TraceSource> (*make)(GeneratorSpec&);
};
constexpr Entry kGenerators[] = {
    {"alu", make<AluGenerator>},       {"chain", make<ChainGenerator>},     {"fp", make<FpGenerator>},
    {"chase", make<ChaseGenerator>},   {"stream", make<StreamGenerator>},   {"branchy", make<BranchyGenerator>},
    {"spin", make<SpinGenerator>},     {"mix", make<MixGenerator>},
};

}  // namespace

std::vector<std::uint32_t> cyclicLineOrder(std::uint64_t n, SplitMix64& rng) {
  // Sattolo's algorithm gives a uniformly random permutation with exactly one cycle.
  std::vector<std::uint32_t> next(n);
  for (std::uint64_t i = 0; i < n; ++i) next[i] = static_cast<std::uint32_t>(i);
  for (std::uint64_t j = n; j-- > 1;) std::swap(next[j], next[rng.below(j)]);
  std::vector<std::uint32_t> order(n);
  std::uint32_t line = 0;
  for (std::uint64_t t = 0; t < n; ++t) {
    order[t] = line;
    line = next[line];
  }
  return order;
}

std::vector<std::string_view> generatorNames() {
  std::vector<std::string_view> names;
  for (const Entry& e : kGenerators) names.push_back(e.name);
  return names;
}

std::unique_ptr<TraceSource> makeGenerator(const std::string& text) { return makeGenerator(text, {}); }

std::unique_ptr<TraceSource> makeGenerator(const std::string& text, const GeneratorOptions& options) {
  GeneratorSpec spec(text, options.max_cycle_lines);
  for (const Entry& e : kGenerators) {
    if (e.name == spec.name()) {
      auto gen = e.make(spec);
      spec.finish();
      return gen;
    }
  }
  throw TraceError(fmt::format("generator spec {}: unknown generator {} (known: alu, chain, fp, chase, stream, "
                               "branchy, spin, mix)",
                               shortQuote(text), shortQuote(spec.name())));
}

}  // namespace smtlab
