"""turneval Space: analyse a conversation's turn-taking, and run listening tests.

Tabs:

1. Analyse: upload a stereo conversation (one speaker per channel) or the user's and the
   system's mono files, pick the system channel, and get the verdict (the figures to check
   first, each beside the human range measured on real conversations), the response-gap and
   timeline plots, the full metric table and the report JSON / HTML to download.
2. Listening test (naturalness): natural vs perturbed pairs in random A/B order; the rater
   picks the more natural clip and rates both on a 5-point scale.
3. Switching backchannel test (SWOZ): the listener's backchannels switch between the human
   and an algorithm at random intervals; the rater presses 'Not human!' when the listener
   does not sound human.

Answers are stored in SQLite (``$TURNEVAL_SPACE_DB``); the results tables read them back.

    python space/app.py --host 127.0.0.1 --port 7860
"""
from __future__ import annotations

import argparse
import base64
import io
import logging
import math
import os
import random
import sys
import tempfile
import threading
import uuid
from functools import lru_cache
from pathlib import Path
from typing import Any


# The Space runs app.py from its own folder; make the sibling modules importable from anywhere.
sys.path.insert(0, str(Path(__file__).resolve().parent))

import gradio as gr  # noqa: E402
from analysis import (  # noqa: E402
    TABLE_COLUMNS,
    AnalysisError,
    AnalysisResult,
    analyse,
    loaded_model,
    max_bytes,
    max_seconds,
    model_checkpoints,
    size_text,
    work_root,
)
from listening import ListeningError, ListeningStore, PairAnswer, preference_summary, yuck_rates  # noqa: E402
from stimuli import (  # noqa: E402
    PairStimulus,
    StimulusError,
    cache_dir,
    choose_pair,
    example_dialogues,
    example_files,
    pair_stimuli,
    serve_pair,
)
from swoz import (  # noqa: E402
    SwozError,
    build_swoz_stimulus,
    default_listener,
    judge_listener_backchannels,
    pause_rule_backchannels,
    switching_schedule,
)

from turneval.dataset_scripts.dialogue import DialogueError  # noqa: E402


TITLE = "turneval: turn-taking evaluation"
RATING_CHOICES = [("1 very unnatural", 1), ("2", 2), ("3", 3), ("4", 4), ("5 very natural", 5)]
PREFERENCE_COLUMNS = [
    "Perturbation", "Answers", "Raters", "Natural preferred", "95 % CI (Wilson)", "Majority agreement",
    "Krippendorff alpha (ordinal)", "Mean rating natural", "Mean rating perturbed",
]
YUCK_COLUMNS = ["Source", "Yucks", "Minutes listened", "Yucks per minute"]
PLAYER_ID = "swoz-player"
# The yuck and finish buttons read the playback position from the page's audio element.
READ_PLAYER_TIME_JS = f"""(t, s) => {{
  const a = document.querySelector('#{PLAYER_ID} audio');
  return [a ? a.currentTime : -1, s];
}}"""
# Finish also stops the playback: the session is over, nothing more should be heard or counted.
STOP_PLAYER_JS = f"""(t, s) => {{
  const a = document.querySelector('#{PLAYER_ID} audio');
  if (a) {{ a.pause(); }}
  return [a ? a.currentTime : -1, s];
}}"""


def _num(value: Any, pattern: str = "{:.2f}") -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    return pattern.format(value)


# ---------------------------------------------------------------------------------------
# Analyse tab
# ---------------------------------------------------------------------------------------


def headline_markdown(result: AnalysisResult) -> str:
    """The verdict as Markdown: the conversation, the sentence, each headline figure beside its
    human range with a plain mark, and the one note about the models."""
    from turneval.reporting.verdict import MARKS, range_notes, shown_range, shown_value

    h = result.headline
    lines = [f"### {h['conversation']} ({h['duration_s']:.1f} s, system = channel {h['system_channel']})"]
    if h["verdict"]:
        lines += [f"**{h['verdict_line']}**", "", "| Figure | This conversation | Human range | | Gate name |", "|---|---|---|---|---|"]
        for r in h["verdict"]:
            mark = f'<span class="mark-{r["mark"].replace(" ", "-")}">{MARKS[r["mark"]]}</span>'  # coloured by VERDICT_MARK_CSS
            lines.append(f"| {r['label']} | {shown_value(r['value'], r['unit'])} | {shown_range(r)} | {mark} | `{r['name']}` |")
        lines += [""] + range_notes(h["verdict"])
    if h["about_models"]:
        lines.append(f"\n> {h['about_models']}")
    return "\n".join(lines)


