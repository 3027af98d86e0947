"""Golden-case runners, one module per golden/ set (or TurnNat part).

Each module defines ``SET`` (the golden folder name), optionally ``PREFIXES`` (file-name
prefixes it handles inside that folder; all files when absent) and ``run_case(case: dict)``,
which feeds ``case["input"]`` through turneval's public API and returns the output dict
to compare with ``case["output"]`` (keys the runner does not return are not compared).
"""
