/*
 * Recognises the instruction that QEMU 7.x translated in part, abandoned and still reports to plugins, so that the
 * smtlab plugins (smtlab_tracer.c, smtlab_system_tracer.c) leave it out of the block they record.
 *
 * Copyright (C) 2026 the smtlab authors.
 * SPDX-License-Identifier: GPL-2.0-or-later (it is built against QEMU's GPL-2.0-or-later qemu-plugin.h; see LICENSE).
 *
 * Why: since QEMU 7.1 (target/i386/tcg/translate.c, advance_pc(), "This is a subsequent insn that crosses a page
 * boundary") the x86 translator stops decoding an instruction that is not the first of its block as soon as its next
 * byte read would leave the block's first page, removes it and ends the block before it; the instruction is then
 * translated again as the first one of the next block. The plugin layer of QEMU before 8.2 keeps the abandoned
 * instruction in the block it hands to plugins: qemu_plugin_tb_n_insns() counts it and its data holds the bytes read
 * before the abort (QEMU 8.2 fixed the count: "plugins: Set final instruction count in plugin_gen_tb_end"). A plugin
 * that believes the count records, each time the block runs, an instruction that never executed at that pc (the
 * "phantom record": same pc as the real one, undecodable bytes, no uops) and counts it.
 *
 * How it is recognised, from the mechanism: it can only be the last instruction of a block of two or more, it lies
 * on the block's first page and its recorded bytes end where the next read of at most 8 bytes (the longest
 * immediate QEMU reads at once) would leave that page, and its bytes are not one complete instruction (capstone
 * decodes no instruction of exactly that length). A complete instruction there (a branch ending a block near the
 * page end) is kept. The price, chosen: an instruction capstone cannot decode at all, ending within 8 bytes of a
 * page end as the last of a block, would be dropped as well; smtlab's decoder could not model it anyway (it would
 * be an Int with no registers and no uops).
 */
#ifndef SMTLAB_ABANDONED_INSN_H
#define SMTLAB_ABANDONED_INSN_H

#include <stddef.h>
#include <stdint.h>

#include <capstone/capstone.h>
#include <qemu-plugin.h>

#define SMTLAB_PAGE_SIZE 4096u    /* x86 TARGET_PAGE_SIZE */
#define SMTLAB_MAX_CODE_READ 8u   /* x86_ldq_code: the widest instruction-byte read of the x86 translator */

/* Needs a capstone handle (x86, 64-bit mode) and an instruction buffer from cs_malloc; the caller serialises calls.
 * Returns 1 when instruction i of a block of n is the abandoned one (then the block really holds n - 1). */
static inline int smtlab_insn_abandoned(csh cs, cs_insn *buf, struct qemu_plugin_tb *tb, size_t i, size_t n) {
  if (n < 2 || i != n - 1) return 0;
  struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
  const uint64_t first_page = qemu_plugin_tb_vaddr(tb) & ~(uint64_t)(SMTLAB_PAGE_SIZE - 1);
  const uint64_t page_end = first_page + SMTLAB_PAGE_SIZE;
  const uint64_t pc = qemu_plugin_insn_vaddr(insn);
  const size_t len = qemu_plugin_insn_size(insn);
  if (len == 0) return 1; /* not a single byte was read: no instruction at all */
  const uint64_t end = pc + len;
  if (pc < first_page || end > page_end || end + SMTLAB_MAX_CODE_READ <= page_end) return 0;
  const uint8_t *code = qemu_plugin_insn_data(insn);
  size_t size = len;
  uint64_t address = pc;
  if (cs_disasm_iter(cs, &code, &size, &address, buf) && buf->size == len) return 0; /* complete: a real one */
  return 1;
}

#endif