def run_analysis(stereo: str | None, user: str | None, system: str | None, system_channel: int):
    """Gradio handler: (verdict markdown, response-gap plot, timeline image, table, files, notes)."""
    try:
        result = analyse(stereo or None, user or None, system or None, int(system_channel))
    except AnalysisError as err:
        gr.Warning(str(err))
        return f"**Cannot analyse:** {err}", None, None, None, None, ""
    except Exception as err:  # noqa: BLE001 - never a bare "Error" on the page; the log keeps the traceback
        logging.getLogger(__name__).exception("analysis failed")
        name = Path(stereo or system or user or "upload").name
        return f"**Cannot analyse:** {name}: unexpected problem ({type(err).__name__}: {err}). Please report it with the file.", None, None, None, None, ""
    notes = "\n".join(f"- {n}" for n in result.notes)
    return (
        headline_markdown(result),
        None if result.gaps_png is None else str(result.gaps_png),
        str(result.timeline_png),
        result.table,
        [str(result.report_json), str(result.report_html)],
        notes,
    )


def _analyse_tab() -> None:
    models = model_checkpoints()
    stages = ", ".join(f"{name}: {'on' if path else 'not installed (skipped)'}" for name, path in models.items())
    gr.Markdown(
        "Upload a **stereo** recording of a human-AI conversation (one speaker per channel) and say which "
        f"channel is the system, or upload the two sides as mono files. Limits here: {max_seconds() / 60:g} min, "
        f"{size_text(max_bytes())}. Models: {stages}."
    )
    with gr.Row():
        stereo = gr.Audio(label="Stereo conversation", type="filepath", sources=["upload"], elem_id="stereo-upload")
        with gr.Column():
            system_channel = gr.Radio([("0 (left)", 0), ("1 (right)", 1)], value=1, label="System channel", elem_id="system-channel")
            run = gr.Button("Analyse", variant="primary", elem_id="analyse-button")
    with gr.Accordion("Or two mono files", open=False):
        with gr.Row():
            user = gr.Audio(label="User (mono)", type="filepath", sources=["upload"])
            system = gr.Audio(label="System (mono)", type="filepath", sources=["upload"])
    example_slot = gr.Column()  # the examples sit here, but need the outputs (below) to exist first
    status = gr.Markdown(elem_id="analysis-status")
    gaps = gr.Image(label="The system's response gaps beside people's (Switchboard)", type="filepath", elem_id="gaps", interactive=False)
    timeline = gr.Image(label="Timeline", type="filepath", elem_id="timeline", interactive=False)
    # tall enough for every row: the page scrolls, not the table inside it
    table = gr.Dataframe(headers=TABLE_COLUMNS, label="All figures (reference values: Talking Turns, human, in domain)", elem_id="summary-table", interactive=False, wrap=True,
                         max_height=100_000, column_widths=["9%", "33%", "11%", "7%", "10%", "30%"])
    files = gr.File(label="report.json and report.html", file_count="multiple", elem_id="report-files", interactive=False)
    notes = gr.Markdown(elem_id="analysis-notes")
    outputs = [status, gaps, timeline, table, files, notes]
    run.click(run_analysis, inputs=[stereo, user, system, system_channel], outputs=outputs, concurrency_limit=1, concurrency_id="analysis")
    examples = example_files()
    if examples:
        with example_slot:
            gr.Examples(
                [[str(p), 1] for p in examples], inputs=[stereo, system_channel], outputs=outputs,
                fn=lambda s, c: run_analysis(s, None, None, c), run_on_click=True, cache_examples=False,
                label="Bundled examples: click one to analyse it (synthetic conversations; the system is channel 1)",
            )


