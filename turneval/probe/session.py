"""One probe run from start to finish: reach the agent, measure the transport, play, score.

    RUN_DIR/
      v1.0/<task>/<id>/   input.wav output.wav stereo.wav  the task's metadata  probe.json
      v1.5/<task>/<id>/   ... (input.json: the caller's words, exact from the synthesizer)
      calls/<task>/<id>/  turneval's own calls (barge_in, backchannel, pause_hold, dialogue): caller.wav agent.wav
                          stereo.wav input.json probe.json (each part's plan, the agent event it waited for, when it
                          left; the verdict)
      failed/...          samples the agent broke, with the reason in probe.json
      excluded/...        samples whose agent audio began before the caller's (an earlier call's), kept out
      conversation.wav    every complete sample, caller left / agent right, 1 s apart
      probe.json          settings, transport delay, every sample's status, timing and verdict, load levels, gate figures
      probe.md            the probe's timing table, the calls' pass/fail, response latency against concurrency
      load.png            median and p90 response latency against the number of callers at once (--concurrency)
      fdb/                turneval fdb's fdb.json and fdb.md (output.json by offline Whisper)
      report/             turneval report on conversation.wav
"""
from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from turneval.probe.runner import (
    CallSlot,
    ProbeSettings,
    SampleOutcome,
    call_slots,
    concatenate,
    measure_transport_delay,
    outcome_rows,
    run_samples,
    settings_dict,
)
from turneval.probe.scenarios import Sample
from turneval.probe.summary import gate_figures, task_timing, timing_table, verdict_table
from turneval.probe.transports import ProbeError


if TYPE_CHECKING:  # turneval.reporting loads the report's stages: only when the probe scores
    from turneval.reporting import ReportOptions


MOCK_PREFIX = "mock:"
RUN_ENTRIES = ("v1.0", "v1.5", "calls", "failed", "excluded", "fdb", "report", "conversation.wav", "probe.json", "probe.md",
               "load.png")
"""What a probe run writes at the top of RUN_DIR (what ``overwrite`` removes first)."""


def prepare_run_dir(out_dir: str | Path, overwrite: bool = False) -> Path:
    """Refuse a folder that holds an earlier run (its samples would be scored with the new ones), or clear it.

    Only the entries a run writes (:data:`RUN_ENTRIES`) are removed; anything else in the folder stays.
    """
    import shutil

    out = Path(out_dir)
    found = [name for name in RUN_ENTRIES if (out / name).exists()]
    if found and not overwrite:
        raise ProbeError(f"{out} already holds a probe run ({', '.join(found)}); its samples would be scored with the "
                         "new ones. Give a new --out folder, or --overwrite to replace that run")
    for name in found:
        path = out / name
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
    out.mkdir(parents=True, exist_ok=True)
    return out


@dataclass
class ProbeRun:
    """What a run produced: the outcomes, the transport delay, the scored results, the gate figures."""

    out_dir: Path
    outcomes: list[SampleOutcome]
    delay: dict[str, Any]
    fdb: Any = None
    report: Any = None
    figures: dict[str, Any] = field(default_factory=dict)
    mock: dict[str, Any] | None = None
    load: list[dict[str, Any]] = field(default_factory=list)  # one row per --concurrency level

    @property
    def timing(self) -> dict[str, dict[str, Any]]:
        return task_timing(self.outcomes)

    def table(self) -> str:
        """probe.md: the timing per task, the calls' pass/fail, and with several levels the latency against load."""
        from turneval.probe.load import load_table

        parts = [timing_table(self.timing, self.delay), verdict_table(self.outcomes)]
        if len(self.load) > 1 or any(r["concurrency"] > 1 for r in self.load):
            parts.append(load_table(self.load))
        return "\n\n".join(p for p in parts if p)


def _write_json(path: Path, data: Any) -> None:
    from turneval.dataset_scripts.files import atomic_write_text, to_jsonable

    atomic_write_text(path, json.dumps(to_jsonable(data), indent=1) + "\n")


