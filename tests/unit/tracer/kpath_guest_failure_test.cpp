// guestComplaint: what a failed kpath recording says about its guest. The console texts below have the shape of a
// real boot's (ttyS0 with "quiet": /init's and the probe's lines, carriage returns, the kernel's power-down line);
// the expected messages follow from the rules in kpath.hpp. Nothing here boots.

#include <gtest/gtest.h>

#include <string>

#include "smtlab/tracer/kpath.hpp"

namespace smtlab {
namespace {

TEST(KpathGuestFailure, TheProbesOwnMessageAndItsPhaseAreNamed) {
  const std::string console =
      "kpath: probe starting\r\n"
      "kpath probe: 30 instances of 81 paths\r\n"
      "kpath probe: system calls\r\n"
      "kpath probe: tcp\r\n"
      "kpath probe failed: a chat batch never reached the server's socket: no error code\r\n"
      "kpath: probe failed\r\n"
      "[   16.951522] reboot: Power down\r\n";
  EXPECT_EQ(guestComplaint(console),
            "the guest said: kpath probe failed: a chat batch never reached the server's socket: no error code "
            "(the probe's last phase: tcp)");
}

TEST(KpathGuestFailure, InitsComplaintsComeInOrderAndAtMostFour) {
  const std::string console =
      "kpath: insmod a failed\n"
      "kpath: insmod b failed\n"
      "kpath: insmod c failed\n"
      "kpath: cannot mount /dev/vda (ext4)\n"
      "kpath: insmod e failed\n"
      "kpath probe: 30 instances of 81 paths\n"
      "kpath probe: system calls\n"
      "kpath probe: disk\n"
      "kpath probe failed: open /mnt/kpath-fsync (is the disk mounted?): Read-only file system\n";
  EXPECT_EQ(guestComplaint(console),
            "the guest said: kpath: insmod a failed | kpath: insmod b failed | kpath: insmod c failed | "
            "kpath: cannot mount /dev/vda (ext4) (the probe's last phase: disk)");
}

TEST(KpathGuestFailure, APanicBeforeTheProbeIsNamed) {
  const std::string console =
      "SeaBIOS (version 1.16.2-debian-1.16.2-1)\n"
      "[    2.100000] Kernel panic - not syncing: VFS: Unable to mount root fs\n"
      "[    2.200000] ---[ end Kernel panic - not syncing ]---\n";
  EXPECT_EQ(guestComplaint(console),
            "the guest said: [    2.100000] Kernel panic - not syncing: VFS: Unable to mount root fs | "
            "[    2.200000] ---[ end Kernel panic - not syncing ]--- (the probe had not started)");
}

TEST(KpathGuestFailure, AGuestThatSaysNothingIsQuotedByItsLastLine) {
  // Progress lines are where the probe was, not complaints; the last line is quoted without its line ending.
  const std::string console =
      "kpath probe: 30 instances of 81 paths\r\nkpath probe: pipes\r\n[   9.5] reboot: Power down\r\n";
  EXPECT_EQ(guestComplaint(console),
            "its console ended with: [   9.5] reboot: Power down (the probe's last phase: pipes)");
  EXPECT_EQ(guestComplaint(""), "its console ended with:  (the probe had not started)");
}

}  // namespace
}  // namespace smtlab