# ---------------------------------------------------------------------------------------
# Naturalness listening test
# ---------------------------------------------------------------------------------------


_PAIRS_LOCK = threading.Lock()


def cached_pairs() -> list[PairStimulus]:
    """The pairs, cut once per process (the lock keeps two first visitors from both cutting)."""
    with _PAIRS_LOCK:
        if not hasattr(cached_pairs, "value"):
            cached_pairs.value = pair_stimuli()
        return cached_pairs.value


@lru_cache(maxsize=1)
def _example_dialogues() -> dict[str, Any]:
    return {d.id: d for d in example_dialogues()}


def _pairs_by_id() -> dict[str, PairStimulus]:
    return {p.pair_id: p for p in cached_pairs()}


def preference_table(store: ListeningStore) -> list[list[Any]]:
    rows = []
    for kind, s in preference_summary(store.pair_answers()).items():
        rows.append([
            kind.replace("_", " "), s["n_answers"], s["n_raters"],
            f"{_num(100 * s['preference_rate'] if s['n_answers'] else None, '{:.0f}')} %",
            f"{_num(100 * s['ci_low'], '{:.0f}')}-{_num(100 * s['ci_high'], '{:.0f}')} %",
            _num(s["majority_agreement"]), _num(s["krippendorff_alpha"]),
            _num(s["mean_rating_natural"]), _num(s["mean_rating_perturbed"]),
        ])
    return rows


def next_pair(store: ListeningStore, rater: str, state: dict | None):
    """Gradio handler: pick a pair and an A/B order; returns (clip A, clip B, prompt, state, reset x3).

    The clips are served as ``clip_A.wav`` / ``clip_B.wav`` of equal length from a random folder
    (:func:`stimuli.serve_pair`): nothing in the page or its requests names the condition.
    """
    rater = (rater or "").strip()
    if not rater:
        gr.Warning("Enter your name (any nickname) first.")
        return None, None, "Enter your name (any nickname) first.", state, None, None, None
    try:
        pairs = cached_pairs()
    except StimulusError as err:
        return None, None, f"**No pairs:** {err}", state, None, None, None
    pair, natural_position = choose_pair(pairs, store.answered_pairs(rater), random.Random())
    clip_a, clip_b = serve_pair(pair, natural_position, work_root())
    state = dict(state or {})
    new_state = {
        "session": state.get("session") or uuid.uuid4().hex, "pair_id": pair.pair_id, "natural_position": natural_position,
        "count": state.get("count", 0), "answers": list(state.get("answers", [])),
    }
    prompt = f"Pair {new_state['count'] + 1}: listen to both clips, then answer."
    return str(clip_a), str(clip_b), prompt, new_state, None, None, None


def submit_pair(store: ListeningStore, rater: str, state: dict | None, choice: str | None, rating_a: int | None, rating_b: int | None):
    """Gradio handler: store the answer; returns (feedback, state). Nothing is revealed until 'Finish'."""
    if not state or not state.get("pair_id"):
        return "Press 'Next pair' first.", state
    if choice not in ("A", "B"):
        return "Choose the clip that sounds more natural (A or B).", state
    pair = _pairs_by_id().get(state["pair_id"])
    if pair is None:
        return "That pair is no longer available; press 'Next pair'.", state
    try:
        store.add_pair_answer(PairAnswer(
            rater=(rater or "").strip(), session=state["session"], pair_id=pair.pair_id, perturbation_type=pair.perturbation_type,
            natural_position=state["natural_position"], choice=choice, rating_a=rating_a, rating_b=rating_b,
        ))
    except ListeningError as err:
        return str(err), state
    answers = list(state.get("answers", [])) + [[pair.pair_id, state["natural_position"], choice]]
    count = state.get("count", 0) + 1
    feedback = f"Saved ({count} answer(s) in this session). Press 'Next pair' for another, or 'Finish' to see which clips were natural and the results."
    return feedback, {**state, "pair_id": None, "count": count, "answers": answers}


