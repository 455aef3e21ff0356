// The kpath:NAME[,seed=N] spec parser (parseKpathSpec): what it accepts and the one message for what it does not.
// Nothing here boots: the parser runs before any recording.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "smtlab/common/error.hpp"
#include "smtlab/tracer/kpath_spec.hpp"

namespace smtlab {
namespace {

std::string errorOf(const std::string& spec) {
  try {
    parseKpathSpec(spec);
  } catch (const TraceError& e) {
    return e.what();
  }
  ADD_FAILURE() << spec << " was accepted";
  return "";
}

TEST(KpathSpec, NameAndDecimalSeed) {
  EXPECT_EQ(parseKpathSpec("kpath:getppid").name, "getppid");
  EXPECT_EQ(parseKpathSpec("kpath:getppid").seed, 0u);
  EXPECT_EQ(parseKpathSpec("kpath:fork,seed=25").seed, 25u);
  EXPECT_EQ(parseKpathSpec("kpath:fork,seed=007").seed, 7u);  // leading zeros: still the number seven
  EXPECT_EQ(parseKpathSpec("kpath:fork,seed=18446744073709551615").seed, UINT64_MAX);  // 2^64 - 1
}

TEST(KpathSpec, SeedIsDigitsOnlyAndFits64Bits) {
  // strtoull took all of these: -1 as 2^64 - 1, 2^64 as 2^64 - 1 (saturated), and skipped the blank or the sign.
  for (const std::string opt : {"seed=-1", "seed=18446744073709551616", "seed= 1", "seed=+1", "seed=1x", "seed=",
                                "sed=1", "seed=0x10"}) {
    const std::string spec = "kpath:getppid," + opt;
    EXPECT_EQ(errorOf(spec), "'" + spec + "': bad option '" + opt +
                                 "' (kpath:NAME[,seed=N][,stack=K][,page=P], N a whole number from 0 to "
                                 "18446744073709551615, K from 0 to 4096, P from 0 to 268435455, each at most "
                                 "once)");
  }
}

TEST(KpathSpec, StackSlotAndOptionOrder) {
  EXPECT_EQ(parseKpathSpec("kpath:fork,stack=3").stackSlot, 3u);
  const KpathSpec both = parseKpathSpec("kpath:fork,stack=4096,seed=9");  // either order; 4096 = kMaxKernelStackSlot
  EXPECT_EQ(both.stackSlot, 4096u);
  EXPECT_EQ(both.seed, 9u);
  EXPECT_EQ(errorOf("kpath:fork,stack=4097"), "'kpath:fork,stack=4097': stack=4097 is out of range (0..4096)");
  // An option given twice would silently mean the last one: refused.
  for (const std::string spec : {"kpath:fork,seed=1,seed=2", "kpath:fork,stack=1,stack=1", "kpath:fork,seed=1,"}) {
    EXPECT_NE(errorOf(spec).find("': bad option '"), std::string::npos) << spec;
  }
}

TEST(KpathSpec, UnknownPathNamesTheTable) {
  const std::string msg = errorOf("kpath:no_such_path,seed=1");
  EXPECT_EQ(msg.rfind("'kpath:no_such_path,seed=1': unknown kernel path 'no_such_path' (paths: getppid ", 0), 0u)
      << msg;
}

TEST(KpathSpec, NumberedPathFamiliesAreNamedOnceAsARange) {
  // kpath_paths.h's chat batches tcp_send_b2 ... tcp_send_b20 and tcp_recv_b2 ... tcp_recv_b20 (38 names): each
  // family appears once, as its first name and the last number, so the list of 80 paths stays a readable line.
  const std::string msg = errorOf("kpath:no_such_path");
  EXPECT_NE(msg.find(" tcp_send_b2..20 tcp_recv_b2..20"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("tcp_send_b3"), std::string::npos) << msg;
  EXPECT_NE(msg.find(" sh_c"), std::string::npos) << msg;  // an ordinary name stays as it is
  EXPECT_LT(msg.size(), 1000u) << msg;
}

TEST(KpathSpec, LongOrBinarySpecIsQuotedShort) {
  const std::string name(10000, 'x');
  const std::string msg = errorOf("kpath:" + name + "\x01");
  EXPECT_LT(msg.size(), 1000u) << msg.size();
  EXPECT_EQ(msg.find('\x01'), std::string::npos);
  EXPECT_NE(msg.find("(10007 bytes)"), std::string::npos) << msg.substr(0, 300);
}

}  // namespace
}  // namespace smtlab
