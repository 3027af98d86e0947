"""One recipe per bundled checkpoint: every stage that made it, in order, from one command.

==========================================  ==============================================
``checkpoints/``                            recipe (``python -m turneval.training.recipes.<name>``)
==========================================  ==============================================
``turn_taking_judge_swb_revoiced``          :mod:`~.turn_taking_judge_swb_revoiced`
``future_activity_predictor_demo``          :mod:`~.future_activity_predictor_demo`
``future_activity_predictor_switchboard``   :mod:`~.future_activity_predictor_switchboard`
==========================================  ==============================================

Each takes ``--out FOLDER`` and ``--quick`` (the size CI runs: made-up data, tiny models, a
few steps), ``--dry-run`` (print the stages' commands) and ``--from-stage NAME`` (continue a
run). The stages are the project's own scripts (:mod:`.stages`); docs/training.md lists them.
"""
