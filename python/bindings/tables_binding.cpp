// The enum tables as read-only Python dicts, name -> doc in enum order: CPI-stack causes, fetch
// policies, rename/retire policies, allocation policies, issue-port unit classes. Python code derives its lists from these instead of
// keeping its own copy (smtlab.plot.CPI_ORDER is tuple(CPI_CAUSES)).
#include <string>

#include <pybind11/pybind11.h>

#include "binding.hpp"
#include "smtlab/config/config.hpp"
#include "smtlab/core/allocation_policy.hpp"
#include "smtlab/core/core_stats.hpp"
#include "smtlab/core/fetch_policy.hpp"

namespace smtlab::python {

namespace {

template <class Table>
py::object namesToDocs(const Table& table) {
  py::dict out;
  for (const auto& row : table) {
    out[py::str(row.name.data(), row.name.size())] = py::str(row.doc.data(), row.doc.size());
  }
  // A mappingproxy: the module's tables are not for the caller to edit.
  return py::module_::import("types").attr("MappingProxyType")(out);
}

}  // namespace

void bindTables(py::module_& m) {
  m.attr("CPI_CAUSES") = namesToDocs(kCpiCauseTable);
  m.attr("FETCH_POLICIES") = namesToDocs(fetchPolicyTable());
  m.attr("THREAD_CHOICE_POLICIES") = namesToDocs(threadChoiceTable());
  m.attr("ALLOCATION_POLICIES") = namesToDocs(allocationPolicyTable());
  m.attr("UNIT_CLASSES") = namesToDocs(kUnitClassTable);
}

}  // namespace smtlab::python
