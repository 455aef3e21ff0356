// smtlab sweep FILE.toml: runs a parameter sweep. The sweep engine is Python (smtlab.sweep, on a process pool or a
// Dask cluster), so this command only execs `python -m smtlab.sweep` with the right interpreter and package.
#include "commands.hpp"
#include "python_module.hpp"

namespace smtlab::cli {

int sweepCommand(const std::vector<std::string>& args) { execPythonModule("smtlab.sweep", args, "the sweep engine"); }

}  // namespace smtlab::cli
