#include "smtlab/tracer/x86_decoder.hpp"

#include <algorithm>
#include <span>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "smtlab/common/error.hpp"

#ifdef SMTLAB_HAVE_CAPSTONE
#include <capstone/capstone.h>

#include "x86_uop_count.hpp"
#endif

namespace smtlab {

bool addAccess(Instr& r, bool store, Addr addr, std::uint8_t size) {
  for (MemRef& m : store ? std::span<MemRef>(r.stores) : std::span<MemRef>(r.loads)) {
    if (m.valid() && m.addr + m.size == addr && m.size + size <= 255) {
      m.size = static_cast<std::uint8_t>(m.size + size);
      return true;
    }
    if (!m.valid()) {
      m = MemRef{addr, size};
      return true;
    }
  }
  return false;
}

void applyDecoded(const X86Insn& d, Instr& r) {
  r.pc = d.pc;
  r.src = d.src;
  r.dst = d.dst;
  r.branch = d.branch;
  r.op = d.op;
  r.uops = d.uops;
  r.microcoded = d.microcoded;
  if (d.isMove) {
    if (r.hasLoad()) r.op = OpClass::Load;
    else if (r.hasStore()) r.op = OpClass::Store;
  }
}

#ifdef SMTLAB_HAVE_CAPSTONE

namespace {

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

// Maps a capstone register name to smtlab's register file: sub-registers to their full register, RIP and segment /
// control registers to none (they would only create false dependencies).
RegId mapRegName(std::string_view n) {
  static constexpr std::array<std::string_view, 8> kLegacy = {"ax", "cx", "dx", "bx", "sp", "bp", "si", "di"};
  for (int i = 0; i < 8; ++i) {
    const std::string_view b = kLegacy[i];
    if (n == b || (n.size() == 3 && (n[0] == 'e' || n[0] == 'r') && n.substr(1) == b)) return intReg(i);
    if (i < 4 && n.size() == 2 && n[0] == b[0] && (n[1] == 'l' || n[1] == 'h')) return intReg(i);  // al ah ...
    if (i >= 4 && n == fmt::format("{}l", b)) return intReg(i);                                     // spl bpl sil dil
  }
  if (n.size() >= 2 && n[0] == 'r' && n[1] >= '0' && n[1] <= '9') {  // r8 r8d r8w r8b .. r15
    int v = 0;
    std::size_t i = 1;
    for (; i < n.size() && n[i] >= '0' && n[i] <= '9'; ++i) v = v * 10 + (n[i] - '0');
    const std::string_view rest = n.substr(i);
    if (v >= 8 && v <= 15 && (rest.empty() || rest == "d" || rest == "w" || rest == "b")) return intReg(v);
    return kNoReg;
  }
  if (n == "eflags" || n == "flags" || n == "rflags") return kX86FlagsReg;
  for (std::string_view p : {"xmm", "ymm", "zmm"}) {
    if (startsWith(n, p) && n.size() > 3) {
      const int v = std::atoi(std::string(n.substr(3)).c_str());
      return v >= 0 && v < 32 ? fpReg(v) : kNoReg;
    }
  }
  if (startsWith(n, "st(") && n.size() == 5) return fpReg(32 + (n[3] - '0'));
  if (n.size() == 3 && startsWith(n, "st") && n[2] >= '0' && n[2] <= '7') return fpReg(32 + (n[2] - '0'));
  if (n.size() == 2 && n[0] == 'k' && n[1] >= '0' && n[1] <= '7') return fpReg(40 + (n[1] - '0'));
  return kNoReg;
}

bool isMoveMnemonic(std::string_view m) {
  if (startsWith(m, "rep ")) m.remove_prefix(4);
  for (std::string_view p : {"mov", "vmov", "cmov", "push", "pop", "lods", "stos", "lddqu", "vlddqu", "vbroadcast",
                             "vpbroadcast", "vmaskmov", "vpmaskmov", "xchg"}) {
    if (startsWith(m, p)) return true;
  }
  return false;
}

OpClass computeClass(std::string_view m, bool vector) {
  if (m == "mul" || m == "imul" || m == "mulx") return OpClass::IMul;
  if (m == "div" || m == "idiv") return OpClass::IDiv;
  if (m == "pause") return OpClass::Pause;
  if (startsWith(m, "nop") || startsWith(m, "endbr") || m == "fnop" || startsWith(m, "prefetch")) return OpClass::Nop;
  const bool x87 = m.size() > 1 && m[0] == 'f' && m != "fxsave" && m != "fxrstor";
  if (x87 || vector) {
    if (contains(m, "div") || contains(m, "sqrt") || contains(m, "rcp") || contains(m, "rsqrt")) return OpClass::FDiv;
    if (contains(m, "mul") || contains(m, "fmadd") || contains(m, "fmsub") || contains(m, "fnmadd") ||
        contains(m, "fnmsub") || contains(m, "madd") || contains(m, "dp")) {
      return OpClass::FMul;
    }
    return OpClass::FAdd;
  }
  return OpClass::Int;
}

}  // namespace

struct X86Decoder::Impl {
  csh handle = 0;
  cs_insn* insn = nullptr;
  std::vector<RegId> regMap;  // capstone register id -> smtlab register
};

bool x86DecoderAvailable() { return true; }

X86Decoder::X86Decoder() : impl_(std::make_unique<Impl>()) {
  if (cs_open(CS_ARCH_X86, CS_MODE_64, &impl_->handle) != CS_ERR_OK) throw TraceError("capstone: cs_open failed");
  cs_option(impl_->handle, CS_OPT_DETAIL, CS_OPT_ON);
  impl_->insn = cs_malloc(impl_->handle);
  impl_->regMap.assign(X86_REG_ENDING, kNoReg);
  for (unsigned r = 1; r < X86_REG_ENDING; ++r) {
    const char* name = cs_reg_name(impl_->handle, r);
    if (name) impl_->regMap[r] = mapRegName(name);
  }
}

X86Decoder::~X86Decoder() {
  if (impl_->insn) cs_free(impl_->insn, 1);
  if (impl_->handle) cs_close(&impl_->handle);
}

X86Insn X86Decoder::decode(Addr pc, std::span<const std::uint8_t> bytes) const {
  X86Insn out;
  out.pc = pc;
  out.length = static_cast<std::uint8_t>(bytes.size());
  const std::uint8_t* code = bytes.data();
  std::size_t size = bytes.size();
  std::uint64_t address = pc;
  cs_insn* in = impl_->insn;
  if (!cs_disasm_iter(impl_->handle, &code, &size, &address, in)) {
    out.valid = false;
    out.text = "(bad)";
    return out;
  }
  out.length = static_cast<std::uint8_t>(in->size);
  const std::string_view mnem = in->mnemonic;
  out.text = fmt::format("{} {}", in->mnemonic, in->op_str);
  const cs_x86& x = in->detail->x86;
  out.isRep = x.prefix[0] == X86_PREFIX_REP || x.prefix[0] == X86_PREFIX_REPNE;
  // Capstone prints "rep movsb" etc. as one mnemonic; the base mnemonic follows the prefix.
  std::string_view base = mnem;
  for (std::string_view p : {"rep ", "repe ", "repne ", "repz ", "repnz ", "lock ", "bnd ", "notrack "}) {
    if (startsWith(base, p)) base.remove_prefix(p.size());
  }
  if (!out.isRep || !(startsWith(base, "movs") || startsWith(base, "stos") || startsWith(base, "lods") ||
                      startsWith(base, "cmps") || startsWith(base, "scas") || startsWith(base, "ins") ||
                      startsWith(base, "outs"))) {
    out.isRep = false;  // f3 is also a mandatory prefix of many SSE ops and of pause
  }

  bool vector = false;
  bool directOperand = false;
  Addr immTarget = 0;
  for (int i = 0; i < x.op_count; ++i) {
    const cs_x86_op& op = x.operands[i];
    if (op.type == X86_OP_REG) {
      const RegId r = impl_->regMap[op.reg];
      if (r != kNoReg && r >= kIntRegs && r < fpReg(32)) vector = true;
    } else if (op.type == X86_OP_IMM) {
      directOperand = true;
      immTarget = static_cast<Addr>(op.imm);
    }
  }

  // Control flow.
  bool isJump = false, isCall = false, isRet = false;
  for (int g = 0; g < in->detail->groups_count; ++g) {
    switch (in->detail->groups[g]) {
      case X86_GRP_JUMP: isJump = true; break;
      case X86_GRP_CALL: isCall = true; break;
      case X86_GRP_RET: isRet = true; break;
      default: break;
    }
  }
  if (isRet) {
    out.op = OpClass::Return;
    out.branch = BranchKind::Return;
  } else if (isCall) {
    out.op = OpClass::Call;
    out.branch = directOperand ? BranchKind::DirectCall : BranchKind::IndirectCall;
    if (directOperand) out.target = immTarget;
  } else if (isJump) {
    if (in->id == X86_INS_JMP) {
      out.op = directOperand ? OpClass::Jump : OpClass::IndirectJump;
      out.branch = directOperand ? BranchKind::DirectJump : BranchKind::IndirectJump;
    } else {
      out.op = OpClass::Branch;
      out.branch = BranchKind::Conditional;
    }
    if (directOperand) out.target = immTarget;
  } else {
    out.isMove = isMoveMnemonic(base);
    out.op = computeClass(base, vector);
    if (out.isMove && out.op != OpClass::Nop) out.op = vector ? OpClass::FAdd : OpClass::Int;
  }

  // Registers, sub-registers folded into their full register; non-flag registers first so that flags are the ones
  // dropped when an instruction touches more than the record holds.
  cs_regs readRegs, writeRegs;
  std::uint8_t nRead = 0, nWrite = 0;
  if (cs_regs_access(impl_->handle, in, readRegs, &nRead, writeRegs, &nWrite) != CS_ERR_OK) nRead = nWrite = 0;
  // Zeroing idioms (xor r,r; sub r,r; pxor x,x ...) do not depend on the register's old value.
  bool zeroing = false;
  if (x.op_count == 2 && x.operands[0].type == X86_OP_REG && x.operands[1].type == X86_OP_REG &&
      x.operands[0].reg == x.operands[1].reg) {
    zeroing = base == "xor" || base == "sub" || base == "pxor" || base == "xorps" || base == "xorpd" ||
              base == "psubb" || base == "psubd" || base == "psubq" || base == "pcmpgtd";
  } else if (x.op_count == 3 && x.operands[1].type == X86_OP_REG && x.operands[2].type == X86_OP_REG &&
             x.operands[1].reg == x.operands[2].reg) {
    zeroing = base == "vpxor" || base == "vxorps" || base == "vxorpd" || base == "vpxord" || base == "vpxorq";
  }
  auto fill = [&](const cs_regs& regs, std::uint8_t n, auto& slots) {
    std::size_t k = 0;
    for (int pass = 0; pass < 2; ++pass) {
      for (std::uint8_t i = 0; i < n; ++i) {
        const RegId r = regs[i] < impl_->regMap.size() ? impl_->regMap[regs[i]] : kNoReg;
        if (r == kNoReg || ((r == kX86FlagsReg) != (pass == 1))) continue;
        if (std::find(slots.begin(), slots.begin() + static_cast<std::ptrdiff_t>(k), r) !=
            slots.begin() + static_cast<std::ptrdiff_t>(k)) {
          continue;
        }
        if (k < slots.size()) slots[k++] = r;
      }
    }
  };
  if (!zeroing) fill(readRegs, nRead, out.src);
  fill(writeRegs, nWrite, out.dst);
  const X86UopCount uops = x86UopCount(*in, out.isRep);
  out.uops = uops.uops;
  out.microcoded = uops.microcoded;
  return out;
}

#else  // no capstone

struct X86Decoder::Impl {};
bool x86DecoderAvailable() { return false; }
X86Decoder::X86Decoder() {
  throw TraceError("this smtlab was built without capstone (Debian: apt-get install libcapstone-dev, then rebuild); "
                   "it cannot decode x86 instructions");
}
X86Decoder::~X86Decoder() = default;
X86Insn X86Decoder::decode(Addr, std::span<const std::uint8_t>) const { return {}; }

#endif

}  // namespace smtlab
