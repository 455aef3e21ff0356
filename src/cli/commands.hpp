// Subcommands of the smtlab program. Each takes the arguments after its name and returns the exit status;
// errors are thrown as smtlab::Error and printed by main() as one message with exit status 1.
#pragma once

#include <string>
#include <vector>

namespace smtlab::cli {

int runCommand(const std::vector<std::string>& args);     // smtlab run ...
int traceCommand(const std::vector<std::string>& args);   // smtlab trace gen|head|info|convert ...
int traceRecordCommand(const std::vector<std::string>& args);  // smtlab trace record ... (args[0] is "record")
int configCommand(const std::vector<std::string>& args);  // smtlab config show ...
int demoCommand(const std::vector<std::string>& args);    // smtlab demo: HT off vs on on generated pairs
int studyCommand(const std::vector<std::string>& args);   // smtlab study: execs python -m smtlab.study
int sweepCommand(const std::vector<std::string>& args);   // smtlab sweep FILE.toml: execs python -m smtlab.sweep

}  // namespace smtlab::cli
