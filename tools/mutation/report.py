"""docs/mutation-report.md from the JSON of benchmarks/mutation_report.py: totals, a table
per kernel and per operator, and every missed bug and flagged-but-correct mutant with its
explanation (explain.py)."""

from __future__ import annotations

from collections import Counter, defaultdict

from tools.mutation.classify import (CLASSES, EQUIVALENT, FLAGGED_CORRECT, FRONTEND_CRASH, MISSED,
                                     REJECTED, VERIFIER_CRASH)
from tools.mutation.explain import explain

SHORT = {"rejected-by-frontend": "frontend", "killed": "killed",
         "flagged-interpreter-correct": "flagged, runs correct", "missed": "MISSED",
         "equivalent": "equivalent", "frontend-crash": "frontend crash",
         "verifier-crash": "verifier crash"}


def annotate(report: dict) -> None:
    """Give every row its `new_warnings` (what explain.py's rules look at) and, for a
    missed or flagged-but-correct mutant, its `explanation` (kind and why, or null)."""
    for row in report["mutants"]:
        row["new_warnings"] = new_warnings(report, row)
        if row["class"] in (MISSED, FLAGGED_CORRECT):
            rule = explain(row)
            row["explanation"] = {"kind": rule.kind, "why": rule.why} if rule else None


def unexplained_missed(report: dict) -> list[dict]:
    annotate(report)
    return [r for r in report["mutants"] if r["class"] == MISSED and explain(r) is None]


def _table(rows: list[dict], key: str) -> list[str]:
    groups: dict[str, Counter] = defaultdict(Counter)
    for r in rows:
        groups[r[key]][r["class"]] += 1
    used = [c for c in CLASSES if any(g[c] for g in groups.values())]
    out = [f"| {key} | mutants | " + " | ".join(SHORT[c] for c in used) + " |",
           "|---|---:|" + "---:|" * len(used)]
    for name, counts in groups.items():
        out.append(f"| {name} | {sum(counts.values())} | "
                   + " | ".join(str(counts[c]) for c in used) + " |")
    total = Counter(r["class"] for r in rows)
    out.append(f"| **all** | **{len(rows)}** | "
               + " | ".join(f"**{total[c]}**" for c in used) + " |")
    return out


def _runs(row: dict) -> str:
    return ", ".join(f"{r['mode']}/{r['seed']}: {r['outcome']}" for r in row["runs"])


def new_warnings(report: dict, row: dict) -> list[str]:
    """The row's verifier warnings that the unmutated kernel does not have."""
    base = set(report["targets"].get(row["target"], {}).get("baseline_warnings", []))
    return [w for w in row.get("verifier_warnings", []) if w not in base]


def _listing(report: dict, rows: list[dict], title: str, blurb: str) -> list[str]:
    out = [f"## {title} ({len(rows)})", "", blurb, ""]
    if not rows:
        return out + ["None.", ""]
    by_why: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        rule = explain(r)
        by_why[(rule.kind, rule.why) if rule else ("UNEXPLAINED", "no rule explains it")].append(r)
    for (kind, why), group in by_why.items():
        out += [f"**{kind}** ({len(group)}): {why}", ""]
        for r in group:
            errors = "; ".join(r["verifier_errors"][:1]) or "verifier clean"
            out.append(f"- `{r['id']}` {r['operator']} at {r['file']}:{r['line']}: "
                       f"`{r['before']}` -> `{r['after']}`. Runs: {_runs(r)}. "
                       f"Verifier: {_clip(errors)}")
            bad = next((x for x in r["runs"] if x["outcome"] != "correct"), None)
            if bad and bad["detail"]:
                out.append(f"  - interpreter ({bad['mode']}/{bad['seed']}): {_clip(bad['detail'])}")
        out.append("")
    return out


GAP_KINDS = ("verifier gap", "frontend gap", "false alarm", "warned: not modelled")


def _kinds(rows: list[dict], title: str) -> list[str]:
    counts = Counter(r["explanation"]["kind"] if r.get("explanation") else "UNEXPLAINED"
                     for r in rows)
    return ([f"{title}:", "", "| explanation | mutants |", "|---|---:|"]
            + [f"| {k} | {n} |" for k, n in counts.most_common()] + [""])


def _gaps(rows: list[dict]) -> list[str]:
    """One line per distinct verifier/frontend gap or false alarm, with its mutants."""
    groups: dict[tuple, list[str]] = defaultdict(list)
    for r in rows:
        e = r.get("explanation")
        if e and e["kind"] in GAP_KINDS:
            groups[(e["kind"], e["why"])].append(r["id"])
    out = ["## Gaps to fix (verifier, frontend, false alarms)", ""]
    for (kind, why), ids in groups.items():
        out.append(f"- **{kind}** ({len(ids)}: {', '.join(f'`{i}`' for i in ids)}): {why}")
    return out + ["", "The 'documented' and 'warned' kinds are limits the soundness statements "
                  "(docs/design/verifier.md, docs/design/verifier-protocol.md) already state; "
                  "each group below says which, and what closing it would take.", ""]


