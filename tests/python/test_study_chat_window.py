"""chat's measurement window: a window that holds no client message must never be reported as 0 messages/s, and the
warm-up must cover the start-up convoy.

On paper: chat spawns 4 tasks per user, 20 users per room; 3 of them (client receiver, server receiver and sender) block
on their socket as soon as they run. The adaptive warm-up waits until each of those has been switched in once, and each
switch runs the kernel's switch path (estimated: kpaths.SWITCH_INSTRUCTIONS = 1,500 instructions, real kernel paths off
here). With R = 3 rooms that is 180 x 1,500 = 270,000 instructions; the netburst core retires at most 3 per cycle (both
logical CPUs together), so the start-up takes more than 90,000 cycles = 0.056 ms at 1.6 GHz, HT off or on. A fixed 0.002
ms warm-up and 0.002 ms window (6,400 cycles in all) therefore ends before the first client sender has run: a fixed
window would report 0 messages/s (in the default study, 0 from 30 rooms up with HT off, the same convoy at 60 x R
switches of the recorded ~4,800-instruction switch path). Linux24 here serves equal tasks in turn (woken tasks join the
tail of its run list, ``run_list_head=False``): under 2.4.19's own order, the head, the senders' pipeline keeps the
tasks that have not run yet at the tail for longer than the whole bound (docs/study.md), which is the kernel's doing,
not the window's."""

from __future__ import annotations

import json
import math

import pytest

from smtlab.workloads import chat, kpaths, user_streams

ROOMS = 3
BLOCKING_TASKS = ROOMS * chat.USERS * 3
# 1.6 GHz netburst core, retire width 3 (configs/netburst.toml), every task's first switch (module doc).
CONVOY_MS = BLOCKING_TASKS * kpaths.SWITCH_INSTRUCTIONS / 3 / 1.6e6
FIRST_COME = {"run_list_head": False}  # module doc


@pytest.fixture(autouse=True)
def _estimates(monkeypatch):
    # The estimates the bound above is derived from: no recorded kernel paths, no recorded user programs.
    monkeypatch.setenv(kpaths.REAL_PATHS_ENV, "0")
    monkeypatch.setenv(user_streams.USER_STREAMS_ENV, "0")


@pytest.mark.parametrize("ht", [False, True])
def test_every_room_sends_in_a_window_shorter_than_the_start_up(ht):
    r = chat.run(ROOMS, ht, "linux24", warm_ms=0.002, window_ms=0.002, scheduler_params=FIRST_COME)
    # The warm-up ran until every receiver and server task had been switched in once: longer than the convoy's lower bound.
    assert r["warm_ms"] > CONVOY_MS
    assert 0.002 <= r["window_ms"] and r["warm_ms"] + r["window_ms"] <= chat.MAX_MS
    # Every room sent in the window (the window extends until then), so at least one message per room over the
    # window's length; a fixed window would report 0 here.
    assert min(r["sent_by_room"]) >= 1
    assert r["throughput"] >= ROOMS / (r["window_ms"] / 1000.0) * 0.999
    # Upper bound: a client message costs at least its user work, the trap and the send path (estimates), and the
    # core retires at most 3 instructions per cycle.
    per_message = chat.USER_WORK + kpaths.TRAP_INSTRUCTIONS + kpaths.PATHS["tcp_send"].instructions
    assert r["throughput"] <= 3 * 1.6e9 / per_message


def test_no_message_in_the_window_raises_instead_of_reporting_zero():
    # The bound (0.01 ms) is shorter than the start-up convoy (> 0.056 ms, module doc): no sender has run.
    with pytest.raises(chat.NoCompletion, match="no client message was sent in the window"):
        chat.run(ROOMS, False, "linux24", warm_ms=0.002, window_ms=0.002, max_ms=0.01)


def test_study_job_reports_chat_no_completion_as_missing(monkeypatch):
    from smtlab.study import ht_linux

    def boom(*args, **kwargs):
        raise chat.NoCompletion("chat 50 rooms: no client message was sent in the window")

    monkeypatch.setattr(chat, "run", boom)
    r = ht_linux._mt_job("chat", 50, False, "linux24", 1.0, 1.0)
    assert math.isnan(r["throughput"]) and "no client message" in r["no_completion"]


# --- steady-state windows (study --steady-chat) ------------------------------------------------------------------------
def _step(senders, others):
    return {"client_send": senders, "client_recv": others, "server_recv": 0, "server_send": 0}


def test_the_senders_passes_and_whole_cycles_of_a_scripted_series():
    # A series that starts inside a pass (steps 0-1: that pass's beginning is not seen), 3 steps of other roles, then
    # passes beginning at steps 5, 10 and 15, each 2 steps of senders (more than half the switch-ins) and 3 of other
    # roles; a step with no switch-ins and one where the senders have exactly half are not the senders'. Two whole
    # cycles lie between the first and the last beginning.
    pattern = [_step(9, 1), _step(5, 0)] + [_step(0, 7), _step(3, 3), _step(0, 0)]
    for _ in range(3):
        pattern += [_step(8, 2), _step(6, 5)] + [_step(1, 9), _step(0, 4), _step(2, 2)]
    assert chat.pass_starts(pattern) == [5, 10, 15]
    assert chat.whole_cycles(pattern) == 2
    # One pass, or a run whose every step mixes the roles with the senders in the minority (one room's): none whole.
    assert chat.whole_cycles(pattern[:12]) == 1 and chat.whole_cycles(pattern[:9]) == 0
    assert chat.pass_starts([_step(2, 5)] * 20) == [] and chat.whole_cycles([]) == 0


