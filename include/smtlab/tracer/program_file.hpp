// What `trace record` hands to qemu-x86_64: the program file checked before QEMU starts, so that a directory, a file
// that is not executable, an ELF for another machine or a file with no `#!` line is one clear message instead of
// QEMU's exit and an empty trace. A `#!` script is run as the kernel runs it: interpreter [argument] script args.
#pragma once

#include <string>
#include <vector>

namespace smtlab {

// Finds command[0] (on PATH when it has no '/'), checks it and returns the command line QEMU must run (the
// interpreter first for a script). Throws TraceError naming the file and what is wrong with it.
std::vector<std::string> resolveTracedProgram(const std::vector<std::string>& command);

}  // namespace smtlab
