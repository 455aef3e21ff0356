// smtlab._core.Instr and smtlab._core.Source: instruction records built in Python (for small tests) and trace sources
// (files, generators, records) wrapped in the cursor that a Machine attaches to a logical CPU.
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "binding.hpp"
#include "conversions.hpp"
#include "smtlab/common/error.hpp"
#include "smtlab/sim/open_trace.hpp"
#include "smtlab/trace/cursor.hpp"
#include "smtlab/trace/generators.hpp"
#include "smtlab/trace/record.hpp"
#include "smtlab/trace/source.hpp"
#include "smtlab/trace/text_format.hpp"
#include "smtlab/trace/vector_source.hpp"

namespace smtlab::python {

namespace {

RegId toReg(const py::handle& h) {
  if (py::isinstance<py::str>(h)) {
    const std::string name = h.cast<std::string>();
    RegId r = kNoReg;
    if (!parseReg(name, r)) throw py::value_error(fmt::format("Instr: unknown register '{}' (r0..r63, f0..f63)", name));
    return r;
  }
  if (py::isinstance<py::int_>(h) && !py::isinstance<py::bool_>(h)) {
    const long v = h.cast<long>();
    if (v < 0 || v >= kArchRegs) throw py::value_error(fmt::format("Instr: register id {} out of range 0..127", v));
    return static_cast<RegId>(v);
  }
  throw py::type_error("Instr: a register is a name ('r5', 'f2') or an id 0..127");
}

template <std::size_t N>
std::array<RegId, N> toRegs(const py::iterable& regs, const char* what) {
  std::array<RegId, N> out;
  out.fill(kNoReg);
  std::size_t i = 0;
  for (const auto& h : regs) {
    if (i == N) throw py::value_error(fmt::format("Instr: at most {} {} registers", N, what));
    out[i++] = toReg(h);
  }
  return out;
}

template <std::size_t N>
std::array<MemRef, N> toRefs(const py::iterable& refs, const char* what) {
  std::array<MemRef, N> out{};
  std::size_t i = 0;
  for (const auto& h : refs) {
    if (i == N) throw py::value_error(fmt::format("Instr: at most {} {}", N, what));
    if (py::isinstance<py::int_>(h)) {
      out[i++] = MemRef{unsignedArg(h, "Instr", fmt::format("{} address", what)), 8};
      continue;
    }
    if (!py::isinstance<py::tuple>(h) && !py::isinstance<py::list>(h)) {
      throw py::type_error(fmt::format("Instr: {} are addresses or (address, size) pairs", what));
    }
    const auto pair = h.cast<py::sequence>();
    if (pair.size() != 2) throw py::type_error(fmt::format("Instr: {} are addresses or (address, size) pairs", what));
    const Addr addr = unsignedArg(pair[0], "Instr", fmt::format("{} address", what));
    const std::uint64_t size = unsignedArg(pair[1], "Instr", fmt::format("{} size", what), 255);
    if (size < 1) throw py::value_error(fmt::format("Instr: {} size 0 out of range 1..255", what));
    out[i++] = MemRef{addr, static_cast<std::uint8_t>(size)};
  }
  return out;
}

Instr makeInstr(const py::handle& pc, const std::string& op, const py::iterable& src, const py::iterable& dst,
                const py::iterable& loads, const py::iterable& stores, bool taken, const py::handle& target,
                const py::handle& markId, const std::optional<std::string>& branch) {
  Instr in;
  in.pc = unsignedArg(pc, "Instr", "pc");
  if (!parseOpClass(op, in.op)) {
    throw py::value_error(fmt::format("Instr: unknown op '{}' (int imul idiv fadd fmul fdiv load store br jmp ijmp "
                                      "call ret nop pause mark)",
                                      op));
  }
  in.branch = defaultBranchKind(in.op);
  if (branch) {
    bool found = false;
    for (int k = 0; k < kBranchKindCount; ++k) {
      if (branchKindName(static_cast<BranchKind>(k)) == *branch) {
        in.branch = static_cast<BranchKind>(k);
        found = true;
      }
    }
    if (!found) throw py::value_error(fmt::format("Instr: unknown branch kind '{}'", *branch));
  }
  in.src = toRegs<kMaxSrcRegs>(src, "source");
  in.dst = toRegs<kMaxDstRegs>(dst, "destination");
  in.loads = toRefs<kMaxLoads>(loads, "loads");
  in.stores = toRefs<kMaxStores>(stores, "stores");
  // 'taken' is a branch's outcome, as in the text format (text_format.cpp): on a record with no branch kind nothing
  // would read it, so it is a mistake, such as a wrong op, not a flag to drop.
  if (taken && !in.isBranch()) {
    throw py::value_error(fmt::format("Instr: taken=True on op '{}'{}, which is no branch: only a branch is taken (use "
                                      "a branch op such as 'br', give branch=, or leave taken out)",
                                      op, branch ? fmt::format(" with branch='{}'", *branch) : std::string()));
  }
  // Jumps, calls and returns are always taken (as in the text format).
  in.taken = taken || (in.isBranch() && in.branch != BranchKind::Conditional);
  in.target = unsignedArg(target, "Instr", "target");
  in.markId = static_cast<std::uint32_t>(unsignedArg(markId, "Instr", "mark_id", 0xffffffffULL));
  return in;
}

template <std::size_t N>
py::list regNames(const std::array<RegId, N>& regs) {
  py::list out;
  for (RegId r : regs) {
    if (r != kNoReg) out.append(regName(r));
  }
  return out;
}

template <std::size_t N>
py::list refList(const std::array<MemRef, N>& refs) {
  py::list out;
  for (const MemRef& r : refs) {
    if (r.valid()) out.append(py::make_tuple(r.addr, r.size));
  }
  return out;
}

std::vector<Instr> collect(const py::iterable& records) {
  std::vector<Instr> out;
  for (const auto& h : records) {
    if (!py::isinstance<Instr>(h)) {
      throw py::type_error("Source.from_records: every record must be an smtlab.Instr, not " +
                           py::type::handle_of(h).attr("__name__").cast<std::string>());
    }
    out.push_back(h.cast<const Instr&>());
  }
  return out;
}

std::shared_ptr<TraceCursor> openSource(const std::string& spec) {
  // Opening sniffs the format and may block on a pipe or FIFO whose writer is another Python thread: without the
  // GIL, so that thread can run.
  py::gil_scoped_release nogil;
  return std::make_shared<TraceCursor>(openTrace(spec));
}

}  // namespace

void bindTrace(py::module_& m) {
  py::class_<Instr>(m, "Instr",
                    "One dynamic instruction (the text trace format's fields). Build records in Python for small "
                    "tests and wrap a list of them with Source.from_records.")
      .def(py::init(&makeInstr), py::arg("pc") = 0, py::arg("op") = "nop", py::kw_only(),
           py::arg("src") = py::tuple(), py::arg("dst") = py::tuple(), py::arg("loads") = py::tuple(),
           py::arg("stores") = py::tuple(), py::arg("taken") = false, py::arg("target") = 0, py::arg("mark_id") = 0,
           py::arg("branch") = py::none(),
           "pc and op ('int', 'load', 'br', 'mark', ...); registers as names ('r1', 'f3') or ids; loads/stores as "
           "addresses or (address, size) pairs; branch overrides the op's branch kind.")
      .def_static(
          "parse",
          [](const std::string& line) {
            // The text reader splits lines before parsing one, so here a line break was a binary byte (a message
            // about "not a text trace") or cut off by a '#' (a second record after a comment was silently dropped).
            if (const std::size_t nl = line.find('\n'); nl != std::string::npos) {
              throw TraceError(fmt::format("<python>:1: line break in column {}: Instr.parse reads one record, which "
                                           "is one line; give it without its line end, or a whole text trace to "
                                           "Source.from_text",
                                           nl + 1));
            }
            Instr in;
            if (!parseTextLine(line, in, "<python>", 1)) throw TraceError("<python>:1: no instruction on this line");
            return in;
          },
          py::arg("line"),
          "Parses one text-format line ('400000 int dst=r1 src=r2'), without its line end. Raises TraceError.")
      .def_property(
          "pc", [](const Instr& in) { return in.pc; },
          [](Instr& in, const py::handle& v) { in.pc = unsignedArg(v, "Instr.pc", "value"); }, "Instruction address.")
      .def_property(
          "target", [](const Instr& in) { return in.target; },
          [](Instr& in, const py::handle& v) { in.target = unsignedArg(v, "Instr.target", "value"); },
          "Branch target (0 if unknown).")
      .def_property(
          "taken", [](const Instr& in) { return in.taken; },
          [](Instr& in, bool v) {
            if (v && !in.isBranch()) {
              throw py::value_error(fmt::format("Instr.taken: cannot set True on op '{}', which is no branch: only a "
                                                "branch is taken",
                                                opClassName(in.op)));
            }
            in.taken = v;
          },
          "Whether the branch was taken (True only on a branch).")
      .def_property(
          "mark_id", [](const Instr& in) { return in.markId; },
          [](Instr& in, const py::handle& v) {
            in.markId = static_cast<std::uint32_t>(unsignedArg(v, "Instr.mark_id", "value", 0xffffffffULL));
          },
          "Marker id of a 'mark' instruction.")
      .def_property_readonly("op", [](const Instr& in) { return std::string(opClassName(in.op)); }, "Op class name.")
      .def_property_readonly(
          "branch", [](const Instr& in) { return std::string(branchKindName(in.branch)); }, "Branch kind name.")
      .def_property_readonly("src", [](const Instr& in) { return regNames(in.src); }, "Source register names.")
      .def_property_readonly("dst", [](const Instr& in) { return regNames(in.dst); }, "Destination register names.")
      .def_property_readonly("loads", [](const Instr& in) { return refList(in.loads); }, "(address, size) loads.")
      .def_property_readonly("stores", [](const Instr& in) { return refList(in.stores); }, "(address, size) stores.")
      .def("__eq__", [](const Instr& a, const Instr& b) { return a == b; }, py::is_operator())
      .def("__str__", [](const Instr& in) { return formatTextLine(in); })
      .def("__repr__", [](const Instr& in) { return fmt::format("Instr.parse('{}')", formatTextLine(in)); });

  py::class_<TraceCursor, std::shared_ptr<TraceCursor>>(
      m, "Source",
      "A trace source as a Machine runs it: a file, a generator spec or records, read through a cursor that counts "
      "retired instructions and rewinds on detach, so no instruction is lost or retired twice. A source is attached "
      "to at most one logical CPU at a time.")
      .def(py::init(&openSource), py::arg("spec"),
           "Opens a trace file (native, text, ChampSim) or a 'gen:NAME,key=value' generator. Raises TraceError.")
      .def_static(
          "from_records",
          [](const py::iterable& records, const std::string& name) {
            return std::make_shared<TraceCursor>(std::make_unique<VectorSource>(collect(records), name));
          },
          py::arg("records"), py::arg("name") = "<python>", "A source over an iterable of Instr.")
      .def_static(
          "from_text",
          [](const std::string& text, const std::string& name) {
            return std::make_shared<TraceCursor>(std::make_unique<VectorSource>(parseTextTrace(text), name));
          },
          py::arg("text"), py::arg("name") = "<text>",
          "A source over a text-format trace held in a string. Raises TraceError naming the line.")
      .def_property_readonly("name", &TraceCursor::describe, "File name or generator spec.")
      .def_property_readonly("retired", &TraceCursor::retired, "Instructions retired from this source (all runs).")
      .def_property_readonly("restarts", &TraceCursor::restarts, "How many times the trace was restarted.")
      .def_readonly("attached", &TraceCursor::attached, "True while attached to a logical CPU.")
      .def_property_readonly(
          "length", [](TraceCursor& c) { return c.source().length(); },
          "Number of records if known in advance (None for an endless generator or a text file).")
      .def(
          "ended",
          [](TraceCursor& c) {
            if (c.attached) throw UsageError(fmt::format("Source.ended: '{}' is attached to a CPU", c.describe()));
            return c.finished();
          },
          "True if every record has retired (only while detached; reads ahead to find out).")
      .def(
          "restart",
          [](TraceCursor& c) {
            if (c.attached) {
              throw UsageError(
                  fmt::format("Source.restart: '{}' is attached; use Machine.restart_trace", c.describe()));
            }
            if (!c.finished()) {
              throw UsageError(
                  fmt::format("Source.restart: '{}' has not ended (retired {})", c.describe(), c.retired()));
            }
            c.restart();
          },
          "Starts an ended, detached source again from its first record (retired keeps counting).")
      .def("__repr__", [](const TraceCursor& c) {
        return fmt::format("<smtlab.Source '{}' retired={}{}>", c.describe(), c.retired(),
                           c.attached ? " attached" : "");
      });

  m.def("open_trace", &openSource, py::arg("spec"), "Same as Source(spec).");
  m.def(
      "read_records",
      [](const std::string& spec, const py::handle& maxRecords) {
        const std::uint64_t count = unsignedArg(maxRecords, "read_records", "max_records");
        py::gil_scoped_release nogil;  // may block on a pipe fed by another Python thread
        auto source = openTrace(spec);
        return readAll(*source, count);
      },
      py::arg("spec"), py::arg("max_records") = 0, "The records of a trace (at most max_records if non-zero).");
  m.def(
      "generator_names",
      []() {
        std::vector<std::string> out;
        for (auto n : generatorNames()) out.emplace_back(n);
        return out;
      },
      "Names of the built-in generators ('gen:NAME').");
}

}  // namespace smtlab::python
