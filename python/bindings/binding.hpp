// The per-area bind functions of the smtlab._core module, each defined in its own *_binding.cpp; module.cpp calls
// them once when the module is imported.
#pragma once

#include <pybind11/pybind11.h>

namespace smtlab::python {

namespace py = pybind11;

void bindConfig(py::module_& m);
void bindTrace(py::module_& m);
void bindMachine(py::module_& m);
void bindTables(py::module_& m);  // the enum tables: CPI causes, policies, unit classes
void bindSnapshots(py::module_& m);  // runs from window snapshots, whole or in parts

}  // namespace smtlab::python