def finish_pairs(store: ListeningStore, state: dict | None):
    """Gradio handler: end the session, reveal this rater's pairs and the results; returns (feedback, results update, state)."""
    answers = (state or {}).get("answers") or []
    if not answers:
        return "Answer at least one pair first.", gr.update(), state
    pairs = _pairs_by_id()
    lines = [f"Thank you. In this session you chose the natural clip {sum(a[1] == a[2] for a in answers)} of {len(answers)} time(s):", ""]
    for k, (pair_id, natural_position, choice) in enumerate(answers, start=1):
        pair = pairs.get(pair_id)
        edit = f"a *{pair.perturbation_type.replace('_', ' ')}* edit ({pair.description})" if pair else "an edit"
        verdict = "natural" if choice == natural_position else "perturbed"
        lines.append(f"- Pair {k}: the natural clip was **{natural_position}**, the other had {edit}; you chose the {verdict} one.")
    return "\n".join(lines), gr.update(value=preference_table(store), visible=True), None


def _rater_box(elem_id: str) -> gr.Textbox:
    return gr.Textbox(label="Your name (any nickname; used only to group your answers)", elem_id=elem_id)


def _naturalness_tab(store: ListeningStore) -> None:
    gr.Markdown(
        "Each pair is the same stretch of a conversation twice: once as it happened and once with one turn-taking "
        "edit (a late or early response, a missing or inserted turn, extra backchannels). The order is random. "
        "Pick the clip whose **timing** sounds more natural and rate both. Which clip was which, and the results of "
        "everyone, are shown when you press **Finish**."
    )
    rater = _rater_box("rater")
    state = gr.State(None)
    start = gr.Button("Next pair", elem_id="next-pair")
    prompt = gr.Markdown()
    with gr.Row():
        clip_a = gr.Audio(label="Clip A", type="filepath", interactive=False, elem_id="clip-a")
        clip_b = gr.Audio(label="Clip B", type="filepath", interactive=False, elem_id="clip-b")
    choice = gr.Radio(["A", "B"], label="Which clip sounds more natural?", elem_id="pair-choice")
    with gr.Row():
        rating_a = gr.Radio(RATING_CHOICES, label="Naturalness of clip A", elem_id="rating-a")
        rating_b = gr.Radio(RATING_CHOICES, label="Naturalness of clip B", elem_id="rating-b")
    with gr.Row():
        submit = gr.Button("Submit answer", variant="primary", elem_id="submit-pair")
        finish = gr.Button("Finish", elem_id="finish-pairs")
    feedback = gr.Markdown(elem_id="pair-feedback")
    # hidden and empty until the rater finishes: the results would tell which edits sound unnatural
    results = gr.Dataframe(headers=PREFERENCE_COLUMNS, value=None, visible=False, interactive=False, elem_id="preference-results",
                           label="Results of all raters (each rater's latest answer per pair)")
    _export_row(store)
    start.click(lambda r, s: next_pair(store, r, s), inputs=[rater, state], outputs=[clip_a, clip_b, prompt, state, choice, rating_a, rating_b])
    submit.click(lambda r, s, c, a, b: submit_pair(store, r, s, c, a, b), inputs=[rater, state, choice, rating_a, rating_b], outputs=[feedback, state])
    finish.click(lambda s: finish_pairs(store, s), inputs=[state], outputs=[feedback, results, state])


# ---------------------------------------------------------------------------------------
# Switching backchannel test (SWOZ)
# ---------------------------------------------------------------------------------------


def _audio_data_url(audio) -> str:
    """The stimulus inline (Ogg Vorbis), so the page's own audio element can report its time."""
    import soundfile as sf

    buffer = io.BytesIO()
    sf.write(buffer, audio.T, 16000, format="OGG", subtype="VORBIS")
    return "data:audio/ogg;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def yuck_table(store: ListeningStore) -> list[list[Any]]:
    rates = yuck_rates(store.swoz_sessions(), store.yuck_presses())
    return [[source, r["n_yucks"], _num(r["minutes"]), _num(r["yucks_per_minute"])] for source, r in rates.items()]


