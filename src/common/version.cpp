// The smtlab version (see version.hpp). SMTLAB_VERSION is set for this file alone by the top-level CMakeLists.txt, so
// a new version recompiles one file.
#include "smtlab/common/version.hpp"

#ifndef SMTLAB_VERSION
#error "SMTLAB_VERSION must come from CMakeLists.txt's project(VERSION)"
#endif

namespace smtlab {

std::string_view version() { return SMTLAB_VERSION; }

}  // namespace smtlab
