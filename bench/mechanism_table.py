"""The mechanisms of docs/mechanisms.md's table, as data: what each one models (with its source), its config keys, the tests
that prove it, how to tell from a preset's config whether it is on, and how to switch it for the cost measurement.
bench/mechanism_cost.py checks every entry against the tree and measures the costs. Add a mechanism here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Switch:
    """How the cost is measured: `preset` with `on` and with `off` applied (one of them is usually the preset's own
    setting, i.e. empty)."""

    preset: str
    on: tuple[str, ...]
    off: tuple[str, ...]


@dataclass(frozen=True)
class Mechanism:
    name: str
    models: str                       # one line, with its source or "chosen"
    keys: tuple[str, ...]             # config keys (checked against `smtlab config show --json`)
    tests: tuple[tuple[str, str], ...]  # (file, test name) pairs, checked to exist in the file
    on_in: Callable[[dict], bool]     # given a preset's flattened config: is the mechanism on in it?
    switch: Switch | None = None
    not_separable: str = ""           # why no cost is measured, when switch is None
    note: str = ""


def _ne(key: str, value) -> Callable[[dict], bool]:
    return lambda cfg: cfg[key] != value


def _eq(key: str, value) -> Callable[[dict], bool]:
    return lambda cfg: cfg[key] == value


def _always(_cfg: dict) -> bool:
    return True


IT = "tests/integration/"
UC = "tests/unit/core/"
PY = "tests/python/"

MECHANISMS: list[Mechanism] = [
    Mechanism(
        "Stage units and thread choice (fetch / rename / retire)",
        "Core split into front end, rename/allocate, scheduler, load/store unit, retire, each owning its state; one "
        "thread-choice interface at fetch, rename and retire (Pentium 4 alternation at all three: Marr et al., ITJ "
        "2002; ICOUNT, BRCOUNT, MISSCOUNT: Tullsen et al., ISCA 1996; oldest-first: chosen)",
        ("core.fetch_policy", "core.rename_policy", "core.retire_policy", "core.fetch_threads"),
        ((UC + "thread_choice/thread_choice_test.cpp",
          "ThreadChoice.RenameRoundRobinStartsWithTheThreadAfterTheLastServed"),
         (UC + "thread_choice/thread_choice_test.cpp", "ThreadChoice.RetireOldestFirstDrainsTheOlderThreadFirst"),
         (IT + "smt_sharing_test.cpp", "SmtSharing.IcountBeatsRoundRobinWhenTheComputeThreadCanUseEveryFetchSlot")),
        _always,
        not_separable="structure, no switch; a policy is an alternative, not an add-on, and one thread has no choice",
    ),
    Mechanism(
        "Long-latency hook (STALL / FLUSH / MLP)",
        "A load missing the configured level gates (stall) or also squashes (flush) its thread's fetch until the data "
        "returns (Tullsen & Brown 2001); mlp does both from the load's predicted MLP distance on (Eyerman & "
        "Eeckhout 2007)",
        ("core.fetch_policy", "core.long_latency_miss", "core.mlp_predictor_entries"),
        ((IT + "long_latency_test.cpp", "LongLatency.StallKeepsAThreadWaitingOnMemoryFromFillingTheRob"),
         (IT + "long_latency_test.cpp", "LongLatency.FlushSquashesAfterEveryLoadThatMissesToMemory"),
         (IT + "smt_sharing_test.cpp", "SmtSharing.FlushBeatsIcountWhenTheComputeThreadLeavesFetchSlots"),
         (IT + "long_latency_test.cpp", "LongLatency.MlpFetchLetsAStreamOverlapItsMissesWhereFlushSerialisesThem")),
        lambda cfg: cfg["core.fetch_policy"] in ("stall", "flush", "mlp"),
        Switch("netburst", ("core.fetch_policy=flush",), ()),
        note="on = core.fetch_policy=flush, off = the preset's round_robin",
    ),
    Mechanism(
        "Uops and the microcode sequencer",
        "Load-op = load + op, store = STA + STD, RMW = 4 uops; an instruction of more than 4 uops comes from the "
        "microcode sequencer, holding its thread's fetch for ceil(uops / fetch_width) cycles (Intel optimization "
        "manual, MSROM above 4 uops; recorded counts from uops.info's Broadwell tables); micro-fusion from the "
        "Pentium M on (Agner Fog), so off on netburst",
        ("core.fu.int_div.uops", "core.micro_fusion", "core.fetch_width"),
        ((UC + "front_end/microcode_sequencer_test.cpp",
          "MicrocodeSequencer.AMicrocodedDivideBlocksItsOwnThreadsDecode"),
         (IT + "uop_window_test.cpp", "UopWindow.ARobOfNEntriesHoldsNOverFourReadModifyWritesWhileALoadBlocksRetire"),
         (UC + "rename_allocate/uop_rename_test.cpp", "UopRename.MicroFusionHalvesTheRobEntriesOfLoadOpCode")),
        _always,
        not_separable="no switch: recorded traces carry their uop counts, and the window counts uops",
    ),
    Mechanism(
        "Issue ports",
        "core.ports lists each port's unit classes, one uop per port per cycle, class:2 for a double-speed ALU "
        "(published port maps: Hinton et al., ITJ 2001 and the IA-32 optimization manual for NetBurst; the Intel "
        "optimization manual and Agner Fog for Broadwell; Architecture Day 2021 for the modern preset)",
        ("core.ports", "core.issue_width"),
        ((UC + "scheduler/issue_ports_test.cpp",
          "IssuePorts.TwoFpBoundThreadsOnNetburstNeverExceedOneFpExecuteUopPerCycle"),
         (UC + "scheduler/issue_ports_test.cpp",
          "IssuePorts.TwoIntStreamsOnNetburstReachFourAluUopsPerCycleOnTwoDoubleSpeedPorts")),
        _always,
        not_separable="no switch: every uop issues through a port; there is no per-class unit count to fall back to",
    ),
    Mechanism(
        "Physical register files",
        "Integer and FP/vector files through the shared capacity class; rename waits for a free register, CPI "
        "cause `regs` (NetBurst 128/128: IA-32 SDM Vol. 1; Haswell/Broadwell 168/168: Hammarlund et al., \"Haswell\", "
        "IEEE Micro 34(2) 2014; "
        "architectural registers per thread: chosen, x86-64's)",
        ("core.int_prf.entries", "core.int_prf.sharing", "core.int_prf.architectural", "core.fp_prf.entries",
         "core.fp_prf.sharing", "core.fp_prf.architectural"),
        ((IT + "register_file_limits_test.cpp", "RegisterFileLimits.RenamingEntriesCapInFlightWritersAndTheIpcFollows"),
         (UC + "rename_allocate/register_file_test.cpp",
          "RegisterFile.RenamingEntriesAreTheFileMinusTheArchitecturalOnes")),
        lambda cfg: cfg["core.int_prf.entries"] > 0 or cfg["core.fp_prf.entries"] > 0,
        Switch("netburst", (), ("core.int_prf.entries=0", "core.fp_prf.entries=0")),
        note="off = both files unlimited (entries 0)",
    ),
    Mechanism(
        "Post-retire store buffer",
        "A retired store keeps its store-queue entry until it writes the L1D at stores_per_cycle, a miss holding its "
        "thread's drain (Shanley, The Unabridged Pentium 4; Intel optimization manual: senior stores)",
        ("core.lsu.store_buffer", "core.lsu.stores_per_cycle"),
        ((IT + "lsu_store_buffer_test.cpp", "StoreBuffer.AStoreBoundLoopRunsAtTheDrainRate"),
         (IT + "lsu_store_buffer_test.cpp", "StoreBuffer.StoresMissingTheL1HoldTheirEntriesUntilTheirLinesAreOwned")),
        _eq("core.lsu.store_buffer", True),
        Switch("netburst", (), ("core.lsu.store_buffer=false",)),
    ),
    Mechanism(
        "Write-through L1D and shared write-combining buffers (NetBurst)",
        "A store does not allocate in the L1D; it goes into one of the core's wc_buffers line buffers, shared by its "
        "threads, merging or waiting for the least recently written one to be written into the L2 (IA-32 "
        "optimization manual 248966-013 table 1-1: L1D write through; Craver, Intel article 20465: a store missing "
        "the L1D goes to the L2 only; Intel 2009: the buffers are shared by the logical processors)",
        ("mem.l1d_write_through", "mem.wc_buffers", "mem.wc_write_cycles"),
        (("tests/unit/mem/write_combining_test.cpp",
          "WriteCombining.ANewLineWaitsForTheLeastRecentlyWrittenBufferToBeOwnedAndWritten"),
         ("tests/unit/mem/memory_system_test.cpp",
          "MemorySystemWriteThrough.AStoreMissDoesNotBringItsLineIntoTheL1dButTheL2OwnsIt"),
         (IT + "write_combining_test.cpp",
          "WriteCombiningCore.TwoThreadsOfFourLinesEachThrashTheSharedBuffersAndCutTheCoresStoreRate")),
        _eq("mem.l1d_write_through", True),
        Switch("netburst", (), ("mem.l1d_write_through=false",)),
    ),
    Mechanism(
        "Store-to-load forwarding",
        "A load covered by an older store takes its data at forward_latency without an L1D access; a partial "
        "overlap blocks it (Intel, A Detailed Look Inside the NetBurst Micro-Architecture, 2000, Store Forwarding, "
        "with its same-address rule; forward_latency chosen as an L1D hit)",
        ("core.lsu.forwarding", "core.lsu.forward_same_address", "core.lsu.forward_latency"),
        ((IT + "lsu_memory_order_test.cpp", "StoreForwarding.AForwardedLoadChainPaysTheForwardingLatencyPerLink"),
         (IT + "lsu_memory_order_test.cpp",
          "StoreForwarding.APartialOverlapBlocksTheLoadUntilTheStoreHasWrittenTheCache")),
        _eq("core.lsu.forwarding", True),
        Switch("netburst", (), ("core.lsu.forwarding=false",)),
        note="off = any overlap blocks the load until the store has written the L1D",
    ),
    Mechanism(
        "Memory-dependence predictor",
        "Loads go ahead of older stores with unknown addresses unless a per-PC bit says they conflicted; a violated "
        "order flushes from the load (NetBurst: Intel 2000, loads not predicted to alias move ahead; later cores: "
        "optimization manual, memory disambiguation; predictor size chosen)",
        ("core.lsu.memory_dependence", "core.lsu.predictor_entries"),
        ((IT + "lsu_memory_order_test.cpp", "MemoryDependence.ALoadBehindAnUnknownStoreAddressWaitsWithoutPrediction"),
         (IT + "lsu_memory_order_test.cpp", "MemoryDependence.ALoadThatWentAheadOfAConflictingStoreIsFlushed")),
        _ne("core.lsu.memory_dependence", "off"),
        Switch("netburst", (), ("core.lsu.memory_dependence=off",)),
        note="off = not modelled (a load never waits for unknown store addresses)",
    ),
    Mechanism(
        "4K aliasing",
        "A load matching an older store in address bits 0..11 only waits as if dependent (Intel optimization "
        "manual: 4-KByte aliasing)",
        ("core.lsu.alias_4k",),
        ((IT + "lsu_memory_order_test.cpp",
          "Aliasing.ALoadMatchingAnOlderStoreInTheLow12BitsOnlyWaitsWith4kAliasing"),),
        _eq("core.lsu.alias_4k", True),
        Switch("broadwell", (), ("core.lsu.alias_4k=false",)),
    ),
    Mechanism(
        "64K aliasing (NetBurst)",
        "The L1D holds one line per virtual address modulo 64 KiB, across both logical CPUs (Intel VTune reference, "
        "\"64K Aliasing Conflicts\")",
        ("core.lsu.alias_64k",),
        ((IT + "lsu_memory_order_test.cpp", "Aliasing.TwoThreadsWhoseStacksAre64KiBApartConflictWith64kAliasing"),),
        _eq("core.lsu.alias_64k", True),
        Switch("netburst", (), ("core.lsu.alias_64k=false",)),
    ),
    Mechanism(
        "Memory-ordering clears between siblings",
        "A store of one thread writing the L1D clears a sibling that read its line out of order (issued while an "
        "older load of its own waited for data): the sibling restarts after its last retired instruction (Intel SDM "
        "vol. 3A 8.2.2: logical processors order memory as separate processors; VTune: memory-ordering machine clear)",
        ("core.lsu.sibling_order_clears",),
        ((IT + "lsu_sibling_order_test.cpp", "SiblingOrder.AStoreToALineTheSiblingReadOutOfOrderClearsItOnce"),
         (IT + "lsu_sibling_order_test.cpp", "SiblingOrder.OnlyTheSameLineInTheSameMemoryClears"),
         (IT + "lsu_sibling_order_test.cpp", "SiblingOrder.TheOldestPendingLoadIsNeverCleared")),
        _eq("core.lsu.sibling_order_clears", True),
        Switch("netburst", ("core.lsu.sibling_order_clears=true",), ()),
        note="off in every preset (the study's kernel recordings share one per-CPU area, docs/model.md); the cost "
             "columns are the check at every store's write, one thread having no sibling to clear",
    ),
    Mechanism(
        "Stack engine",
        "push/pop/call/ret update the stack pointer at decode; an explicit read after them waits one cycle for a "
        "sync uop (Agner Fog; Intel optimization manual: stack pointer tracker); none on NetBurst",
        ("core.stack_engine",),
        ((IT + "register_file_limits_test.cpp", "StackEngine.PopsNoLongerChainThroughTheStackPointer"),
         (UC + "rename_allocate/register_file_test.cpp", "StackEngine.StackUpdatesDoNotChainThroughTheStackPointer")),
        _eq("core.stack_engine", True),
        Switch("broadwell", (), ("core.stack_engine=false",)),
    ),
    Mechanism(
        "Wrong path",
        "After a mispredict the thread fetches, renames and issues wrong-path uops (its own code at the predicted "
        "target, else its recent mix) until the branch's result, when they are squashed (the policy of "
        "every OoO core); on in every preset",
        ("core.wrong_path",),
        ((IT + "wrong_path_test.cpp", "WrongPathShare.WrongPathUopsTakeTheSiblingsAluSlotsOneForOne"),
         (IT + "wrong_path_code_test.cpp", "WrongPathCode.TheWrongPathIsTheThreadsCodeAtThePredictedTarget"),
         (UC + "front_end/wrong_path_test.cpp", "WrongPath.OffTheThreadStopsFetchingAtTheMispredict")),
        _eq("core.wrong_path", True),
        Switch("netburst", (), ("core.wrong_path=false",)),
    ),
    Mechanism(
        "Trace-cache build mode (NetBurst)",
        "After a trace-cache (L1I) miss the thread's instructions come from the one decoder the threads share, "
        "build_width per cycle, until a line hits (IA-32 optimization manual p.1-14: one decoder, one instruction per "
        "clock; Marr et al., ITJ 2002: the threads alternate on it)",
        ("core.build_width",),
        ((IT + "build_mode_test.cpp", "BuildMode.OneThreadDecodesAMissedLineAtTheDecodersRate"),
         (IT + "build_mode_test.cpp", "BuildMode.TwoBuildingThreadsShareOneDecoder"),
         (IT + "build_mode_test.cpp", "BuildMode.ASiblingOnTheTraceCacheKeepsItsSlot")),
        _ne("core.build_width", 0),
        Switch("netburst", (), ("core.build_width=0",)),
    ),
    Mechanism(
        "Instruction prefetch (NetBurst)",
        "When a code line misses the trace cache (L1I), or fetch reaches a line read this way, the next line on the "
        "thread's path is read into its streaming buffer at once (IA-32 optimization manual 248966-013 p.1-14: the "
        "instruction fetcher reads along the path the BTB predicts; p.1-36, p.2-55: two 64-byte buffers per logical "
        "processor)",
        ("core.fetch_prefetch",),
        ((IT + "build_mode_test.cpp", "BuildMode.PrefetchKeepsOneThreadsDecoderBusy"),
         (IT + "build_mode_test.cpp", "BuildMode.WithPrefetchTwoBuildingThreadsGainNothing"),
         (IT + "build_mode_test.cpp", "BuildMode.PrefetchFollowsThePathNotTheNextAddress")),
        _eq("core.fetch_prefetch", True),
        Switch("netburst", (), ("core.fetch_prefetch=false",)),
    ),
    Mechanism(
        "Microcode through the fetch slot (NetBurst)",
        "A microcoded instruction's ceil(uops / fetch_width) delivery cycles are fetch slots its thread wins by the "
        "fetch policy, alternating with a fetching sibling (IA-32 optimization manual p.1-38: every selection point "
        "alternates between logical processors; Marr et al., ITJ 2002: the microcode ROM is shared)",
        ("core.microcode_shares_fetch",),
        ((UC + "front_end/microcode_sequencer_test.cpp",
          "MicrocodeSequencer.SharingTheFetchSlotAloneTakesTheSameCycles"),
         (UC + "front_end/microcode_sequencer_test.cpp",
          "MicrocodeSequencer.SharingTheFetchSlotTheSequenceAndTheSiblingAlternate")),
        _eq("core.microcode_shares_fetch", True),
        Switch("netburst", (), ("core.microcode_shares_fetch=false",)),
    ),
    Mechanism(
        "Trace-cache lines per logical processor (NetBurst)",
        "An L1I line carries its thread's id: siblings running the same code each fill their own copy from the L2 "
        "(Shanley, The Unabridged Pentium 4, ch. 39; Marr et al., ITJ 2002: trace-cache entries tagged with thread "
        "information)",
        ("mem.l1i_thread_tagged",),
        (("tests/unit/mem/memory_system_test.cpp", "MemorySystem.ThreadTaggedL1iGivesEachThreadItsOwnCopyOfALine"),
         ("tests/unit/mem/memory_system_test.cpp", "MemorySystem.ThreadTaggedCopiesShareTheSetsWays")),
        _eq("mem.l1i_thread_tagged", True),
        Switch("netburst", (), ("mem.l1i_thread_tagged=false",)),
    ),
    Mechanism(
        "Pattern entries per logical processor (NetBurst)",
        "The shared pattern table's entries carry the logical processor that trained them and a thread uses only its "
        "own; in a 4-way table both threads' entries for an index coexist, and a branch with none in a full set is "
        "predicted statically (backward taken, forward not taken) and replaces the LRU way (Marr et al., ITJ 2002: "
        "the global history array's entries are tagged with a logical processor ID; static rule: Intel's NetBurst "
        "description; ways and replacement chosen)",
        ("core.branch.pht_thread_tagged", "core.branch.pht_assoc"),
        ((UC + "branch_predictor_test.cpp",
          "BranchPredictorTagged.AlternatingThreadsOnAForwardTakenBranchMispredictEverySighting"),
         (UC + "branch_predictor_test.cpp",
          "BranchPredictorTagged.AFullSetPredictsStaticallyAndReplacesItsLeastRecentlyUsedWay"),
         (UC + "branch_predictor_test.cpp", "BranchPredictorLoneThread.PredictsExactlyAsWithoutTags"),
         (IT + "branch_tags_test.cpp", "BranchTags.WithTwoWaysEachThreadKeepsItsOwnEntryAndNeverMispredicts")),
        _eq("core.branch.pht_thread_tagged", True),
        Switch("netburst", (), ("core.branch.pht_thread_tagged=false",)),
    ),
    Mechanism(
        "NetBurst replay",
        "A load's dependents issue for an L1 hit and re-issue every replay_period cycles on a miss, taking port slots "
        "again (Hinton et al. 2001; period chosen)",
        ("core.replay", "core.replay_period", "sim.replay_deferred"),
        ((UC + "scheduler/replay_test.cpp", "Replay.DependentsOfAMissingLoadIssueAgainEveryPeriodUntilTheData"),
         (IT + "wrong_path_test.cpp", "ReplayShare.ReplaysOfAMissingLoadsDependentTakeTheSiblingsAluSlots"),
         (IT + "replay_deferred_test.cpp", "ReplayDeferred.BookedAttemptsGiveTheStatisticsOfWakingAtEachAttempt")),
        _eq("core.replay", True),
        Switch("netburst", (), ("core.replay=false",)),
    ),
    Mechanism(
        "Page walks (through the caches, walk cache)",
        "A TLB miss loads one PTE per level through the data caches, a page-walk cache skipping the upper levels "
        "(Intel SDM Vol. 3A 4.10.3); or the fixed miss_latency (chosen default in the presets)",
        ("mem.page_walk.caches", "mem.page_walk.levels", "mem.page_walk.pwc_entries", "mem.page_walk.from_l2",
         "mem.dtlb.miss_latency"),
        ((IT + "topology_test.cpp", "PageWalk.ColdTwoLevelWalkCostsTwoColdLoads"),
         (IT + "topology_test.cpp", "PageWalk.WarmPageWalkCacheLeavesOnlyTheLastLevel")),
        _eq("mem.page_walk.caches", True),
        Switch("netburst", ("mem.page_walk.caches=true",), ()),
        note="on = walks through the caches (netburst: 2 levels, no walk cache), off = fixed miss_latency",
    ),
    Mechanism(
        "Packages with a per-package LLC",
        "system.packages x cores x threads, an LLC per package, DRAM shared; logical CPUs numbered as Linux "
        "enumerates them (APIC-ID order for 2.4/2.5); every preset has one package, the study's two-package "
        "experiment sets two",
        ("system.packages", "system.cores", "system.siblings_adjacent"),
        ((IT + "topology_test.cpp", "Topology.ALineLoadedOnOnePackageMissesOnTheOther"),
         (IT + "topology_test.cpp", "Topology.LinuxNumberingMapsCpusToPackageCoreThread"),
         (PY + "test_os_topology.py", "test_machine_exposes_packages_cores_threads_and_the_package_of_each_cpu")),
        _always,
        not_separable="topology, not an add-on: one thread on one package runs the same code either way",
    ),
    Mechanism(
        "OS costs (wake, TLB flush, timer)",
        "Cycles charged by the Python OS layer: waking a halted CPU (IPI + HLT exit), a TLB flush on an "
        "address-space switch unless tagged (Intel SDM: no PCID before Westmere), the timer tick (values chosen or "
        "from Linux intel_idle tables, per preset); charged only by Kernel(charge_os_costs=True)",
        ("os.wake_cycles", "os.timer_cycles", "mem.tlb_tagged"),
        ((PY + "test_os_topology.py", "test_wake_cost_delays_the_first_instruction_by_exactly_the_configured_cycles"),
         (PY + "test_os_topology.py", "test_timer_interrupt_takes_its_cycles_at_every_tick_of_a_running_cpu"),
         (PY + "test_os_topology.py", "test_tlb_flush_on_every_switch_between_address_spaces"),
         (IT + "topology_test.cpp", "Topology.TlbFlushMakesTheNextAccessToEachPageOfThatAddressSpaceMiss")),
        _always,
        not_separable="charged per OS event by smtlab.os (Kernel(charge_os_costs=True)), never inside `smtlab run`",
    ),
    Mechanism(
        "Event skipping",
        "When no core can change anything before cycle X the loop jumps to X (chosen: a run-loop setting that never "
        "changes a statistic)",
        ("sim.skip",),
        ((IT + "event_skipping_test.cpp", "SkipSwitch.RunsGiveIdenticalStatisticsWithAndWithoutSkipping"),
         (IT + "event_skipping_test.cpp", "SkipSwitch.OsStyleSwitchingGivesIdenticalEventsAndStatistics")),
        _eq("sim.skip", True),
        Switch("netburst", (), ("sim.skip=false",)),
        note="a speed-up, not a cost: the ratio is below 1 where cycles can be skipped",
    ),
]

# The order in which costs are measured (the table keeps its own order): every mechanism on the first workload
# (gen:mix), then on the next, each time the costliest and most consulted mechanisms first and the fetch-policy
# alternative last, so that an interrupted measurement (--runs-cache) covers every row at least once.
MEASURE_FIRST = ("Wrong path", "NetBurst replay", "Post-retire store buffer", "Store-to-load forwarding",
                 "Memory-dependence predictor", "Physical register files", "64K aliasing (NetBurst)",
                 "Page walks (through the caches, walk cache)", "Stack engine", "4K aliasing", "Event skipping",
                 "Long-latency hook (STALL / FLUSH / MLP)", "Trace-cache build mode (NetBurst)")

# One-thread workloads of the cost columns: (name, spec); cc1's is copy a of bench/programs.py's cache.
WORKLOADS = (("mix", "gen:mix"), ("cc1", "cc1.a.trace"))
