// The QEMU system plugin's two files written byte by byte (format: src/tracer/system_trace.cpp), for the splitting
// tests of recorded kernel paths.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <string_view>

namespace smtlab::test {

class RawSystemTrace {
 public:
  RawSystemTrace& raw(std::string_view s) { data_.append(s); return *this; }
  RawSystemTrace& u8(std::uint8_t v) { data_.push_back(static_cast<char>(v)); return *this; }
  RawSystemTrace& u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) u8(static_cast<std::uint8_t>(v >> (8 * i)));
    return *this;
  }
  RawSystemTrace& u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) u8(static_cast<std::uint8_t>(v >> (8 * i)));
    return *this;
  }
  RawSystemTrace& insn(std::initializer_list<std::uint8_t> bytes) {
    u8(static_cast<std::uint8_t>(bytes.size()));
    for (std::uint8_t b : bytes) u8(b);
    return *this;
  }
  RawSystemTrace& nop() { return insn({0x90}); }
  RawSystemTrace& marker(std::uint16_t payload) {  // nopl 0x534dXXXX(%rax)
    return insn({0x0f, 0x1f, 0x80, static_cast<std::uint8_t>(payload), static_cast<std::uint8_t>(payload >> 8), 0x4d,
                 0x53});
  }
  RawSystemTrace& block(std::uint32_t id, bool kernel) { return u32(id << 1 | (kernel ? 0x80000000u : 0)); }
  RawSystemTrace& mark(std::uint32_t payload, std::uint32_t blockId, std::uint32_t index) {
    return u32(0x80000003u).u32(payload).u32(blockId).u32(index);
  }
  // An 8-byte access by the block's instruction `index`.
  RawSystemTrace& access(std::uint32_t index, bool store, std::uint64_t addr) {
    return u32(1u | 3u << 1 | (store ? 8u : 0u) | index << 4).u64(addr);
  }
  // A cut: the previous block was left after its k-th instruction had started (0x80000005, then k).
  RawSystemTrace& cut(std::uint32_t k) { return u32(0x80000005u).u32(k); }
  void save(const std::filesystem::path& path) const { std::ofstream(path, std::ios::binary) << data_; }

 private:
  std::string data_;
};

}  // namespace smtlab::test