def write_run_files(run: ProbeRun, settings: ProbeSettings, scenarios: str) -> None:
    """probe.json, probe.md and conversation.wav of the complete samples."""
    from turneval.dataset_scripts.audio import write_audio
    from turneval.dataset_scripts.files import atomic_write_text

    stereo, index = concatenate(run.outcomes)
    if stereo.shape[1]:
        write_audio(run.out_dir / "conversation.wav", stereo)
    _write_json(run.out_dir / "probe.json", {
        "agent": settings.agent, "scenarios": scenarios, "settings": settings_dict(settings), "mock": run.mock,
        "transport_delay": run.delay, "timing": run.timing, "samples": outcome_rows(run.outcomes),
        "load": run.load, "conversation": index, "figures": run.figures,
    })
    if len(run.load) > 1:
        from turneval.probe.load import plot_levels

        plot_levels(run.load, run.out_dir / "load.png")
    atomic_write_text(run.out_dir / "probe.md", run.table() + "\n")


def score(run: ProbeRun, *, fdb: bool = True, report: bool = True, asr_model: str | None = None,
          report_options: ReportOptions | None = None, progress: bool = False,
          log: Callable[[str], None] = print) -> None:
    """Run ``turneval fdb`` on the run folder and ``turneval report`` on conversation.wav (with
    ``report_options``, its progress set by ``progress``); fill ``run.figures``."""
    with _libraries_quiet():
        _score(run, fdb, report, asr_model, report_options, progress, log)


@contextmanager
def _libraries_quiet() -> Iterator[None]:
    """transformers' "Loading weights" bars and its deprecation notices off while the probe scores, then as they were.

    They say nothing a probe's user can act on, and they land between the probe's tables."""
    import os

    from turneval.console import silence_libraries

    saved = {name: os.environ.get(name) for name in ("HF_HUB_DISABLE_PROGRESS_BARS", "TRANSFORMERS_VERBOSITY")}
    import transformers.utils.logging as hf_logging

    verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    silence_libraries()
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _score(run: ProbeRun, fdb: bool, report: bool, asr_model: str | None, report_options: ReportOptions | None,
           progress: bool, log: Callable[[str], None]) -> None:
    ok = [o for o in run.outcomes if o.status == "ok"]
    headline = None
    if fdb and any(o.sample.version != "calls" for o in ok):  # turneval's own calls are no Full-Duplex-Bench task
        from turneval.benchmark_runs.full_duplex_bench import evaluate_full_duplex_bench_run, whisper_words

        # output.json (the agent's words) does not exist for a live agent: offline Whisper writes none,
        # it supplies the words in memory, as `turneval fdb --transcribe` does
        run.fdb = evaluate_full_duplex_bench_run(run.out_dir, transcribe=whisper_words(asr_model, show_progress=progress),
                                   model_name=run.mock["name"] if run.mock else None, show_progress=progress)
        run.fdb.save(run.out_dir / "fdb")
        log(run.fdb.to_markdown(per_sample=False))
        unheard = sound_without_words(run)
        if unheard:
            log(f"note: the agent sent sound in {len(unheard)} sample(s) ({', '.join(unheard[:5])}"
                f"{', ...' if len(unheard) > 5 else ''}) but Whisper heard no speech in it (a tone, music or noise?); "
                "the take-over figures count the agent's words, so those samples read as no turn taken")
    if report and ok:
        from dataclasses import replace

        from turneval.reporting import ReportOptions, format_summary, save_report
        from turneval.reporting import report as make_report

        options = replace(report_options or ReportOptions(), progress=progress)
        run.report = make_report(run.out_dir / "conversation.wav", system_channel=1, options=options)
        save_report(run.report, run.out_dir / "report")
        log(format_summary(run.report))
        headline = (run.report.headline or {}).get("figures")
    run.figures = gate_figures(run.timing, run.delay, run.fdb, headline)


