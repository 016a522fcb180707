"""Report benchmark (issue 18): the HTML report of an Adult release.

The release is the one ``veil demo`` makes: the bundled Adult table (30,162 records; 7
quasi-identifiers, sensitive occupation) under 5-anonymity and entropy 3-diversity with at most
2 % suppressed, by optimal full-domain generalization; it is made and written once, untimed.
Then, best of ``--repeat`` each:

* **from the manifest**: what ``veil report MANIFEST`` does once veil is imported: read and verify
  the manifest and its release (SHA-256), read the released table, check every model, the risk,
  the single-release attacks and the disclosure measures, draw the figures, render the page;
* **from the release in memory**: what ``veil anonymize --report`` adds to an anonymization
  (the same, with the utility of the ungeneralized input measured too);
* **the command**: ``veil report`` as a new process, Python's start and veil's imports included.

Goal: under 3 s. No peer is run: sdcMicro's report needs R and ARX's is drawn in its GUI, neither
of which runs from this harness.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import cpu_model, fmt_time
from timing import best_of, progress

GOAL_S = 3.0


def run(repeat: int) -> dict:
    """Time the report of the demo release (best of ``repeat`` each)."""
    import veil
    from veil.anonymize import FullDomain
    from veil.data.bundled import ADULT_QUASI_IDENTIFIERS, ADULT_SENSITIVE, load_adult
    from veil.models import EntropyLDiversity, KAnonymity
    from veil.report import read_release_manifest, release_file, release_report_of, render_html, report_html

    progress("report: making the Adult release")
    ds = load_adult(ADULT_QUASI_IDENTIFIERS, ADULT_SENSITIVE)
    release = FullDomain([KAnonymity(5), EntropyLDiversity(3, sensitive="occupation")], suppression_limit=0.02,
                         metric="loss").fit(ds).transform(ds)
    with tempfile.TemporaryDirectory() as folder:
        manifest, table, out = Path(folder) / "manifest.json", Path(folder) / "release.csv", Path(folder) / "r.html"
        release.write(table, manifest)

        def from_manifest() -> str:
            doc = read_release_manifest(manifest)
            return report_html(doc, release_file(manifest, doc))

        progress("report: from the manifest")
        manifest_s, page = best_of(from_manifest, repeat)
        progress("report: from the release in memory")
        memory_s, _ = best_of(lambda: render_html(release_report_of(release)), repeat)
        progress("report: the veil report command")

        def command() -> None:
            subprocess.run([sys.executable, "-m", "veil", "report", str(manifest), "--out", str(out)], check=True,
                           capture_output=True)

        command_s, _ = best_of(command, repeat)
        # The processor time of one more run: what the command costs on a machine shared with
        # other work, where the wall time also counts the waiting.
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        command()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        command_cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        load = os.getloadavg()[0]
    progress("")
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu_model(), "cores": os.cpu_count(), "python": platform.python_version(),
        "versions": {"veil": veil.__version__}, "repeat": repeat,
        "records": release.table.num_rows, "classes": release.released_classes.n_classes,
        "page_bytes": len(page.encode("utf-8")), "from_manifest_s": manifest_s, "from_memory_s": memory_s,
        "command_s": command_s, "command_cpu_s": command_cpu_s, "load_average": load,
        "goals": {"report_s": command_s, "report_met": command_s < GOAL_S},
    }


def terminal_report(results: dict) -> str:
    """The report printed to the terminal (80 columns)."""
    goals = results["goals"]
    return "\n".join([
        f"veil report benchmark, {results['date']}",
        f"{results['cpu']}, {results['cores']} cores, Python {results['python']}",
        ", ".join(f"{k} {v}" for k, v in results["versions"].items()) + f"; best of {results['repeat']}",
        "",
        f"Adult release: {results['records']:,} records in {results['classes']:,} classes; "
        f"page {results['page_bytes']:,} bytes",
        f"  from the manifest            {fmt_time(results['from_manifest_s']):>10}",
        f"  from the release in memory   {fmt_time(results['from_memory_s']):>10}",
        f"  veil report (new process)    {fmt_time(results['command_s']):>10}   "
        f"(processor time {fmt_time(results['command_cpu_s'])}; load average {results['load_average']:.1f})",
        "", "Goal",
        f"  the report under {GOAL_S:g} s: {fmt_time(goals['report_s'])}, {'met' if goals['report_met'] else 'NOT MET'}"])


def markdown_report(results: dict) -> str:
    """The Markdown report written beside the JSON."""
    goals = results["goals"]
    return "\n".join([
        "## Report benchmark", "",
        f"Measured {results['date']} on {results['cpu']} ({results['cores']} cores), Python {results['python']}, "
        + ", ".join(f"{k} {v}" for k, v in results["versions"].items())
        + f"; best of {results['repeat']} runs. Reproduce with `python benchmarks/run.py --only report`.", "",
        f"The `veil demo` release of Adult: {results['records']:,} records in {results['classes']:,} classes; the "
        f"page is {results['page_bytes']:,} bytes.", "",
        "| step | time |", "|---|---:|",
        f"| the report from the manifest (veil imported) | {fmt_time(results['from_manifest_s'])} |",
        f"| the report from the release in memory (`anonymize --report`) | {fmt_time(results['from_memory_s'])} |",
        f"| `veil report` as a new process | {fmt_time(results['command_s'])} |",
        f"| `veil report` as a new process, processor time | {fmt_time(results['command_cpu_s'])} |", "",
        f"The machine's load average during the run was {results['load_average']:.1f}.", "",
        "No peer is run: sdcMicro's report needs R and ARX's is drawn in its GUI.", "", "Goal:", "",
        f"- the report of an Adult release under {GOAL_S:g} s: {fmt_time(goals['report_s'])}, "
        f"**{'met' if goals['report_met'] else 'not met'}**", ""])
