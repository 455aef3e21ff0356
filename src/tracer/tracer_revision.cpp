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

bool tracerStampCurrent(const std::string& cachedFile, std::string_view requiredTag) {
  std::ifstream in(stampPath(cachedFile));
  std::string word;
  int revision = 0;
  if (!(in >> word >> revision && word == "tracer-revision" && revision == kTracerRevision)) return false;
  if (requiredTag.empty()) return true;
  while (in >> word) {
    if (word == requiredTag) return true;
  }
  return false;
}

void writeTracerStamp(const std::string& cachedFile, std::string_view tag) {
  const std::string path = stampPath(cachedFile);
  const std::string tmp = fmt::format("{}.tmp{}", path, ::getpid());
  {
    std::ofstream out(tmp);
    out << "tracer-revision " << kTracerRevision << "\n";
    if (!tag.empty()) out << tag << "\n";
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
