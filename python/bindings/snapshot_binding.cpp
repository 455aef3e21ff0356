// Runs from window snapshots (docs/sampling.md "Window snapshots"): in one call, or in parts that smtlab.sampling
// hands to a process pool or a Dask cluster (simulate_snapshot_windows returns a range's window records as bytes, the
// task's result) and merges with one call (merge_snapshot_windows), as `smtlab run --from-snapshots --workers N` does.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/pybind11.h>
#include <fmt/format.h>
#include <pybind11/stl.h>

#include "binding.hpp"
#include "conversions.hpp"
#include "smtlab/config/config.hpp"
#include "smtlab/sim/run.hpp"

namespace smtlab::python {

namespace {

SnapshotRunOptions rangeArg(const py::handle& first, const py::handle& last, std::string_view func) {
  SnapshotRunOptions options;
  options.firstWindow = unsignedArg(first, func, "first");
  if (!last.is_none()) options.lastWindow = unsignedArg(last, func, "last");
  if (options.firstWindow > options.lastWindow) {
    throw UsageError(fmt::format("{}: first ({}) is after last ({})", func, options.firstWindow, options.lastWindow));
  }
  // Ctrl-C: between chunks the run takes the GIL back briefly and runs the Python signal handlers.
  options.stopRequested = [] {
    py::gil_scoped_acquire acquire;
    return PyErr_CheckSignals() != 0;
  };
  return options;
}

}  // namespace

void bindSnapshots(py::module_& m) {
  m.def(
      "snapshot_config", [](const std::string& folder) { return snapshotConfig(folder); }, py::arg("folder"),
      "The config a snapshot folder's windows were taken with (its config.toml).");
  m.def(
      "snapshot_window_count", [](const std::string& folder) { return snapshotWindowCount(folder); },
      py::arg("folder"), "How many windows the snapshot folder's manifest lists.");
  m.def(
      "run_from_snapshots",
      [](const std::string& folder, const Config& config, const py::handle& first, const py::handle& last) {
        const SnapshotRunOptions options = rangeArg(first, last, "run_from_snapshots");
        RunResult result;
        try {
          py::gil_scoped_release release;
          result = runFromSnapshots(folder, config, options);
        } catch (const RunInterrupted&) {
          throw py::error_already_set();
        }
        return jsonToPython(result.stats);
      },
      py::arg("folder"), py::arg("config"), py::arg("first") = 0, py::arg("last") = py::none(),
      "What `smtlab run --from-snapshots FOLDER --windows FIRST-LAST` does, in this process: the statistics dict. "
      "last=None: to the last window. Releases the GIL; Ctrl-C stops it with KeyboardInterrupt.");
  m.def(
      "simulate_snapshot_windows",
      [](const std::string& folder, const Config& config, const py::handle& first, const py::handle& last) {
        const SnapshotRunOptions options = rangeArg(first, last, "simulate_snapshot_windows");
        std::string records;
        try {
          py::gil_scoped_release release;
          records = simulateSnapshotWindows(folder, config, options);
        } catch (const RunInterrupted&) {
          throw py::error_already_set();
        }
        return py::bytes(records);
      },
      py::arg("folder"), py::arg("config"), py::arg("first"), py::arg("last"),
      "Windows first..last of the snapshot folder under config: their window records (bytes, a checked frame) for "
      "merge_snapshot_windows. Releases the GIL.");
  m.def(
      "merge_snapshot_windows",
      [](const std::string& folder, const Config& config, const std::vector<std::pair<std::string, py::bytes>>& parts,
         const py::handle& first, const py::handle& last, double hostSeconds) {
        SnapshotRunOptions options = rangeArg(first, last, "merge_snapshot_windows");
        options.stopRequested = nullptr;
        std::vector<WindowRecords> records;
        for (const auto& [name, bytes] : parts) records.push_back({name, std::string(bytes)});
        RunResult result;
        {
          py::gil_scoped_release release;
          result = mergeSnapshotWindows(folder, config, records, options, hostSeconds);
        }
        return jsonToPython(result.stats);
      },
      py::arg("folder"), py::arg("config"), py::arg("records"), py::arg("first") = 0, py::arg("last") = py::none(),
      py::arg("host_seconds") = 0.0,
      "The statistics dict of windows first..last from the window records of consecutive ranges that cover them in "
      "order ([(name, bytes)], the name for messages), as run_from_snapshots gives for the same windows; "
      "host_seconds: the time the ranges took.");
}

}  // namespace smtlab::python
