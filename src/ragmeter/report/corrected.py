"""The judge-corrected tables of the report's answer section, as ``ragmeter grade`` prints
them: the paired verdicts corrected by hand grades, one table per answer measure
(:class:`ragmeter.answers.corrected.CorrectedVerdicts`), and what the judge saved
(:class:`ragmeter.answers.analysis.Corrected`). Nothing is computed or formatted here:
the cells, titles and lines are the terminal's (:func:`~ragmeter.answers.corrected.corrected_cells`,
``saving_cells``, ``corrected_lines``, ``saving_lines``); this module shapes them into
JSON-ready data for the page."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragmeter.answers.analysis import AnswerReport
from ragmeter.answers.corrected import (
    CORRECTED_HEAD,
    SAVING_CAPTION,
    SAVING_HEAD,
    SAVING_SCOPE,
    CorrectedVerdicts,
    corrected_cells,
    corrected_lines,
    corrected_title,
    saving_cells,
    saving_lines,
    saving_rows,
)

__all__ = ["corrected_tables", "saving_table"]


def corrected_tables(corrected: Mapping[str, CorrectedVerdicts]) -> list[dict[str, Any]]:
    """Per measure, the judge-corrected verdicts: the title, columns, each pair's cells
    (with the pair's data and ``separated``), and the lines under the table."""
    return [
        {
            "measure": measure,
            "title": corrected_title(v),
            "head": list(CORRECTED_HEAD),
            "rows": [
                {**r.to_dict(), "separated": r.winner is not None, "cells": cells}
                for r, cells in zip(v.rows, corrected_cells(v), strict=True)
            ],
            "lines": corrected_lines(v),
        }
        for measure, v in corrected.items()
    ]


def saving_table(report: AnswerReport) -> dict[str, Any] | None:
    """What the judge saved, as ``grade`` prints it under the accuracy of ``report``
    (:func:`~ragmeter.answers.corrected.saving_rows`: each system's corrected accuracy,
    then all together): the title, columns, each row's cells and figures, the caption
    and the warnings; None when there is no corrected accuracy."""
    rows = saving_rows(report)
    if not rows:
        return None
    return {
        "title": f"What the judge saved, {SAVING_SCOPE}",
        "head": list(SAVING_HEAD),
        "rows": [
            {
                "system": c.system,
                "judge": c.judge,
                "weight": c.weight,
                "weight_rule": c.weight_rule,
                "n_hand": c.n_hand,
                "effective_hand": c.effective_hand,
                "saved": c.saved,
                "bound": c.bound,
                "cells": cells,
            }
            for c, cells in zip(rows, saving_cells(rows), strict=True)
        ],
        "caption": SAVING_CAPTION,
        "warnings": saving_lines(rows),
    }
