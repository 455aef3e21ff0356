#!/usr/bin/env bash
# Dumps `smtlab run --json` statistics (host-time fields removed) for a fixed set of varied runs into DIR, so that a
# refactor that must not change the model can be checked: run it with the old and the new binary and `diff -r`.
# usage: bench/stats_snapshot.sh SMTLAB_BINARY OUT_DIR [BENCH_TRACE_DIR]
# With BENCH_TRACE_DIR (bench.py's cache of recorded programs, e.g. build/bench-traces) the recorded programs cc1 and
# raytrace are run too, one and two threads, so a change is also checked on real streams. Binaries of two build trees
# read their own kernel: traces, recorded separately and not byte-identical: point both runs at one cache with
# SMTLAB_KERNEL_CACHE=<build>/kernels.
# With SNAPSHOT_OS=1 an OS-driven run is added (dbench, 20 clients, HT on, Linux 2.4, real kpath: kernel paths, user
# streams off): the only case that switches a hardware thread's source while the core runs (ThreadContext::reset),
# so a defect there shows only in this case. It imports `smtlab` as $PYTHON finds it: put the build's python/ first on
# PYTHONPATH, and point both runs at one recording with SMTLAB_KPATH_CACHE (recordings of two boots differ).
set -euo pipefail
bin=$1
out=$2
traces=${3:-}
mkdir -p "$out"
py=${PYTHON:-python3}
run() {  # name, then smtlab run arguments
  local name=$1
  shift
  "$bin" run -q --json "$out/$name.tmp.json" "$@" >/dev/null
  "$py" - "$out/$name.tmp.json" "$out/$name.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items() if k not in ("host_seconds", "instructions_per_host_second")}
    if isinstance(o, list):
        return [strip(v) for v in o]
    return o
d = strip(d)
d.get("config", {}).pop("sim", None)  # run-loop settings (sim.skip) never change a statistic
json.dump(d, open(sys.argv[2], "w"), indent=1, sort_keys=True)
PY
  rm "$out/$name.tmp.json"
}
run nb_mix_1t -c netburst --set core.threads=1 gen:mix -n 200000
run nb_mix_2t -c netburst gen:mix gen:mix,seed=2 -n 200000
run nb_chase_mix -c netburst gen:chase,footprint=16m gen:mix -n 100000
run nb_branchy_stream -c netburst gen:branchy gen:stream -n 100000
run nb_spin_alu -c netburst gen:spin gen:alu -n 100000
run nb_icount -c netburst --set core.fetch_policy=icount gen:mix gen:chase,footprint=4m -n 100000
run nb_flush -c netburst --set core.fetch_policy=flush gen:chase,footprint=64m gen:mix -n 50000
run nb_stall_shared -c netburst --set core.fetch_policy=stall --set core.rob.sharing=shared gen:chase,footprint=64m gen:fp -n 50000
run nb_misscount -c netburst --set core.fetch_policy=misscount gen:mix,footprint=64m,hot=0.5 gen:branchy -n 100000
run nb_kernel_call0 -c netburst --set core.threads=1 kernel:aim9_call0 -n 300000
run nb_kernel_pair -c netburst kernel:aim9_sieve kernel:aim9_div_int -n 200000
run bw_mix_1t -c broadwell --set core.threads=1 --set system.cores=1 gen:mix -n 200000
run bw_kernel_pair -c broadwell --set system.cores=1 kernel:aim9_string gen:chain -n 200000
run bw_2cores -c broadwell gen:mix gen:chase,footprint=8m gen:branchy gen:stream -n 50000
run modern_mix_2t -c modern --set system.cores=1 gen:mix,seed=3 kernel:sysbench_cpu -n 200000
run modern_fp_1t -c modern --set core.threads=1 --set system.cores=1 gen:fp --warmup 10000 -n 100000
if [[ -n $traces ]]; then
  for prog in cc1 raytrace; do
    for copy in a b; do
      [[ -f $traces/$prog.$copy.trace ]] || { echo "stats_snapshot: $traces/$prog.$copy.trace missing (run bench/programs.py)" >&2; exit 1; }
    done
    run "nb_${prog}_1t" -c netburst --set core.threads=1 "$traces/$prog.a.trace" -n 200000
    run "nb_${prog}_2t" -c netburst "$traces/$prog.a.trace" "$traces/$prog.b.trace" -n 200000
  done
fi
if [[ ${SNAPSHOT_OS:-0} == 1 ]]; then
  "$py" - "$out/os_dbench_linux24_ht.json" <<'PY'
import json, os, sys
from smtlab.workloads import fileserver, kpaths, user_streams
os.environ[user_streams.USER_STREAMS_ENV] = "0"
why = kpaths.enable_real_paths()
if why is not None:
    sys.exit(f"stats_snapshot: {why}")
r = fileserver.run("dbench", 20, True, "linux24", 5.0, 5.0)
tmp = sys.argv[1] + ".tmp"
with open(tmp, "w") as f:
    json.dump({k: v for k, v in r.items() if k != "host_seconds"}, f, indent=1, sort_keys=True, default=str)
os.replace(tmp, sys.argv[1])
PY
fi