def _clip(text: str, limit: int = 240) -> str:
    text = text.replace("|", "/").replace("`", "'")
    return text if len(text) <= limit else text[:limit - 3] + "..."


def render_markdown(report: dict) -> str:
    annotate(report)
    rows = report["mutants"]
    total = Counter(r["class"] for r in rows)
    missed = [r for r in rows if r["class"] == MISSED]
    flagged = [r for r in rows if r["class"] == FLAGGED_CORRECT]
    crashes = [r for r in rows if r["class"] in (FRONTEND_CRASH, VERIFIER_CRASH)]
    unexplained = unexplained_missed(report)
    out = ["# Mutation report: does the verifier catch mutated kernels?", "",
           f"Generated by `python benchmarks/mutation_report.py` on {report['date']} at commit "
           f"{report['commit']} ({report['seconds']} s with {report['jobs']} processes). The "
           f"full data, every mutant with its diff, findings and interpreter runs, is "
           f"`benchmarks/results/mutation-report.json`.", "",
           "Each mutant is one source edit of a correct kernel (tools/mutation/"
           "operators.py). It goes through the frontend, the verifier (`argus.verify.verify`: "
           "an error finding is a flag) and the interpreter: two value-mode seeds and one "
           "fragment-exact seed on small shapes (step budget "
           "20000, 60 s per stage), outputs compared with the file's NumPy reference as "
           "`argus run --interpret` does. Classes:", "",
           "- **frontend**: the DSL rejected the mutant with a diagnostic (a catch);",
           "- **killed**: verifier error, and the interpreter shows a wrong result, deadlock, "
           "fault or race;",
           "- **flagged, runs correct**: verifier error, every run correct (false alarm, or "
           "a bug these shapes do not exercise; each one is labelled below);",
           "- **MISSED**: verifier clean, interpreter wrong (each one is explained below);",
           "- **equivalent**: verifier clean, every run correct.", "",
           "## Headline", "",
           f"- {len(rows)} mutants over {len(report['targets'])} kernels; "
           + ", ".join(f"{SHORT[c]} {total[c]}" for c in CLASSES if total[c]) + ".",
           f"- Missed bugs: {len(missed)} ({len(unexplained)} unexplained by a rule of "
           f"tools/mutation/explain.py). Of these, "
           f"{sum(1 for r in missed if (r.get('explanation') or {}).get('kind') in GAP_KINDS)} "
           f"are NOT accounted for by the soundness statements (verifier or frontend gaps, "
           f"or a not-modelled warning the statements do not mention): see 'Gaps to fix'; "
           f"the rest are limits the statements state.",
           f"- Flagged but every run correct: {len(flagged)}.",
           f"- Tool crashes: {len(crashes)}.", "",
           ]
    out += _kinds(missed, "Missed bugs by explanation") + _kinds(flagged, "Flagged-but-"
                                                                 "correct by explanation")
    out += _gaps(missed + flagged)
    out += ["Targets (the unmutated kernel verifies clean and runs correctly on each):", "",
           "| target | kernel | shapes | specialisation |", "|---|---|---|---|"]
    for name, t in report["targets"].items():
        shapes = ", ".join(f"{k}={v}" for k, v in t["shapes"].items())
        ov = ", ".join(f"{k}={v}" for k, v in t["overrides"].items()) or "defaults"
        out.append(f"| {name} | {t['file']}::{t['kernel']} | {shapes} | {ov} |")
    out += ["", "## Per kernel", ""] + _table(rows, "target")
    out += ["", "## Per operator", ""] + _table(rows, "operator") + [""]
    out += _listing(report, missed, "Missed bugs", "Verifier clean, interpreter wrong.")
    out += _listing(report, flagged, "Flagged, every run correct",
                    "Verifier error, the interpreter's runs all matched the reference.")
    if crashes:
        out += _listing(report, crashes, "Tool crashes", "A Python exception escaped the tool.")
    warned = [r for r in rows if r["class"] == EQUIVALENT and r.get("new_warnings")]
    out += [f"## Equivalent at these sizes, but not verified ({len(warned)})", "",
            "Verifier clean of errors and every run correct, but the verifier added "
            "warnings the unmutated kernel does not have (a part it does not model), so it "
            "claims nothing about them; some are bugs at other sizes (e.g. a producer that "
            "walks one tile row fewer when M % 128 == 1).", ""]
    out += [f"- `{r['id']}` {r['file']}:{r['line']}: `{r['after']}`; new warnings: "
            f"{', '.join(r['new_warnings'])}" for r in warned] + [""]
    rejected = [r for r in rows if r["class"] == REJECTED]
    out += [f"## Rejected by the frontend ({len(rejected)})", "",
            "Counted as caught; one example message per operator:", ""]
    seen = set()
    for r in rejected:
        if r["operator"] not in seen:
            seen.add(r["operator"])
            out.append(f"- {r['operator']} (`{r['id']}`, `{r['after']}`): "
                       f"{_clip(r['frontend_message'])}")
    return "\n".join(out) + "\n"
