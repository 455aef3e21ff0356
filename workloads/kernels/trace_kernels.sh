#!/usr/bin/env bash
# Compiles and traces every reference kernel once into the kernel:NAME cache ($SMTLAB_KERNEL_CACHE, else the build
# tree's kernels/), then prints a one-line summary per kernel. `cmake --build BUILD --target kernels` runs it;
# traces are otherwise made on first use of kernel:NAME. Without the tracer it says so and exits 0 (look-alikes).
# Usage: trace_kernels.sh [SMTLAB_PROGRAM]
set -euo pipefail
smtlab=${1:-smtlab}
names=$("$smtlab" trace kernels | sed -n 's/^  kernel:\([^ ]*\).*/\1/p')
if "$smtlab" trace kernels | grep -q "tracer unavailable"; then
  "$smtlab" trace kernels | head -1
  exit 0
fi
for k in $names; do
  start=$SECONDS
  n=$("$smtlab" trace info "kernel:$k" | sed -n 's/^instructions: *//p')
  printf 'kernel:%-18s %12s instructions  (%d s)\n' "$k" "$n" $((SECONDS - start))
done
