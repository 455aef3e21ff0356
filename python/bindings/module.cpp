// The smtlab._core module: exception classes (smtlab.Error and its subclasses, translated from smtlab::Error) and
// the registration of the config, trace, machine and table bindings.
#include <string>

#include <pybind11/pybind11.h>

#include "binding.hpp"
#include "smtlab/common/error.hpp"
#include "smtlab/tracer/tracer_revision.hpp"

namespace smtlab::python {

namespace {

// Exception classes live for the life of the interpreter; the translator needs them without the module object.
PyObject* gError = nullptr;
PyObject* gUsageError = nullptr;
PyObject* gConfigError = nullptr;
PyObject* gTraceError = nullptr;
PyObject* gDeadlockError = nullptr;

PyObject* makeException(py::module_& m, const char* name, py::handle bases, const char* doc) {
  // Named smtlab.X: the package re-exports them, and that is the name users catch.
  const std::string full = std::string("smtlab.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(full.c_str(), doc, bases.ptr(), nullptr);
  if (type == nullptr) throw py::error_already_set();
  m.attr(name) = py::handle(type);  // the module keeps one reference, the global another (never released)
  return type;
}

}  // namespace

}  // namespace smtlab::python

PYBIND11_MODULE(_core, m) {
  namespace py = pybind11;
  using namespace smtlab::python;
  m.doc() =
      "smtlab._core: the C++ simultaneous-multithreading model (machine, trace sources, config). Coarse-grained: "
      "Machine.run simulates many cycles per call with the GIL released. The package smtlab re-exports these names.";
  m.attr("__version__") = SMTLAB_VERSION;
  // Bumped whenever the tracer changes what a recording of the same program holds (tracer_revision.hpp): caches of
  // recordings made from Python (e.g. the study's cc1 windows) put it in their stamps.
  m.attr("TRACER_REVISION") = smtlab::kTracerRevision;

  gError = makeException(m, "Error", PyExc_Exception, "Base of every error smtlab reports (bad input, misuse).");
  gUsageError = makeException(m, "UsageError", py::make_tuple(py::handle(gError), py::handle(PyExc_ValueError)),
                              "A misuse of the API: a CPU out of range, attach to a busy CPU, a closed machine...");
  gConfigError = makeException(m, "ConfigError", gError, "A config file, key or value that is wrong; names the key.");
  gTraceError = makeException(m, "TraceError", gError, "A trace file or generator spec that cannot be read.");
  gDeadlockError =
      makeException(m, "DeadlockError", gError, "The model (or the OS layer) stopped making progress.");

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const smtlab::UsageError& e) {
      PyErr_SetString(gUsageError, e.what());
    } catch (const smtlab::ConfigError& e) {
      PyErr_SetString(gConfigError, e.what());
    } catch (const smtlab::TraceError& e) {
      PyErr_SetString(gTraceError, e.what());
    } catch (const smtlab::DeadlockError& e) {
      PyErr_SetString(gDeadlockError, e.what());
    } catch (const smtlab::Error& e) {
      PyErr_SetString(gError, e.what());
    }
  });

  bindConfig(m);
  bindTrace(m);
  bindMachine(m);
  bindTables(m);
  bindSnapshots(m);
}