ALGORITHMS = {"pause rule": "pause", "turn-taking judge (BC probability)": "judge"}


def start_swoz(store: ListeningStore, rater: str, dialogue_id: str | None, algorithm: str = "pause"):
    """Gradio handler: render a fresh stimulus (new random schedule); returns (player html, status, state)."""
    rater = (rater or "").strip()
    if not rater:
        return "", "Enter your name (any nickname) first.", None
    dialogues = _example_dialogues()
    if dialogue_id not in dialogues:
        return "", "Choose a conversation.", None
    dialogue = dialogues[dialogue_id]
    rng = random.Random()
    try:
        listener = default_listener(dialogue)
        schedule = switching_schedule(dialogue.duration, rng)
        if algorithm == "judge":
            times = judge_listener_backchannels(dialogue, listener, loaded_model("judge", model_checkpoints()["judge"]))
        else:
            times = pause_rule_backchannels(dialogue, listener)
        stimulus = build_swoz_stimulus(dialogue, listener, schedule, times)
    except (SwozError, DialogueError) as err:  # DialogueError: a judge checkpoint that does not load
        return "", f"**Cannot build the test:** {err}", None
    session = uuid.uuid4().hex
    store.start_swoz_session(session, rater, stimulus.stimulus_id, stimulus.duration, schedule)
    player = f'<div id="{PLAYER_ID}"><audio controls preload="auto" src="{_audio_data_url(stimulus.audio)}"></audio></div>'
    status = (f"Listener: channel {listener} ({'left' if listener == 0 else 'right'}). Press play, and press **Not human!** "
              "whenever the listener's backchannels (uh-huh, yeah, ...) do not sound like a human listener.")
    return player, status, {"session": session, "schedule": [vars(s) for s in schedule], "backchannels": stimulus.backchannels}


def press_yuck(store: ListeningStore, time_s: float, state: dict | None) -> str:
    """Gradio handler: store a 'not human' press at the player's time; returns the status line."""
    if not state:
        return "Press 'Start' first."
    if state.get("finished"):
        return "This session is finished; press 'Start' for a new one. (That press was not counted.)"
    try:
        store.add_yuck(state["session"], time_s)
    except ListeningError as err:
        return str(err)
    return f"'Not human' recorded at {time_s:.1f} s."


def finish_swoz(store: ListeningStore, time_s: float, state: dict | None):
    """Gradio handler: record the listened time, reveal the schedule, stop counting presses;
    returns (status, results update, state, yuck button update)."""
    if not state:
        return "Press 'Start' first.", gr.update(), state, gr.update()
    if state.get("finished"):
        return "This session is already finished; press 'Start' for a new one.", gr.update(), state, gr.update(interactive=False)
    listened = time_s if time_s is not None and time_s > 0 else None
    if listened is not None:
        store.finish_swoz_session(state["session"], listened)
    schedule = ", ".join(f"{s['start']:.0f}-{s['end']:.0f} s {s['source']}" for s in state["schedule"])
    return (f"Thank you. The sources were: {schedule}.", gr.update(value=yuck_table(store), visible=True),
            {**state, "finished": True}, gr.update(interactive=False))


