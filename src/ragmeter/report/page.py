"""The report page: one self-contained HTML file, assembled under a strict CSP.

``write_report(results_dir)`` reads a directory written by ``ragmeter search``
(through :class:`ragmeter.runs.results.Results`, nothing is re-run) and writes
``report.html`` beside it, atomically. The data is
:func:`ragmeter.report.data.report_data`, the charts
:func:`ragmeter.report.charts.chart_specs`.

The page opens offline: the Vega bundle is inlined once. All text that comes
from the corpus, the questions or a model travels as JSON inside
``<script type="application/json">`` (with ``<``, ``>``, ``&``, U+2028 and
U+2029 escaped) and is put on the page with ``textContent`` only; a
Content-Security-Policy allows only the page's own scripts (by hash), so markup
inside a document can neither load anything nor run.
"""

from __future__ import annotations

import base64
import hashlib
import json
from importlib.resources import files
from pathlib import Path
from typing import Any

from ragmeter.errors import InputError
from ragmeter.files.outputs import check_output_file, results_lock, write_output
from ragmeter.report.charts import (
    _altair,
    _vega_version,
    _vegalite_version,
    chart_specs,
    vega_bundle,
)
from ragmeter.report.common import PAGE_SIZE, TARGET_HALF_WIDTH
from ragmeter.report.data import report_data
from ragmeter.runs.meta import RunMeta
from ragmeter.runs.results import Results

_ASSETS = "assets"


def write_report(
    results_dir: str | Path,
    out_path: str | Path | None = None,
    *,
    target_half_width: float = TARGET_HALF_WIDTH,
    page_size: int = PAGE_SIZE,
    accuracy_judge: str | None = None,
) -> Path:
    """Write one self-contained HTML report of ``results_dir``; return its path.

    The default path is ``<results_dir>/report.html``. The file is written to a
    temporary name and renamed into place, so a reader never sees half a page.
    ``accuracy_judge`` names the judge whose grades give the answer accuracy
    (default: ``accuracy_judge`` in ``answers/meta.json``, else its first judge).
    """

    Results(results_dir)  # a results directory, or a one-line error before any lock
    with results_lock(results_dir):  # no search may replace the directory while it is read
        results = Results(results_dir)
        out = Path(out_path) if out_path is not None else results.path / "report.html"
        if out.is_dir():
            raise InputError(
                f"{out}: is a directory; give a file name such as {out / 'report.html'}"
            )
        meta = RunMeta.from_json(results.meta)
        inputs = [("corpus", meta.corpus_path), ("test set", meta.testset_path)]
        check_output_file(out, "ragmeter report", inputs)  # before the work
        text = render_report(
            results,
            target_half_width=target_half_width,
            page_size=page_size,
            accuracy_judge=accuracy_judge,
        )
        write_output(out, text, "ragmeter report", inputs)
    return out


def is_report_file(path: Path) -> bool:
    """Whether ``path`` is an HTML report ragmeter wrote (its generator tag)."""
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return '<meta name="generator" content="ragmeter">' in head


def render_report(
    results: Results,
    *,
    target_half_width: float = TARGET_HALF_WIDTH,
    page_size: int = PAGE_SIZE,
    accuracy_judge: str | None = None,
) -> str:
    """The report of ``results`` as one HTML string."""
    if not target_half_width > 0:
        raise InputError(f"target half-width must be positive, got {target_half_width}")
    if page_size < 1:
        raise InputError(f"page size must be at least 1, got {page_size}")
    alt = _altair()
    data = report_data(
        results,
        target_half_width=target_half_width,
        page_size=page_size,
        accuracy_judge=accuracy_judge,
    )
    data["charts"] = chart_specs(data, alt)
    vl_version = _vegalite_version(alt)
    data["versions"]["vega-lite"] = vl_version or "bundled"
    data["versions"]["vega"] = _vega_version()
    bundle = vega_bundle(vl_version)
    return _assemble(data, bundle)


def json_for_script(obj: Any) -> str:
    """JSON that is safe inside ``<script type="application/json">``.

    ``<``, ``>`` and ``&`` become ``\\u003c``, ``\\u003e``, ``\\u0026``, so no
    ``</script>`` or ``<!--`` can end or confuse the block; U+2028 and U+2029 are
    escaped for older JavaScript parsers. ``JSON.parse`` reads it back unchanged.
    """
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _safe_inline_js(js: str) -> str:
    """Keep a script's text from closing or confusing the ``<script>`` element."""
    return (
        js.replace("</script", "<\\/script")
        .replace("<!--", "\\x3C!--")
        .replace("<script", "\\x3Cscript")
    )


def _asset(name: str) -> str:
    return (files("ragmeter.report") / _ASSETS / name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()


def _assemble(data: dict, bundle: str) -> str:
    import html as html_lib

    vega = _safe_inline_js(bundle)
    app = _safe_inline_js(_asset("report.js"))
    css = _asset("report.css").replace("</style", "<\\/style")
    csp = (
        "default-src 'none'; "
        f"script-src '{_sha256(vega)}' '{_sha256(app)}' 'unsafe-eval'; "
        "style-src 'unsafe-inline'; img-src data: blob:; font-src data:; "
        "base-uri 'none'; form-action 'none'"
    )
    page = _asset("template.html")
    parts = {
        "{{TITLE}}": html_lib.escape(data["title"]),
        "{{CSP}}": html_lib.escape(csp, quote=True),
        "{{CSS}}": css,
        "{{DATA}}": json_for_script(data),
        "{{VEGA}}": vega,
        "{{APP}}": app,
    }
    out = []
    rest = page
    # Substitute in one pass, in template order, so no value is scanned for placeholders.
    while True:
        hits = [(rest.find(k), k) for k in parts if rest.find(k) >= 0]
        if not hits:
            out.append(rest)
            break
        pos, key = min(hits)
        out.append(rest[:pos])
        out.append(parts[key])
        rest = rest[pos + len(key) :]
    return "".join(out)
