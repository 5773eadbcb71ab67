#!/usr/bin/env python3
"""Writes BENCHMARKS.md's generated parts from the outputs scripts/benchmarks.sh kept.

usage: benchmarks-summary.py DOCUMENT LOGS CORES

LOGS holds, per area, <area>.txt (what the benchmark printed) and <area>.run (its command, commit, date and load
average, one per line). The summary table goes between `<!-- benchmarks:summary:begin -->` and
`<!-- benchmarks:summary:end -->`; each area's tables between `<!-- benchmarks:<area>:begin -->` and
`<!-- benchmarks:<area>:end -->`. Targets live here, beside the rows they judge (the side-by-side rows carry theirs
in the benchmark's own table).
"""

import re
import sys
from pathlib import Path

AREAS = ["sockets", "tls", "http", "stores", "memory", "notes"]

# (area, variant) -> (target ratio, what the ratio is against). A row is met when its paired median reaches the
# target.
TARGETS = {
    ("tls", "Tether async face"): 0.9,
    ("tls", "Tether delegate face (queue)"): 0.9,
    ("http", "URLConnection delegate (queue)"): 0.9,
    ("http", "URLConnection data(for:)"): 0.95,
    ("http", "URLConnection download(_:to:)"): 0.9,
    ("stores", "SQLiteStore"): 0.8,
}

# Rows compared with another variant than the table's baseline: (area, variant, other, target).
CROSS = [
    ("http", "URLConnection data(for:)", "URLSession dataTask", 1.5),
    ("http", "URLConnection delegate (queue)", "URLSession dataTask", 1.5),
    ("http", "URLConnection download(_:to:)", "URLSession downloadTask", None),
]


def tables(text):
    """The Markdown tables of a benchmark's output, each with the title printed before it."""
    found, title, rows = [], "", []
    for line in text.splitlines():
        if line.startswith("|"):
            if line.startswith("|---") and len(rows) >= 3:
                # A second table printed right under the first: its header is the row before this separator.
                found.append((title, rows[:-1]))
                rows = rows[-1:]
            rows.append(line.rstrip())
            continue
        if rows:
            found.append((title, rows))
            rows = []
        stripped = line.strip()
        if stripped.startswith(("## ", "### ")):
            title = stripped.lstrip("#").strip()
        elif stripped.startswith("Side by side"):
            title = stripped
    if rows:
        found.append((title, rows))
    return found


def cells(row):
    return [cell.strip() for cell in row.strip().strip("|").split("|")]


def number(text):
    match = re.search(r"(\d+(?:\.\d+)?)", text or "")
    return float(match.group(1)) if match else None


def rate(text):
    """A rate such as '10.6 k/s' or '651 MB/s' in units per second."""
    match = re.match(r"\s*(\d+(?:\.\d+)?)\s*([kMG]?)", text or "")
    if not match:
        return None
    return float(match.group(1)) * {"": 1, "k": 1e3, "M": 1e6, "G": 1e9}[match.group(2)]


def met(value, target):
    if value is None or target is None:
        return "—"
    return "yes" if value >= target else "no"


