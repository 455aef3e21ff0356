// What a core reports to the machine (a trace ended, a mark instruction retired, a retire limit was reached), and
// the machine's own kinds of event: one list, kEventKindTable, for C++ names, the Python enum and its docs.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "smtlab/common/enum_table.hpp"
#include "smtlab/common/types.hpp"

namespace smtlab {

// Why Machine::run stopped. A core raises all but CycleBound; a new kind is one row in kEventKindTable.
enum class EventKind : std::uint8_t { SourceEnded, Mark, RetireLimit, CycleBound };
// THE list of event kinds: name (Python smtlab.EventKind.<NAME upper-cased>) and doc.
inline constexpr std::array<EnumInfo<EventKind>, 4> kEventKindTable{{
    {EventKind::SourceEnded, "source_ended", "The source on a CPU ended and all of it retired."},
    {EventKind::Mark, "mark", "A 'mark' instruction retired (Event.mark_id says which)."},
    {EventKind::RetireLimit, "retire_limit", "A CPU reached the count set by set_retire_limit."},
    {EventKind::CycleBound, "cycle_bound", "run reached its cycle bound."},
}};
static_assert(inEnumOrder(kEventKindTable), "kEventKindTable: one row per EventKind, in enum order");
constexpr std::string_view eventKindName(EventKind kind) { return enumName(kEventKindTable, kind); }
constexpr std::optional<EventKind> eventKindFromName(std::string_view name) {
  return enumFromName(kEventKindTable, name);
}

using CoreEventKind = EventKind;  // the machine passes a core's event kind on unchanged
struct CoreEvent {
  CoreEventKind kind;
  std::uint32_t thread;
  std::uint32_t markId;
  Cycle cycle;
};

}  // namespace smtlab
