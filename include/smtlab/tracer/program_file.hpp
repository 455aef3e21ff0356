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

// The executable `name` on PATH (a regular file with x permission), empty when there is none; a name with a '/' is
// returned as it is, for the caller to check. Shared by the tracers' look-ups of programs and of QEMU.
std::string findOnPath(const std::string& name);

// A QEMU plugin of ours: the file named by the environment variable `envVar` if set, else `fileName` in this build's
// plugin folder (tracerPluginDir(): the tree build's tools/qemu-tracer/ or the installed package's libexec/) if it
// exists, else beside the smtlab program or in its tools/qemu-tracer/. Empty when none exists.
std::string findTracerPlugin(const char* envVar, const std::string& fileName);

}  // namespace smtlab
