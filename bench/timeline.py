"""Where a crawl leaves a core idle: the demand of its process tree over time.

    python bench/timeline.py [--step 0.5] [--every 0.02] -- errcat crawl --repo ... --no-cache

Samples /proc every ``--every`` seconds for each process of the command's tree: whether it is
runnable (state R: running, or waiting for a core another program holds) and the CPU it used.
On a machine shared with other work, wall time says little, but how many of the crawl's own
processes *want* a core does not depend on the load: a step where fewer than two are runnable
is a core a 2-core machine would leave idle (the main process waiting for its workers, the
workers for the main process, a serial tail). Prints one row per ``--step`` seconds: the mean
number of runnable processes, each process's share of the samples it was runnable in, the CPU
seconds the tree used, and the progress lines the command printed in that step.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from collections import defaultdict

TICK = os.sysconf("SC_CLK_TCK")


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = defaultdict(list)
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(b")") + 2 :].split()
        kids[int(fields[1])].append(int(name))
    return kids


def _tree(root: int) -> list[int]:
    kids = _children()
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += kids.get(pid, [])
    return out


def _stat(pid: int) -> tuple[str, int, str] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        with open(f"/proc/{pid}/comm", "rb") as f:
            comm = f.read().strip().decode()
    except OSError:
        return None
    fields = stat[stat.rindex(b")") + 2 :].split()
    return fields[0].decode(), int(fields[11]) + int(fields[12]), comm


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--step", type=float, default=0.5)
    parser.add_argument("--every", type=float, default=0.02)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    start = time.monotonic()
    proc = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    lines: list[tuple[float, str]] = []

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append((time.monotonic() - start, line.rstrip()))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    samples: list[tuple[float, dict[int, tuple[str, int, str]]]] = []
    rescan = 0.0
    pids: list[int] = [proc.pid]
    while proc.poll() is None:
        now = time.monotonic() - start
        if now >= rescan:
            pids = _tree(proc.pid)
            rescan = now + 0.1
        seen = {pid: s for pid in pids if (s := _stat(pid)) is not None}
        samples.append((now, seen))
        time.sleep(args.every)
    reader.join(timeout=5)
    order = sorted({pid for _, seen in samples for pid in seen})
    label = {pid: ("main" if pid == proc.pid else f"p{i}") for i, pid in enumerate(order)}
    print("processes: " + ", ".join(f"{label[p]}={p}" for p in order))
    print(f"{'t (s)':>7} {'runnable':>8} {'cpu s':>6}  " + " ".join(f"{label[p]:>5}" for p in order) + "  progress")
    last_cpu: dict[int, int] = {}
    total_idle = 0.0
    dedicated = 0.0  # the step's CPU spread over min(runnable, 2) cores: its wall on an idle 2-core machine
    used = 0.0
    t = 0.0
    end = samples[-1][0] if samples else 0.0
    while t < end:
        window = [seen for when, seen in samples if t <= when < t + args.step]
        if window:
            runnable = sum(sum(1 for s in seen.values() if s[0] == "R") for seen in window) / len(window)
            share = {p: sum(1 for seen in window if seen.get(p, ("",))[0] == "R") / len(window) for p in order}
            cpu = 0
            for p in order:
                now_cpu = max((seen[p][1] for seen in window if p in seen), default=None)
                if now_cpu is not None:
                    cpu += now_cpu - last_cpu.get(p, now_cpu if p not in last_cpu and t > 0 else 0)
                    last_cpu[p] = now_cpu
            total_idle += max(0.0, 2 - runnable) * args.step
            used += cpu / TICK
            dedicated += cpu / TICK / min(2.0, max(runnable, 1.0))
            said = " | ".join(text[:60] for when, text in lines if t <= when < t + args.step)
            print(f"{t:7.1f} {runnable:8.2f} {cpu / TICK:6.2f}  " + " ".join(f"{share[p]:5.2f}" if share[p] else "    ." for p in order) + f"  {said}")
        t += args.step
    spent = {p: max((seen[p][1] for _, seen in samples if p in seen), default=0) / TICK for p in order}
    print("CPU by process (s, to the last sample): " + ", ".join(f"{label[p]} {spent[p]:.2f}" for p in order if spent[p] >= 0.01))
    print(f"wall {end:.1f} s; core-seconds a 2-core machine would leave idle (2 - runnable, summed): {total_idle:.1f}")
    print(
        f"CPU {used:.1f} s; on an idle 2-core machine, each step's CPU over min(runnable, 2) cores: {dedicated:.1f} s "
        f"of wall, {used / 2:.1f} s were both cores busy throughout"
    )
    sys.exit(proc.returncode)


if __name__ == "__main__":
    main()
