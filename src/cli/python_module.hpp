// Commands whose engine is Python (sweeps, the reference study) run `python -m smtlab.<module>`: this finds the
// interpreter and the package that go with this smtlab program and replaces the process with it.
#pragma once

#include <string>
#include <vector>

namespace smtlab::cli {

// Execs `PYTHON -m <module> ARGS...`: PYTHON is $SMTLAB_PYTHON, else the source tree's .venv/bin/python, else
// python3; the tree's python/ folder is added to PYTHONPATH when it holds a built module. Returns only by throwing
// smtlab::Error (naming the interpreter) when the exec fails. `what` names the engine in that message.
[[noreturn]] void execPythonModule(const std::string& module, const std::vector<std::string>& args,
                                   const std::string& what);

}  // namespace smtlab::cli
