// smtlab study: the reference study ("Hyper-Threading speeds Linux" and the SMT energy study) rerun on the model.
// Its workloads and schedulers are the Python OS layer, so this command execs `python -m smtlab.study`.
#include "commands.hpp"
#include "python_module.hpp"

namespace smtlab::cli {

int studyCommand(const std::vector<std::string>& args) { execPythonModule("smtlab.study", args, "the reference study"); }

}  // namespace smtlab::cli
