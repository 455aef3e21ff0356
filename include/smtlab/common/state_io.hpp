// Writing and reading a simulated machine's state, for window snapshots (docs/sampling.md "Window snapshots"). Each
// component that keeps state from one cycle to the next has one member, visitState(StateIo&), that lists that state;
// the same list writes it and reads it back, so the two cannot drift apart (boost.serialization's one `serialize` per
// class, without its headers in every component's). Values are copied as their bytes: a snapshot is read back by the
// same build on the same kind of host (the snapshot's header names the smtlab version that wrote it).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace smtlab {

class StateIo;

namespace state_io_detail {
template <class T>
struct IsVector : std::false_type {};
template <class T, class A>
struct IsVector<std::vector<T, A>> : std::true_type {};
template <class T>
struct IsArray : std::false_type {};
template <class T, std::size_t N>
struct IsArray<std::array<T, N>> : std::true_type {};
template <class T>
struct IsPair : std::false_type {};
template <class A, class B>
struct IsPair<std::pair<A, B>> : std::true_type {};
}  // namespace state_io_detail

class StateIo {
 public:
  // A writer: what is visited is appended to bytes().
  StateIo() = default;
  // A reader of `bytes`; `what` names the snapshot in error messages.
  StateIo(std::string_view bytes, std::string what) : in_(bytes), what_(std::move(what)), reading_(true) {}

  bool reading() const { return reading_; }
  const std::string& bytes() const { return out_; }
  std::string takeBytes() { return std::move(out_); }
  // A reader: every byte was read. Throws smtlab::Error when some are left (the snapshot is not of this machine).
  void expectEnd() const;

  // Writes or reads each value: a type with visitState(StateIo&), a vector (its length, then its elements), an array,
  // a pair, a string, or a plain value without pointers (copied as its bytes).
  template <class... T>
  void operator()(T&... xs) {
    (one(xs), ...);
  }

  // A section mark: a reader checks that the writer's mark is here, so a component whose list changed is named
  // instead of reading another component's bytes as its own.
  void mark(std::string_view name);

  // A length: writes n, or reads and returns the stored one (which must fit what is left of the input).
  std::uint64_t length(std::uint64_t n, std::size_t elementBytes);
  [[noreturn]] void sizeMismatch(std::uint64_t stored, std::uint64_t here) const;
  void raw(void* data, std::size_t bytes);

 private:
  template <class T>
  void one(T& x) {
    using namespace state_io_detail;
    if constexpr (requires { x.visitState(*this); }) {
      x.visitState(*this);
    } else if constexpr (IsVector<T>::value) {
      using E = typename T::value_type;
      const std::uint64_t n = length(x.size(), std::is_trivially_copyable_v<E> ? sizeof(E) : 1);
      if constexpr (std::is_default_constructible_v<E> && !requires(E& e) { e.visitState(*this); }) {
        if (reading_) x.resize(static_cast<std::size_t>(n));
      } else {
        // Components (caches, TLBs, thread contexts) are made by the machine from its config, and other parts may
        // point into them: the snapshot must have as many, read in place.
        if (reading_ && n != x.size()) sizeMismatch(n, x.size());
      }
      if constexpr (std::is_trivially_copyable_v<E> && !std::is_pointer_v<E> && !requires(E& e) { e.visitState(*this); }) {
        if (n > 0) raw(x.data(), n * sizeof(E));
      } else {
        for (auto& e : x) one(e);
      }
    } else if constexpr (IsArray<T>::value) {
      for (auto& e : x) one(e);
    } else if constexpr (IsPair<T>::value) {
      one(x.first);
      one(x.second);
    } else if constexpr (std::is_same_v<T, std::string>) {
      const std::uint64_t n = length(x.size(), 1);
      if (reading_) x.resize(static_cast<std::size_t>(n));
      if (n > 0) raw(x.data(), n);
    } else {
      static_assert(std::is_trivially_copyable_v<T> && !std::is_pointer_v<T>,
                    "StateIo: give the type a visitState member, or leave the member out");
      raw(&x, sizeof x);
    }
  }

  std::string out_;
  std::string_view in_;
  std::size_t at_ = 0;
  std::string what_;
  bool reading_ = false;
};

}  // namespace smtlab
