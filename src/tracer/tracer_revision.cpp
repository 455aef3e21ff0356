#include "smtlab/tracer/tracer_revision.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "smtlab/common/error.hpp"

namespace smtlab {
namespace {

std::string stampPath(const std::string& cachedFile) { return cachedFile + ".tracer"; }

}  // namespace

bool tracerStampCurrent(const std::string& cachedFile) {
  std::ifstream in(stampPath(cachedFile));
  std::string word;
  int revision = 0;
  return in >> word >> revision && word == "tracer-revision" && revision == kTracerRevision;
}

void writeTracerStamp(const std::string& cachedFile) {
  const std::string path = stampPath(cachedFile);
  const std::string tmp = fmt::format("{}.tmp{}", path, ::getpid());
  {
    std::ofstream out(tmp);
    out << "tracer-revision " << kTracerRevision << "\n";
    if (!out.flush()) throw TraceError(fmt::format("cannot write the tracer stamp {}", tmp));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    const std::string why = ec.message();
    std::filesystem::remove(tmp, ec);
    throw TraceError(fmt::format("cannot write the tracer stamp {}: {}", path, why));
  }
}

}  // namespace smtlab
