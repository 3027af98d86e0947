"""One recipe per checkpoint: every stage that made it, in order, from one command.

==========================================  ==========================================================
checkpoint                                  where it is
==========================================  ==========================================================
``turn_taking_judge_swb_revoiced``          ``checkpoints/`` (ships: the judge)
``future_activity_predictor_lookahead``     ``checkpoints/`` (ships: the report's predictor)
``future_activity_predictor_words``         ``checkpoints/`` (ships: the predictor that reads words)
``future_activity_predictor_switchboard``   ``benchmarks/baselines/`` (earlier; the look-ahead recipe starts there)
``future_activity_predictor_demo``          ``benchmarks/baselines/`` (earlier: the audio demo predictor)
==========================================  ==========================================================

The recipe of each is ``python -m turneval.training.recipes.<name>``.

Each takes ``--out FOLDER`` and ``--quick`` (the size CI runs: made-up data, tiny models, a
few steps), ``--dry-run`` (print the stages' commands) and ``--from-stage NAME`` (continue a
run). The stages are the project's own scripts (:mod:`.stages`); docs/training.md lists them.
"""
