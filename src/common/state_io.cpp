#include "smtlab/common/state_io.hpp"

#include <cstring>

#include <fmt/format.h>

#include "smtlab/common/error.hpp"

namespace smtlab {

void StateIo::raw(void* data, std::size_t bytes) {
  if (!reading_) {
    out_.append(static_cast<const char*>(data), bytes);
    return;
  }
  if (bytes > in_.size() - at_) {
    throw Error(fmt::format("{}: the machine state ends early (byte {} of {}): it was written for another machine",
                            what_, at_, in_.size()));
  }
  std::memcpy(data, in_.data() + at_, bytes);
  at_ += bytes;
}

std::uint64_t StateIo::length(std::uint64_t n, std::size_t elementBytes) {
  raw(&n, sizeof n);
  if (reading_ && (elementBytes == 0 ? 0 : n) > (in_.size() - at_) / (elementBytes == 0 ? 1 : elementBytes)) {
    throw Error(fmt::format("{}: a table of {} entries at byte {} does not fit in the {} bytes of the machine state",
                            what_, n, at_, in_.size()));
  }
  return n;
}

void StateIo::sizeMismatch(std::uint64_t stored, std::uint64_t here) const {
  throw Error(fmt::format("{}: the machine state has {} parts where this machine has {} (at byte {}): it was written "
                          "for another machine",
                          what_, stored, here, at_));
}

void StateIo::mark(std::string_view name) {
  std::string text(name);
  if (!reading_) {
    one(text);
    return;
  }
  std::string found;
  one(found);
  if (found != text) {
    throw Error(fmt::format("{}: the machine state holds '{}' where '{}' was expected: it was written by another "
                            "smtlab build or for another machine",
                            what_, found.substr(0, 60), text));
  }
}

void StateIo::expectEnd() const {
  if (reading_ && at_ != in_.size()) {
    throw Error(fmt::format("{}: {} bytes of machine state are left over: it was written for another machine", what_,
                            in_.size() - at_));
  }
}

}  // namespace smtlab