def test_a_steady_window_needs_a_room():
    with pytest.raises(ValueError, match="at least one room"):
        chat.steady_window_ms(0)


def test_steady_study_job_runs_chat_with_the_steady_window_and_bound(monkeypatch):
    from smtlab.study import ht_linux

    seen = {}

    def fake_run(rooms, ht, scheduler, warm_ms, window_ms, **kw):
        seen.update(rooms=rooms, warm_ms=warm_ms, window_ms=window_ms, **kw)
        return {"throughput": 1.0}

    monkeypatch.setattr(chat, "run", fake_run)
    ht_linux._mt_job("chat", 30, True, "linux25ht", 4.0, 6.0, steady=True)
    # 30 rooms x 12.5 ms; the bound leaves the default point's whole bound for the warm-up and the extension.
    assert seen["window_ms"] == 375.0 and seen["warm_ms"] == 4.0
    assert seen["max_ms"] == 4.0 + 375.0 + chat.MAX_MS
    assert seen["settle"] is True  # the steady window settles 2.5.32's sleep_avg after the warm-up
    assert seen["count_cycles"] is True  # and counts the whole cycles it held
    seen.clear()
    ht_linux._mt_job("chat", 30, True, "linux25ht", 4.0, 6.0)
    assert seen["window_ms"] == 6.0 and "max_ms" not in seen  # a default point: chat.run's own bound
    assert "settle" not in seen and "count_cycles" not in seen


def test_steady_windows_are_refused_for_another_workload(tmp_path):
    from smtlab.study import ht_linux

    with pytest.raises(ValueError, match="steady windows are a chat option"):
        ht_linux.run_multithreaded("dbench", tmp_path, True, 1, False, steady=True)


@pytest.mark.parametrize("option,passed,mode_text", [
    ("steady_chat", {"steady": True}, "with steady-state chat windows"),
    ("chat_whole_run", {"whole_run": True}, "with whole chat runs as the benchmark's source is written"),
])
def test_the_study_passes_its_chat_option_to_the_chat_section_only(monkeypatch, tmp_path, option, passed, mode_text):
    import pandas as pd

    from smtlab.study import report
    from smtlab.study.section import Section

    from smtlab.workloads import compile_jobs

    # run_study sets these for its worker processes; here they are restored after the test.
    monkeypatch.setenv(compile_jobs.CC1_ENV, "off")
    monkeypatch.setenv("SMTLAB_KERNEL_CACHE", str(tmp_path / "kernels"))
    calls = {}

    def section(key):
        def run(out_dir, quick, workers, progress, **kw):
            calls[key] = kw
            return Section(key, key, pd.DataFrame({"x": [1]}), "", [], {}, [])
        return run

    monkeypatch.setattr(report, "_sections", lambda: ({"chat": section("chat"), "dbench": section("dbench")}, []))
    monkeypatch.setattr(report, "fidelity", lambda tables: {"overall": float("nan"), "rows": 0, "published_rows": 0,
                                                            "sections": {}})
    monkeypatch.setattr(report, "fidelity_line", lambda fid: "Fidelity: none")
    report.run_study(tmp_path, quick=True, workers=1, only=["chat", "dbench"], progress=False, echo=False,
                     real_kernel=False, real_user=False, **{option: True})
    assert calls == {"chat": passed, "dbench": {}}
    assert mode_text in (tmp_path / "study.md").read_text()
    meta = json.loads((tmp_path / "checks.json").read_text())
    assert meta["steady_chat"] is (option == "steady_chat") and meta["chat_whole_run"] is (option == "chat_whole_run")


def test_settle_applies_to_linux25ht_only_and_counts_the_sleepers():
    """settle=True sets every live task's 2.5.32 sleep_avg after the warm-up. At its end every receiver and server
    task (3 per user) has run once and blocked on its socket; the first of them to block have slept through the rest
    of the start-up convoy (59 more switch-ins), far longer than their own one run. So at least one task went to the
    cap, and no more than the 4 per user spawned; no settling without the option or under Linux24, which has no
    sleep_avg."""
    r = chat.run(1, False, "linux25ht", warm_ms=0.002, window_ms=0.002, settle=True)
    assert 1 <= r["settled_at_cap"] <= 4 * chat.USERS
    assert chat.run(1, False, "linux25ht", warm_ms=0.002, window_ms=0.002)["settled_at_cap"] is None
    assert chat.run(1, False, "linux24", warm_ms=0.002, window_ms=0.002, settle=True,
                    scheduler_params=FIRST_COME)["settled_at_cap"] is None