def probe(samples: list[Sample], settings: ProbeSettings, out_dir: str | Path, *, scenarios: str = "",
          progress: bool = False, log: Callable[[str], None] = print, repeat: int = 1,
          concurrency: list[int] | None = None) -> ProbeRun:
    """Play ``samples`` to the agent (``settings.agent``: a ws:// URL or ``mock:NAME``) and write the run folder.

    Each sample is played ``repeat`` times, at each level of ``concurrency`` (callers at once; default [1]).

    Raises:
        ProbeError: the agent cannot be reached, or sends audio in another format.
        KeyboardInterrupt: Ctrl-C; the samples written so far are complete, the one in flight is dropped.
    """
    from turneval.probe.mock_agents import MOCK_BEHAVIOURS, MockAgent

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)  # prepare_run_dir (the command calls it) refuses an earlier run first
    mock = None
    if settings.agent.startswith(MOCK_PREFIX):
        name = settings.agent[len(MOCK_PREFIX):]
        if name not in MOCK_BEHAVIOURS:
            raise ProbeError(f"{settings.agent}: no such mock agent; choose one of "
                             f"{', '.join(MOCK_PREFIX + n for n in MOCK_BEHAVIOURS)}")
        if settings.transport == "webrtc":
            raise ProbeError(f"{settings.agent}: the mock agents speak the WebSocket wires (raw, pipecat and the telephone "
                             "providers'), not WebRTC; give a SmallWebRTC agent's offer URL, or another --transport")
        mock = MockAgent(name, wire=settings.transport, sample_rate=settings.sample_rate)
    delay = measure_transport_delay(settings)
    log(f"transport delay (loopback echo, {settings.transport}): median {delay['median_ms']:.1f} ms, "
        f"p95 {delay['p95_ms']:.1f} ms")
    outcomes: list[SampleOutcome] = []

    def report_sample(outcome: SampleOutcome) -> None:
        outcomes.append(outcome)  # kept as it comes, so Ctrl-C still lists the samples written
        if outcome.status != "ok":
            log(f"{outcome.sample.folder}: {outcome.status}: {outcome.detail} (written to {outcome.folder})")

    run = ProbeRun(out, outcomes, delay, mock={"name": mock.behaviour.name, **mock.describe()} if mock else None)
    levels = concurrency or [1]
    plans = [(n, call_slots(samples, repeat, n, len(levels))) for n in levels]
    try:
        if mock is not None:
            with mock as url:
                _levels(run, samples, settings, url, plans, report_sample, progress, log)
        else:
            _levels(run, samples, settings, settings.agent, plans, report_sample, progress, log)
    finally:
        run.outcomes = [o for o in outcomes if o.folder is not None and o.folder.is_dir()]
        if run.outcomes:  # a run that wrote no sample (the agent refused the first call) leaves nothing to refuse a retry
            write_run_files(run, settings, scenarios)
    return run


def _levels(run: ProbeRun, samples: list[Sample], settings: ProbeSettings, url: str,
            plans: list[tuple[int, list[list[CallSlot]]]], on_sample: Callable[[SampleOutcome], None], progress: bool,
            log: Callable[[str], None]) -> None:
    """Every level of callers at once in turn (its calls: ``plans``); each level's row of the load table."""
    from turneval.probe.load import level_row

    for level, plan in plans:
        outcomes = run_samples(samples, settings, run.out_dir, url, on_sample, progress, plan=plan)
        run.load.append(level_row(level, outcomes))
        if len(plans) > 1:
            row = run.load[-1]
            median = "n/a" if row["median_s"] is None else f"{1000 * row['median_s']:.0f} ms"
            p90 = "n/a" if row["p90_s"] is None else f"{1000 * row['p90_s']:.0f} ms"
            log(f"{level} caller(s) at once: {row['calls']} calls, {row['failed']} failed, response median {median}, p90 {p90}")


def sound_without_words(run: ProbeRun) -> list[str]:
    """The scored samples where the probe heard the agent's sound but the fdb scoring found no word in it."""
    words: dict[str, int] = {}
    for task in getattr(run.fdb, "tasks", []) or []:
        for key, row in task.samples.items():
            if isinstance(row, dict) and "n_words" in row:
                words[f"{task.name}/{key}"] = row["n_words"]
    out = []
    for o in run.outcomes:
        key = f"{o.sample.task}/{o.sample.sample_id}"
        if o.status == "ok" and o.timing.get("agent_speech") and words.get(key) == 0:
            out.append(o.sample.folder)
    return out
