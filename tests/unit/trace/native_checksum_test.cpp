// Damaged native traces are errors, never different records: version 4 writes zstd's content checksum in its frame
// (RFC 8878, section 3.1.1) and the reader verifies it; xz streams carry xz's own check. Older zstd files still read,
// with one note that they cannot be checked.
#include <zstd.h>

#include <gtest/gtest.h>

#include "smtlab/common/error.hpp"
#include "smtlab/trace/generators.hpp"
#include "smtlab/trace/native_format.hpp"
#include "smtlab/trace/vector_source.hpp"
#include "trace_test_util.hpp"

namespace smtlab {
namespace {

// A native trace of gen:mix records and its bytes.
std::string mixTraceBytes(Compression c, std::uint64_t records, const std::string& path) {
  auto gen = makeGenerator("gen:mix,count=" + std::to_string(records) + ",seed=11");
  writeNativeTrace(*gen, path, c);
  return test::readFile(path);
}

void putLittleEndian(std::string& bytes, std::size_t at, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) bytes[at + i] = static_cast<char>(v >> (8 * i));
}

TEST(NativeChecksum, ZstdDataIsOneFrameWithTheContentChecksumFlag) {
  test::TempPath path(".smt");
  const std::string bytes = mixTraceBytes(Compression::Zstd, 2000, path.str());
  ASSERT_GT(bytes.size(), kNativeHeaderSize + 5);
  EXPECT_EQ(bytes[8], static_cast<char>(kNativeFirstChecksumVersion));
  // RFC 8878 3.1.1: the frame starts with the magic 0xFD2FB528 (little-endian), then the frame header descriptor,
  // whose bit 2 is Content_Checksum_flag.
  EXPECT_EQ(bytes.substr(kNativeHeaderSize, 4), std::string("\x28\xb5\x2f\xfd", 4));
  const auto descriptor = static_cast<unsigned char>(bytes[kNativeHeaderSize + 4]);
  EXPECT_NE(descriptor & 0x04, 0) << "no content checksum in the zstd frame";
  // One frame: zstd's own frame parser finds its end exactly at the end of the file.
  EXPECT_EQ(ZSTD_findFrameCompressedSize(bytes.data() + kNativeHeaderSize, bytes.size() - kNativeHeaderSize),
            bytes.size() - kNativeHeaderSize);
}

// Flips one bit at every `stride`-th byte of the compressed data (a different bit each time) and reads the whole
// trace: each damaged file must be an error naming the file. Returns how many errors were checksum mismatches.
int expectEveryFlipIsAnError(Compression c, std::size_t stride) {
  test::TempPath path(".smt");
  const std::string good = mixTraceBytes(c, 5000, path.str());
  int checksumErrors = 0, flips = 0;
  for (std::size_t at = kNativeHeaderSize; at < good.size(); at += stride, ++flips) {
    std::string bad = good;
    bad[at] = static_cast<char>(bad[at] ^ (1 << (at % 8)));
    test::writeFile(path.str(), bad);
    const std::string error = test::errorOf([&] {
      NativeTraceReader reader(path.str());
      readAll(reader);
    });
    EXPECT_NE(error.find(path.str() + ": "), std::string::npos)
        << compressionName(c) << ": a flipped bit at byte " << at << " was read silently: " << error;
    if (error.find("checksum mismatch") != std::string::npos) ++checksumErrors;
  }
  EXPECT_GT(flips, 100);  // the trace is ~17 KB of compressed data: enough places to damage
  return checksumErrors;
}

TEST(NativeChecksum, AFlippedBitAnywhereInTheZstdDataIsAnError) {
  // Most flips land in literals or entropy-coded sequences that still decode: only the checksum sees them.
  const int checksumErrors = expectEveryFlipIsAnError(Compression::Zstd, 13);
  EXPECT_GT(checksumErrors, 0);
}

TEST(NativeChecksum, AFlippedBitAnywhereInTheXzDataIsAnError) {
  expectEveryFlipIsAnError(Compression::Xz, 13);
}

TEST(NativeChecksum, TheMismatchMessageNamesTheFileAndHowManyRecordsWereDecoded) {
  test::TempPath path(".smt");
  std::string bytes = mixTraceBytes(Compression::Zstd, 5000, path.str());
  // The last 4 bytes of a checksummed frame are the checksum itself (RFC 8878 3.1.1): damaging it leaves every
  // block intact, so the data decodes completely and only the check fails.
  bytes[bytes.size() - 1] = static_cast<char>(bytes[bytes.size() - 1] ^ 0x01);
  test::writeFile(path.str(), bytes);
  const std::string error = test::errorOf([&] {
    NativeTraceReader reader(path.str());
    readAll(reader);
  });
  const std::string head = path.str() + ": zstd content checksum mismatch at the end of the data: the trace is "
                                        "damaged and any of its records may be wrong (";
  const std::string tail = " records decoded before the check)";
  ASSERT_EQ(error.substr(0, head.size()), head) << error;
  ASSERT_GT(error.size(), head.size() + tail.size());
  ASSERT_EQ(error.substr(error.size() - tail.size()), tail) << error;
  // How far the decoder got depends on its read buffer, but never past the trace's 5000 records.
  const std::string count = error.substr(head.size(), error.size() - head.size() - tail.size());
  ASSERT_EQ(count.find_first_not_of("0123456789"), std::string::npos) << error;
  EXPECT_LE(std::stoull(count), 5000u);
}

// A version-3 zstd file as the version-3 writer made it: the same records as version 4, in a zstd frame without a
// checksum.
std::string versionThreeZstdFile(const std::vector<Instr>& records, const std::string& scratch) {
  VectorSource source(records);
  writeNativeTrace(source, scratch, Compression::None);
  const std::string plain = test::readFile(scratch);
  const std::string body = plain.substr(kNativeHeaderSize);
  std::string frame(ZSTD_compressBound(body.size()), '\0');
  const std::size_t size = ZSTD_compress(frame.data(), frame.size(), body.data(), body.size(), 3);  // no checksum
  EXPECT_FALSE(ZSTD_isError(size));
  frame.resize(size);
  std::string file = plain.substr(0, kNativeHeaderSize);
  putLittleEndian(file, 8, 3, 4);
  putLittleEndian(file, 12, static_cast<std::uint32_t>(Compression::Zstd), 4);
  return file + frame;
}

TEST(NativeChecksum, VersionThreeZstdFilesReadWithOneNoteThatTheyCarryNoChecksum) {
  auto gen = makeGenerator("gen:mix,count=3000,seed=5");
  const std::vector<Instr> records = readAll(*gen);
  test::TempPath scratch(".smt"), old(".smt");
  test::writeFile(old.str(), versionThreeZstdFile(records, scratch.str()));

  ::testing::internal::CaptureStderr();
  std::vector<Instr> first, second;
  {
    NativeTraceReader reader(old.str());
    EXPECT_EQ(reader.version(), 3u);
    first = readAll(reader);
    reader.rewind();
    second = readAll(reader);
    NativeTraceReader again(old.str());  // said once per file
    readAll(again);
  }
  const std::string notes = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(first, records);
  EXPECT_EQ(second, records);
  EXPECT_EQ(notes, "smtlab: note: " + old.str() +
                       ": native trace version 3 carries no zstd checksum, so damaged data would read as different "
                       "records (`smtlab trace convert` writes a checked copy)\n");
}

TEST(NativeChecksum, AnUpgradedVersionThreeFileHasTheSameRecordsAndTheChecksumAndOthersAreLeftAlone) {
  auto gen = makeGenerator("gen:mix,count=3000,seed=6");
  const std::vector<Instr> records = readAll(*gen);
  test::TempPath scratch(".smt"), old(".smt");
  test::writeFile(old.str(), versionThreeZstdFile(records, scratch.str()));
  ::testing::internal::CaptureStderr();
  EXPECT_TRUE(upgradeNativeTrace(old.str()));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");  // the upgrade reads the old file without its note
  const std::string bytes = test::readFile(old.str());
  EXPECT_EQ(bytes[8], static_cast<char>(kNativeVersion));
  EXPECT_NE(static_cast<unsigned char>(bytes[kNativeHeaderSize + 4]) & 0x04, 0);  // RFC 8878 3.1.1 checksum flag
  NativeTraceReader reader(old.str());
  EXPECT_EQ(readAll(reader), records);
  // A current file, and files without zstd, are not touched.
  EXPECT_FALSE(upgradeNativeTrace(old.str()));
  for (Compression c : {Compression::Xz, Compression::None}) {
    test::TempPath path(".smt");
    const std::string before = mixTraceBytes(c, 100, path.str());
    EXPECT_FALSE(upgradeNativeTrace(path.str()));
    EXPECT_EQ(test::readFile(path.str()), before) << compressionName(c);
  }
}

TEST(NativeChecksum, CurrentFilesAndUncompressedFilesReadWithoutANote) {
  for (Compression c : {Compression::Zstd, Compression::Xz, Compression::None}) {
    test::TempPath path(".smt");
    mixTraceBytes(c, 100, path.str());
    ::testing::internal::CaptureStderr();
    NativeTraceReader reader(path.str());
    EXPECT_EQ(readAll(reader).size(), 100u);
    EXPECT_EQ(::testing::internal::GetCapturedStderr(), "") << compressionName(c);
  }
}

}  // namespace
}  // namespace smtlab
