// Uops per x86 instruction form, as the tracer's decoder records them: the unfused-domain count of one
// named microarchitecture (Broadwell, measured by uops.info) and whether the microcode sequencer delivers them.
// docs/tracing.md, "Uops per instruction", gives the rule, the table and their sources. Private to the tracer.
#pragma once

#ifdef SMTLAB_HAVE_CAPSTONE

#include <cstdint>

#include <capstone/capstone.h>

namespace smtlab {

struct X86UopCount {
  std::uint8_t uops = 1;    // unfused domain: uops dispatched to execution ports, at least 1, at most 255
  bool microcoded = false;  // delivered by the microcode sequencer (MSROM)
};

// The count for one decoded instruction (capstone detail on). `isRep`: a rep-prefixed string op, which the tracer
// records as one record per iteration; its count is one iteration's, microcoded.
X86UopCount x86UopCount(const cs_insn& insn, bool isRep);

}  // namespace smtlab

#endif
