# Hand-written x86-64 program for uop_decode_test.cpp (no libc: every executed instruction is listed here).
# 100 iterations of a loop around one 32-bit unsigned divide; the test derives its expected uops from this text.
        .globl _start
        .text
_start:
        mov     $100, %ecx              # 1  MOV (R32, I32): 1 uop
        mov     $7, %ebx                # 2  1
loop:
        mov     $1000, %eax             # 3  1
        xor     %edx, %edx              # 4  1
        div     %ebx                    # 5  DIV (R32): 10 uops, microcoded
        dec     %ecx                    # 6  1
        jnz     loop                    # 7  1; taken 99 times, then falls through
        mov     $60, %eax               # 8  1
        xor     %edi, %edi              # 9  1
        syscall                         # 10 exit(0): 1 (no row in the table, see docs/tracing.md)
