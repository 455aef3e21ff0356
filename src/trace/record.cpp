#include "smtlab/trace/record.hpp"

#include <string>

namespace smtlab {
namespace {

constexpr std::string_view kOpNames[kOpClassCount] = {"int", "imul",  "idiv", "fadd", "fmul", "fdiv", "load",  "store",
                                                       "br",  "jmp",   "ijmp", "call", "ret",  "nop",  "pause", "mark"};
constexpr std::string_view kBranchKindNames[kBranchKindCount] = {"none",        "conditional", "direct_jump",
                                                                 "indirect_jump", "direct_call", "indirect_call",
                                                                 "return",      "other"};

}  // namespace

std::string_view opClassName(OpClass op) {
  const auto i = static_cast<std::size_t>(op);
  return i < std::size(kOpNames) ? kOpNames[i] : std::string_view("?");
}

bool parseOpClass(std::string_view name, OpClass& out) {
  for (int i = 0; i < kOpClassCount; ++i) {
    if (kOpNames[i] == name) {
      out = static_cast<OpClass>(i);
      return true;
    }
  }
  return false;
}

std::string_view branchKindName(BranchKind kind) {
  const auto i = static_cast<std::size_t>(kind);
  return i < std::size(kBranchKindNames) ? kBranchKindNames[i] : std::string_view("?");
}

BranchKind defaultBranchKind(OpClass op) {
  switch (op) {
    case OpClass::Branch: return BranchKind::Conditional;
    case OpClass::Jump: return BranchKind::DirectJump;
    case OpClass::IndirectJump: return BranchKind::IndirectJump;
    case OpClass::Call: return BranchKind::DirectCall;
    case OpClass::Return: return BranchKind::Return;
    default: return BranchKind::None;
  }
}

std::string regName(RegId reg) {
  if (reg == kNoReg || reg >= kArchRegs) return "-";
  // Built by hand: "r" + std::to_string() trips a false -Wrestrict in g++ 12.
  const int n = reg < kIntRegs ? reg : reg - kIntRegs;
  std::string s(1, reg < kIntRegs ? 'r' : 'f');
  if (n >= 10) s.push_back(static_cast<char>('0' + n / 10));
  s.push_back(static_cast<char>('0' + n % 10));
  return s;
}

bool parseReg(std::string_view name, RegId& out) {
  if (name.size() < 2 || name.size() > 3 || (name[0] != 'r' && name[0] != 'f')) return false;
  // No leading zeros ("r01") so that every register has exactly one spelling.
  if (name.size() == 3 && name[1] == '0') return false;
  int n = 0;
  for (std::size_t i = 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
    n = n * 10 + (name[i] - '0');
  }
  if (n >= (name[0] == 'r' ? kIntRegs : kFpRegs)) return false;
  out = name[0] == 'r' ? intReg(n) : fpReg(n);
  return true;
}

}  // namespace smtlab
