# Hand-written x86-64 program for the tracer tests (no libc: every executed instruction is listed here).
# tracer_test.cpp derives the expected records from this text; keep the two in step.
        .globl _start
        .text
_start:
        mov     $1000, %ecx             # 1
        xor     %eax, %eax              # 2  zeroing idiom: no source register
        lea     buf(%rip), %rsi         # 3
        movdqu  (%rsi), %xmm0           # 4  one 16-byte load (QEMU splits it into two 8-byte pieces)
loop:
        add     (%rsi), %rax            # 5  load + add: reads rsi and rax, writes rax and flags
        mov     %rax, 8(%rsi)           # 6  store
        dec     %ecx                    # 7
        jnz     loop                    # 8  taken 999 times, then falls through
        call    func                    # 9
        lea     buf(%rip), %rsi         # 11
        lea     64(%rsi), %rdi          # 12
        mov     $5, %ecx                # 13
        rep movsb                       # 14 five iterations
        mov     $60, %eax               # 15
        xor     %edi, %edi              # 16
        syscall                         # 17 exit(0)
func:
        imul    %rax, %rdx              # 10a
        ret                             # 10b
        .bss
        .balign 64
buf:    .zero   128