def summary_rows(area, run, text):
    date, commit = run[2], run[1]
    rows, seen = [], set()
    for title, table in tables(text):
        header = cells(table[0])
        body = [cells(row) for row in table[2:]]
        if header[:2] == ["row", "wall Tether"]:
            # The side-by-side tables (one per row, then all rows again): each row once; rows carry their targets.
            for row in body:
                if row[0] in seen:
                    continue
                seen.add(row[0])
                name, wall, cpu, target = row[0], row[3], row[6], row[7]
                goal = number(target) if target.startswith("≥") else None
                rows.append((name, "the raw engine, same work", f"{wall} wall, {cpu} CPU", target,
                             met(number(cpu), goal), date, commit, area))
            continue
        if header[:2] == ["variant", "bytes per idle connection"]:
            # Memory: Tether's bytes over NIO's, lower is better; the target is not more than NIO's.
            for row in body[1:]:
                rows.append((f"{title}: {row[0]}", "NIO channels", f"{row[2]} of NIO's bytes", "≤ 1.0×",
                             "yes" if (number(row[2]) or 9) <= 1.0 else "no", date, commit, area))
            continue
        if header[0] == "store" and len(header) > 4 and header[4].startswith("ratio"):
            # Single-create scaling: time for twice the creates over time for the creates; linear is 2.0.
            for row in body:
                rows.append((f"{title}: {row[0]}", "linear scaling (2.0)", row[4], "≤ 2.3",
                             "yes" if (number(row[4]) or 9) <= 2.3 else "no", date, commit, area))
            continue
        if header[:3] == ["deployment", "clients", "through the server(s)"]:
            # The notes service: through the server(s) beside the same calls straight on the store(s); the target
            # holds at 10 and 100 clients (one client waits on each round trip, which no server can hide).
            for row in body:
                goal = 0.8 if row[1] in ("10", "100") else None
                paired = re.search(r"\((\d+(?:\.\d+)?)×\)", row[7])
                rows.append((f"notes service, {row[0]}, {row[1]} clients", "the same calls on the store(s)",
                             row[7], f"≥ {goal}×" if goal else "—",
                             met(float(paired.group(1)) if paired else None, goal), date, commit, area))
            continue
        if header[:3] == ["deployment", "clients", "without accounts"]:
            for row in body:
                rows.append((f"notes service with accounts, {row[0]}, {row[1]} clients",
                             "the same servers without accounts", row[6], "—", "—", date, commit, area))
            continue
        if header[:2] == ["deployment", "changes"] and header[-1] == "missing":
            # Push latency: every change must reach the watcher.
            for row in body:
                rows.append((f"notes push to a watcher, {row[0]}", "every change pushed",
                             f"{row[-1]} of {int(row[1]) + int(row[-1])} missing; p50 {row[3].split(' / ')[0]} "
                             "from the add's reply", "0 missing", "yes" if row[-1] == "0" else "no",
                             date, commit, area))
            continue
        if header[:3] != ["variant", "rate", "vs"]:
            continue
        by_name = {row[0]: row for row in body}
        for row in body:
            name, versus, ratio, paired = row[0], row[2], row[3], row[4]
            if versus == "—" or name.startswith(("raw ", "NIO", "URLSession")):
                continue
            goal = TARGETS.get((area, name))
            rows.append((f"{title}: {name}", versus, f"{ratio} (paired {paired})",
                         f"≥ {goal}×" if goal else "—", met(number(paired), goal), date, commit, area))
        for cross_area, name, other, goal in CROSS:
            if cross_area != area or name not in by_name or other not in by_name:
                continue
            mine, theirs = rate(by_name[name][1]), rate(by_name[other][1])
            if not mine or not theirs:
                continue
            rows.append((f"{title}: {name}", other, f"{mine / theirs:.2f}× (best rounds)",
                         f"≥ {goal}×" if goal else "—", met(mine / theirs, goal), date, commit, area))
    return rows


def replace_between(document, name, content):
    begin, end = f"<!-- benchmarks:{name}:begin -->", f"<!-- benchmarks:{name}:end -->"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    if not pattern.search(document):
        sys.exit(f"benchmarks-summary: {begin} … {end} not found in the document")
    return pattern.sub(lambda _: f"{begin}\n{content.rstrip()}\n{end}", document)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    document_path, logs, cores = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    document = document_path.read_text()
    summary = []
    for area in AREAS:
        output, run_file = logs / f"{area}.txt", logs / f"{area}.run"
        if not output.exists() or not run_file.exists():
            continue
        run = run_file.read_text().splitlines()
        text = output.read_text()
        command, commit, date, load = run[0], run[1], run[2], run[3]
        parts = [f"Run of {date} on commit `{commit}` ({cores} cores, load average {load} before it):", "",
                 "```sh", f"cd Benchmarks && .build/release/{command}", "```", ""]
        for title, table in tables(text):
            parts += [f"**{title}**", ""] + table + [""]
        document = replace_between(document, area, "\n".join(parts))
        summary += summary_rows(area, run, text)
    lines = ["| path | compared with | ratio | target | met | run | area |", "|---|---|---|---|---|---|---|"]
    for path, versus, ratio, target, ok, date, commit, area in summary:
        lines.append(f"| {path} | {versus} | {ratio} | {target} | {ok} | {date}, `{commit}` | [{area}](#{area}) |")
    document = replace_between(document, "summary", "\n".join(lines))
    document_path.write_text(document)


if __name__ == "__main__":
    main()
