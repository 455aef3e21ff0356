// A config the user may not read (a preset in a folder closed to them, a file without read permission) is reported
// as "permission denied" with the path, not as a missing preset, nor passed over for a preset of the same name in
// another folder. As root (which may read anything) the program runs as 'nobody' (65534), from a copy it can reach.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../scratch_dir.hpp"
#include "cli_program.hpp"
#include "program_output.hpp"

namespace smtlab {
namespace {

namespace fs = std::filesystem;

class CliPermissions : public ::testing::Test {
 protected:
  void SetUp() override {
    ::chmod(dir_.path().c_str(), 0755);  // the program's user enters it (it starts there: paths are relative)
    fs::create_directory(dir_ / "closed");
    std::ofstream(dir_ / "closed" / "netburst.toml") << "seed = 3\n";
    std::ofstream(dir_ / "private.toml") << "seed = 3\n";
    // Closed to everyone but root; the program runs as another user when the test runs as root.
    ::chmod((dir_ / "closed").c_str(), 0700);
    ::chmod((dir_ / "private.toml").c_str(), 0600);
    if (::geteuid() != 0) {
      ::chmod((dir_ / "closed").c_str(), 0);
      ::chmod((dir_ / "private.toml").c_str(), 0);
    }
  }
  void TearDown() override { ::chmod((dir_ / "closed").c_str(), 0700); }

  test::ProgramResult run(const std::vector<std::string>& args,
                          std::vector<std::pair<std::string, std::string>> env = {}) const {
    return test::runProgram(
        args, io_.path(),
        {.limitSeconds = 60, .asUser = ::geteuid() == 0 ? 65534u : 0u, .cwd = dir_.path(), .env = std::move(env)});
  }

  test::ScratchDir dir_{"cli-permissions"};
  test::ScratchDir io_{"cli-permissions-io"};
};

void expectPermissionDenied(const test::ProgramResult& r, const std::vector<std::string>& fragments) {
  EXPECT_EQ(r.status, 1) << r.err;
  const std::vector<std::string> lines = test::nonEmptyLines(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_NE(lines[0].find("permission denied"), std::string::npos) << lines[0];
  for (const std::string& f : fragments) EXPECT_NE(lines[0].find(f), std::string::npos) << f << " in " << lines[0];
  EXPECT_EQ(r.out, "");
}

TEST_F(CliPermissions, APresetInAFolderTheUserCannotEnterIsPermissionDeniedNotAnotherFoldersPreset) {
  // SMTLAB_CONFIG_DIR names the closed folder; the checkout's configs/ also has a netburst preset, which must not be
  // read in its place.
  expectPermissionDenied(run({"config", "check", "netburst"}, {{"SMTLAB_CONFIG_DIR", (dir_ / "closed").string()}}),
                         {"config 'netburst'", "cannot enter folder", "closed"});
}

TEST_F(CliPermissions, AConfigPathThroughAClosedFolderOrAnUnreadableFileIsPermissionDenied) {
  expectPermissionDenied(run({"config", "check", "closed/netburst.toml"}),
                         {"config 'closed/netburst.toml'", "cannot enter folder", "closed"});
  expectPermissionDenied(run({"config", "check", "private.toml"}), {"cannot read", "private.toml"});
}

}  // namespace
}  // namespace smtlab
