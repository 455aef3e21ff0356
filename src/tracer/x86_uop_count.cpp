#include "x86_uop_count.hpp"

#ifdef SMTLAB_HAVE_CAPSTONE

#include <algorithm>
#include <string_view>

namespace smtlab {
namespace {

// The reference is one microarchitecture, Broadwell (the `broadwell` preset's i7-5557U), measured by uops.info
// ("uops" column: fused / unfused domain; the unfused count is the sum of its port column). Most forms follow the
// unfused-domain rule in x86UopCount below; the rows here are the forms that do not, each copied from that table.
// A form whose fused-domain count exceeds 4 is microcoded: Intel's optimization reference manual (Sandy Bridge and
// later front ends) has instructions of more than four micro-ops delivered by the microcode sequencer (MSROM).
enum class Form : std::uint8_t { Reg, Mem };
struct Row {
  x86_insn id;
  Form form;           // of the instruction's single (div, mul) or memory operand (xchg, xadd, cmpxchg)
  std::uint8_t size;   // operand size in bytes; 0: any
  std::uint8_t fused;
  std::uint8_t unfused;
};

constexpr Row kRows[] = {
    // DIV / IDIV (R8l, R16, R32, R64, M8, M16, M32, M64)
    {X86_INS_DIV, Form::Reg, 1, 9, 9},     {X86_INS_DIV, Form::Reg, 2, 11, 11},   {X86_INS_DIV, Form::Reg, 4, 10, 10},
    {X86_INS_DIV, Form::Reg, 8, 36, 32},   {X86_INS_DIV, Form::Mem, 1, 8, 8},     {X86_INS_DIV, Form::Mem, 2, 12, 12},
    {X86_INS_DIV, Form::Mem, 4, 11, 11},   {X86_INS_DIV, Form::Mem, 8, 36, 32},   {X86_INS_IDIV, Form::Reg, 1, 9, 9},
    {X86_INS_IDIV, Form::Reg, 2, 10, 10},  {X86_INS_IDIV, Form::Reg, 4, 9, 9},    {X86_INS_IDIV, Form::Reg, 8, 59, 57},
    {X86_INS_IDIV, Form::Mem, 1, 8, 8},    {X86_INS_IDIV, Form::Mem, 2, 11, 11},  {X86_INS_IDIV, Form::Mem, 4, 10, 10},
    {X86_INS_IDIV, Form::Mem, 8, 59, 57},
    // one-operand MUL / IMUL (rdx:rax = rax * op); the two- and three-operand IMUL forms follow the rule
    {X86_INS_MUL, Form::Reg, 1, 1, 1},     {X86_INS_MUL, Form::Reg, 2, 4, 4},     {X86_INS_MUL, Form::Reg, 4, 3, 3},
    {X86_INS_MUL, Form::Reg, 8, 2, 2},     {X86_INS_MUL, Form::Mem, 1, 1, 2},     {X86_INS_MUL, Form::Mem, 2, 4, 5},
    {X86_INS_MUL, Form::Mem, 4, 3, 4},     {X86_INS_MUL, Form::Mem, 8, 2, 3},     {X86_INS_IMUL, Form::Reg, 1, 1, 1},
    {X86_INS_IMUL, Form::Reg, 2, 4, 4},    {X86_INS_IMUL, Form::Reg, 4, 3, 3},    {X86_INS_IMUL, Form::Reg, 8, 2, 2},
    {X86_INS_IMUL, Form::Mem, 1, 1, 2},    {X86_INS_IMUL, Form::Mem, 2, 4, 5},    {X86_INS_IMUL, Form::Mem, 4, 3, 4},
    {X86_INS_IMUL, Form::Mem, 8, 2, 3},
    // exchanges (XCHG with memory is implicitly locked)
    {X86_INS_XCHG, Form::Reg, 0, 3, 3},    {X86_INS_XCHG, Form::Mem, 0, 8, 7},    {X86_INS_XADD, Form::Reg, 0, 3, 3},
    {X86_INS_XADD, Form::Mem, 0, 4, 5},    {X86_INS_CMPXCHG, Form::Reg, 0, 5, 5}, {X86_INS_CMPXCHG, Form::Mem, 0, 5, 6},
    // string ops, one iteration (MOVSB, STOSB, LODSB/W, LODSD/Q, CMPSB, SCASB; the other sizes alike)
    {X86_INS_MOVSB, Form::Mem, 0, 5, 5},   {X86_INS_MOVSW, Form::Mem, 0, 5, 5},   {X86_INS_MOVSD, Form::Mem, 0, 5, 5},
    {X86_INS_MOVSQ, Form::Mem, 0, 5, 5},   {X86_INS_STOSB, Form::Mem, 0, 3, 3},   {X86_INS_STOSW, Form::Mem, 0, 3, 3},
    {X86_INS_STOSD, Form::Mem, 0, 3, 3},   {X86_INS_STOSQ, Form::Mem, 0, 3, 3},   {X86_INS_LODSB, Form::Mem, 0, 3, 3},
    {X86_INS_LODSW, Form::Mem, 0, 3, 3},   {X86_INS_LODSD, Form::Mem, 0, 2, 2},   {X86_INS_LODSQ, Form::Mem, 0, 2, 2},
    {X86_INS_CMPSB, Form::Mem, 0, 5, 5},   {X86_INS_CMPSW, Form::Mem, 0, 5, 5},   {X86_INS_CMPSD, Form::Mem, 0, 5, 5},
    {X86_INS_CMPSQ, Form::Mem, 0, 5, 5},   {X86_INS_SCASB, Form::Mem, 0, 3, 3},   {X86_INS_SCASW, Form::Mem, 0, 3, 3},
    {X86_INS_SCASD, Form::Mem, 0, 3, 3},   {X86_INS_SCASQ, Form::Mem, 0, 3, 3},
    // system and serialising forms
    {X86_INS_CPUID, Form::Reg, 0, 37, 41}, {X86_INS_RDTSC, Form::Reg, 0, 13, 13}, {X86_INS_RDTSCP, Form::Reg, 0, 21, 21},
    {X86_INS_XGETBV, Form::Reg, 0, 8, 8},  {X86_INS_PAUSE, Form::Reg, 0, 6, 5},   {X86_INS_MFENCE, Form::Reg, 0, 3, 2},
    {X86_INS_LFENCE, Form::Reg, 0, 2, 0},  {X86_INS_LEAVE, Form::Reg, 0, 3, 3},   {X86_INS_BSWAP, Form::Reg, 8, 2, 2},
};
// Any other lock-prefixed read-modify-write (ADD_LOCK, AND_LOCK, OR_LOCK, SUB_LOCK, XOR_LOCK, INC_LOCK, DEC_LOCK,
// NEG_LOCK, NOT_LOCK, (M64, R64) and the other sizes): 8 fused, 7 unfused; LOCK XADD 9/8; LOCK CMPXCHG 10/9.
constexpr Row kLockedRmw{X86_INS_INVALID, Form::Mem, 0, 8, 7};
constexpr Row kLockedXadd{X86_INS_XADD, Form::Mem, 0, 9, 8};
constexpr Row kLockedCmpxchg{X86_INS_CMPXCHG, Form::Mem, 0, 10, 9};

constexpr bool isStringOp(unsigned id) {
  switch (id) {
    case X86_INS_MOVSB: case X86_INS_MOVSW: case X86_INS_MOVSD: case X86_INS_MOVSQ:
    case X86_INS_STOSB: case X86_INS_STOSW: case X86_INS_STOSD: case X86_INS_STOSQ:
    case X86_INS_LODSB: case X86_INS_LODSW: case X86_INS_LODSD: case X86_INS_LODSQ:
    case X86_INS_CMPSB: case X86_INS_CMPSW: case X86_INS_CMPSD: case X86_INS_CMPSQ:
    case X86_INS_SCASB: case X86_INS_SCASW: case X86_INS_SCASD: case X86_INS_SCASQ: return true;
    default: return false;
  }
}

X86UopCount fromRow(const Row& row, bool microcodedAnyway) {
  X86UopCount c;
  c.uops = static_cast<std::uint8_t>(std::max<unsigned>(row.unfused, 1));  // LFENCE: 0 port uops, still a slot
  c.microcoded = row.fused > 4 || microcodedAnyway;
  return c;
}

}  // namespace

X86UopCount x86UopCount(const cs_insn& insn, bool isRep) {
  const cs_x86& x = insn.detail->x86;
  const unsigned id = insn.id;
  bool hasMem = false, hasReg = false;
  for (int i = 0; i < x.op_count; ++i) {
    if (x.operands[i].type == X86_OP_MEM) {
      hasMem = true;
    } else if (x.operands[i].type == X86_OP_REG) {
      hasReg = true;
    }
  }
  // capstone names SSE2's scalar-double MOVSD / CMPSD like the string ops; the string forms have only memory
  // operands (MOVSD, CMPSD) where the SSE forms have an xmm register.
  const bool stringOp = isStringOp(id) && !((id == X86_INS_MOVSD || id == X86_INS_CMPSD) && hasReg);
  const bool locked = x.prefix[0] == X86_PREFIX_LOCK;

  if (locked && hasMem) {
    if (id == X86_INS_XADD) return fromRow(kLockedXadd, false);
    if (id == X86_INS_CMPXCHG) return fromRow(kLockedCmpxchg, false);
    return fromRow(kLockedRmw, false);
  }
  const bool oneOperand = x.op_count == 1;
  const bool sized = id == X86_INS_DIV || id == X86_INS_IDIV || id == X86_INS_MUL || id == X86_INS_IMUL;
  if (!sized || oneOperand) {
    const Form form = (stringOp || hasMem) ? Form::Mem : Form::Reg;
    const std::uint8_t size = x.op_count > 0 ? x.operands[0].size : 0;
    for (const Row& row : kRows) {
      if (row.id != id || row.form != form) continue;
      if (isStringOp(id) && !stringOp) continue;
      if (row.size != 0 && row.size != size) continue;
      return fromRow(row, stringOp && isRep);  // a rep string op runs from the sequencer whatever its count
    }
  }

  // The unfused-domain rule (uops.info, Broadwell): one uop for the work (ALU, branch, vector op) unless the
  // instruction only moves data, one per memory load (p23), two per memory store (store-address p237 + store-data
  // p4). ADD r,r 1; MOV r,m 1; ADD r,m 2; MOV m,r 2; ADD m,r 4; PUSH r 2; POP r 1; CALL rel 3; JMP m 2; RET 2.
  unsigned loads = 0, stores = 0;
  const bool noAccess = id == X86_INS_LEA || id == X86_INS_NOP;  // an address operand that is never accessed
  if (!noAccess) {
    for (int i = 0; i < x.op_count; ++i) {
      const cs_x86_op& op = x.operands[i];
      if (op.type != X86_OP_MEM) continue;
      const bool write = op.access & CS_AC_WRITE;
      const bool read = (op.access & CS_AC_READ) || !write;  // capstone leaves some accesses unset: a read
      loads += read ? 1 : 0;
      stores += write ? 1 : 0;
    }
  }
  // The stack accesses capstone does not list as operands.
  bool move = false;
  switch (id) {
    case X86_INS_PUSH: ++stores; move = true; break;
    case X86_INS_POP: ++loads; move = true; break;
    case X86_INS_CALL: ++stores; break;
    case X86_INS_RET: ++loads; break;
    default: break;
  }
  // Pure data movement: the load or store port does the whole job (MOVZX/MOVSX from memory included; a register
  // move or CMOV is one ALU uop). Prefetches are one load uop.
  const std::string_view m = insn.mnemonic;
  const bool prefetch = m.rfind("prefetch", 0) == 0;
  if (prefetch) {
    loads = 1;
    stores = 0;
  }
  const bool movLike = (m.rfind("mov", 0) == 0 || m.rfind("vmov", 0) == 0 || m.rfind("lddqu", 0) == 0 ||
                        m.rfind("vlddqu", 0) == 0 || m.rfind("vbroadcast", 0) == 0 || m.rfind("vpbroadcast", 0) == 0);
  if (movLike && (loads + stores) != 0) {
    // The direction of a move is its operand order (the destination first); capstone 4's access flags are wrong
    // for some SSE stores (movups [m], xmm comes out as a read).
    const bool toMemory = x.op_count > 0 && x.operands[0].type == X86_OP_MEM;
    loads = toMemory ? 0 : 1;
    stores = toMemory ? 1 : 0;
  }
  move = move || movLike || prefetch;
  const unsigned work = (move && (loads + stores) != 0) ? 0 : 1;
  X86UopCount c;
  c.uops = static_cast<std::uint8_t>(std::clamp<unsigned>(work + loads + 2 * stores, 1, 255));
  return c;
}

}  // namespace smtlab

#endif