def _swoz_tab(store: ListeningStore) -> None:
    gr.Markdown(
        "The listener's backchannels in this conversation come either from the **human** listener or from an **algorithm** "
        "(a pause-triggered rule, or the turn-taking judge when its checkpoint is installed; either reuses the listener's own "
        "backchannel sounds). The source switches at random intervals "
        "(mean 30 s, sd 10 s, 10-50 s; Switching Wizard of Oz, Poppe et al.). The sources and the results are shown "
        "when you press **Finish**."
    )
    rater = _rater_box("swoz-rater")
    choices = list(_example_dialogues())
    algorithms = [(label, key) for label, key in ALGORITHMS.items() if key != "judge" or model_checkpoints()["judge"]]
    state = gr.State(None)
    time_box = gr.Number(visible=False)
    with gr.Row():
        conversation = gr.Dropdown(choices, value=choices[0] if choices else None, label="Conversation", elem_id="swoz-conversation")
        algorithm = gr.Radio(algorithms, value="pause", label="Algorithm", elem_id="swoz-algorithm")
        start_button = gr.Button("Start", elem_id="swoz-start")
    player = gr.HTML(elem_id="swoz-player-box")
    status = gr.Markdown(elem_id="swoz-status")
    with gr.Row():
        yuck = gr.Button("Not human!", variant="stop", elem_id="yuck")
        finish = gr.Button("Finish", elem_id="swoz-finish")
    results = gr.Dataframe(headers=YUCK_COLUMNS, value=None, visible=False, interactive=False, elem_id="yuck-results",
                           label="Yuck rate by source (all sessions)")
    _export_row(store)

    def start(r, c, a):
        player_html, text, new_state = start_swoz(store, r, c, a)
        return player_html, text, new_state, gr.update(interactive=new_state is not None)

    start_button.click(start, inputs=[rater, conversation, algorithm], outputs=[player, status, state, yuck], concurrency_id="analysis")
    yuck.click(lambda t, s: press_yuck(store, t, s), inputs=[time_box, state], outputs=[status], js=READ_PLAYER_TIME_JS)
    finish.click(lambda t, s: finish_swoz(store, t, s), inputs=[time_box, state], outputs=[status, results, state, yuck], js=STOP_PLAYER_JS)


def _export_row(store: ListeningStore) -> None:
    """A button that hands out every stored answer as CSV files."""

    def export() -> list[str]:
        out = Path(tempfile.mkdtemp(prefix="analysis_export_", dir=work_root()))  # swept like analysis outputs
        return [str(p) for p in store.export_csv(out)]

    with gr.Row():
        button = gr.Button("Download all answers (CSV)", size="sm")
        files = gr.File(label="Answers", file_count="multiple", interactive=False)
    button.click(export, outputs=[files])


# ---------------------------------------------------------------------------------------
# The app
# ---------------------------------------------------------------------------------------


def build_demo(store: ListeningStore | None = None) -> gr.Blocks:
    """The Space's Blocks (the store defaults to ``$TURNEVAL_SPACE_DB``)."""
    store = store if store is not None else ListeningStore()
    # Gradio's own upload cache is swept hourly; analysis folders are swept by analyse().
    with gr.Blocks(title=TITLE, delete_cache=(3600, 3600)) as demo:
        gr.Markdown(f"# {TITLE}\nTurn-taking metrics of human-AI conversations (Talking Turns, TurnNat, FD-Bench, Full-Duplex-Bench, SWOZ).")
        with gr.Tabs():
            with gr.Tab("Analyse", id="analyse"):
                _analyse_tab()
            with gr.Tab("Listening test: naturalness", id="naturalness"):
                _naturalness_tab(store)
            with gr.Tab("Switching backchannel test", id="swoz"):
                _swoz_tab(store)
    return demo


VERDICT_MARK_CSS = ".mark-above,.mark-below{color:#c62828;font-weight:bold}.mark-within{color:#2e7d32}"
"""The verdict's marks in the colours of the HTML report (red and bold outside the human range)."""


def launch_kwargs() -> dict[str, Any]:
    """Paths Gradio may serve (examples, pair clips, analysis outputs), the upload cap and the page's CSS."""
    allowed = [str(cache_dir()), str(work_root())]
    examples = example_files()
    if examples:
        allowed.append(str(examples[0].parent))
    return {"allowed_paths": allowed, "max_file_size": max_bytes(), "css": VERDICT_MARK_CSS}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=TITLE)
    parser.add_argument("--host", default=os.environ.get("GRADIO_SERVER_NAME", "0.0.0.0"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT", "7860")))
    parser.add_argument("--db", default=None, help="SQLite file for the answers (default: $TURNEVAL_SPACE_DB or a temp folder)")
    args = parser.parse_args(argv)
    demo = build_demo(ListeningStore(args.db))
    demo.queue().launch(server_name=args.host, server_port=args.port, **launch_kwargs())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
