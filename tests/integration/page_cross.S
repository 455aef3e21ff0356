# Hand-written x86-64 program (no libc) whose loop bodies hold instructions that straddle a 4 KiB page boundary,
# each in the middle of a translated block (QEMU 7.2 starts translating it, finds it crosses the page, abandons it
# and ends the block before it). tracer_page_cross_test.cpp derives the expected records from this text; keep the
# two in step. Every executed instruction is listed here.
        .globl _start
        .text
_start:
        mov     $100, %ecx              # s1
        jmp     body1                   # s2

# Loop 1: movabs starts 2 bytes before the page end; QEMU has read 48 ba (2 bytes, on the first page) when the
# 8-byte immediate would cross.
        .balign 4096
        .skip   4096 - 12
body1:                                  # page end - 12
        add     $1, %eax                # a1  3 bytes (83 c0 01), page end - 12
        add     %eax, %ebx              # a2  2 bytes, page end - 9
        xor     %edx, %edx              # a3  2 bytes, page end - 7
        add     $2, %eax                # a4  3 bytes, page end - 5
        movabs  $0x1122334455667788, %rdx  # a5 10 bytes (48 ba imm64), page end - 2: straddles
        dec     %ecx                    # a6
        jnz     body1                   # a7  taken 99 times
        mov     $50, %ecx               # m1
        jmp     body2                   # m2

# Loop 2: lea with a SIB byte starts 3 bytes before the page end; QEMU has read 48 8d 94 (3 bytes) when the SIB
# byte would cross.
        .balign 4096
        .skip   4096 - 11
body2:                                  # page end - 11
        add     %eax, %esi              # b1  2 bytes, page end - 11
        add     $3, %edi                # b2  3 bytes, page end - 9
        mov     %esi, %r8d              # b3  3 bytes, page end - 6
        lea     0x1000(%rax,%rbx,2), %rdx  # b4 8 bytes (48 8d 94 58 imm32), page end - 3: straddles
        dec     %ecx                    # b5
        jnz     body2                   # b6  taken 49 times
        mov     $20, %ecx               # n1
        jmp     body3                   # n2

# Loop 3, the control: a complete instruction (jnz) ends exactly at the page end as the last of a block; it is real
# and must be kept. The fall-through continues on the next page.
        .balign 4096
        .skip   4096 - 7
body3:                                  # page end - 7
        add     $4, %eax                # c1  3 bytes, page end - 7
        dec     %ecx                    # c2  2 bytes, page end - 4
        jnz     body3                   # c3  2 bytes, page end - 2, taken 19 times
        mov     $60, %eax               # e1  first byte of the next page
        xor     %edi, %edi              # e2
        syscall                         # e3  exit(0)
