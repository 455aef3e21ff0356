# Bare-metal x86 program (32-bit protected mode, paging off, interrupts off: a Multiboot image that
# qemu-system-x86_64 -kernel starts directly) for the full-system tracer: between smtlab's begin and end markers a
# loop whose block ends in front of an instruction that straddles a 4 KiB page. tracer_page_cross_test.cpp derives
# the expected records from this text; keep the two in step. Built with `as --32` and `ld -m elf_i386 -Ttext=0x100000`.
# Only encodings that mean the same in 64-bit mode are used (no one-byte inc/dec), as the plugin checks bytes with a
# 64-bit decoder.
        .text
        .code32
        .balign 4
multiboot:                              # within the first 8 KiB of the file: QEMU's Multiboot loader looks there
        .long   0x1BADB002              # magic
        .long   0                       # flags
        .long   -0x1BADB002             # checksum
        .globl  _start
_start:
        mov     $100, %ecx
        nopl    0x534d0000(%eax)        # begin marker, region 0 (bytes 0f 1f 80 00 00 4d 53): not a record
        jmp     body                    # r1

        .balign 4096
        .skip   4096 - 12
body:                                   # page end - 12
        add     $1, %eax                # a1  3 bytes, page end - 12
        add     %eax, %ebx              # a2  2 bytes, page end - 9
        xor     %edx, %edx              # a3  2 bytes, page end - 7
        add     $2, %eax                # a4  3 bytes, page end - 5
        mov     $0x11223344, %edx       # a5  5 bytes (ba imm32), page end - 2: straddles
        sub     $1, %ecx                # a6
        jnz     body                    # a7  taken 99 times
        nopl    0x534d8000(%eax)        # end marker, region 0: not a record
        mov     $0, %al
        out     %al, $0xf4              # isa-debug-exit: QEMU exits with status (0 << 1) | 1 = 1
        hlt
