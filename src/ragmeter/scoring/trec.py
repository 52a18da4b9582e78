"""Scoring runs against relevance judgments (qrels) with ragmeter's measures.

The readers (:func:`read_qrels`, :func:`read_run`, :class:`Qrels`, :class:`Run`) live in
:mod:`ragmeter.scoring.trec_read` and are importable from here too.

Scoring (:func:`evaluate_run`)
------------------------------
The queries are those of the qrels. A query the run lacks scores 0 on every
measure (as ``trec_eval -c``); run queries without judgments are left out and
counted. A query whose judgments are all below the relevance level stays in and
scores 0 (as trec_eval). Each query's documents are ordered by score, highest
first; ties go by rank, then file order, or with ``trec_eval_compat`` as
trec_eval breaks them (document id, descending). An unjudged document has
grade 0. A document is relevant when its grade is at least ``level`` (default
1, trec_eval's); every relevant document is one relevant unit for recall, MAP
and R-precision.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ragmeter.engine import thread_map
from ragmeter.errors import InputError
from ragmeter.scoring import metrics
from ragmeter.scoring.trec_bytes import BLOCK, _numbers, _tokenize, decode_ids  # noqa: F401
from ragmeter.scoring.trec_read import (  # noqa: F401
    PathLike,
    Qrels,
    Run,
    _positions,
    read_qrels,
    read_run,
)

# BLOCK, _numbers, _tokenize and PathLike are here for older callers; setting BLOCK here
# changes nothing (the tokenizer reads its own, ragmeter.scoring.trec_bytes.BLOCK).

__all__ = [
    "COMPAT_MEASURES",
    "Evaluation",
    "Qrels",
    "Run",
    "evaluate_run",
    "read_qrels",
    "read_run",
    "run_order",
]

COMPAT_MEASURES = (
    "map",
    "ndcg@10",
    "precision@10",
    "recall@100",
    "mrr",
    "hit@10",
    "rprec",
)
"""Measures ``ragmeter evaluate`` reports by default."""


# ---------------------------------------------------------------------------
# scoring


@dataclass
class Evaluation:
    """Per-query scores of one run against qrels."""

    name: str
    query_ids: list[str]
    scores: dict[str, np.ndarray]
    missing: list[str] = field(default_factory=list)  # judged queries the run lacks
    unjudged: list[str] = field(default_factory=list)  # run queries without judgments
    depth: int = 0
    top: Matrix | None = None  # the top ``keep`` documents, when asked for

    def means(self) -> dict[str, float]:
        return {m: float(v.mean()) if v.size else 0.0 for m, v in self.scores.items()}


@dataclass
class Matrix:
    """One run as a ``(queries x depth)`` grade matrix over the qrels' queries."""

    grades: np.ndarray  # int8/int64, -1 where the run returned nothing
    missing: np.ndarray  # bool per query: the run has no line for it
    unjudged: list[str]
    docs: np.ndarray | None = None  # S array (queries x keep): the top documents
    scores: np.ndarray | None = None  # float64 (queries x keep): their scores


CHUNK = 1 << 17
"""Run lines graded and ordered at a time (cut where a query starts), so that the
temporary arrays stay small."""

CELLS = 1 << 19
"""Ranked documents (queries x depth) scored at a time by :func:`evaluate_run`."""


def run_matrix(run: Run, qrels: Qrels, trec_eval_compat: bool = False, keep: int = 0) -> Matrix:
    """Grade every retrieved document and lay the run out by query and rank."""
    nq = qrels.qids.size
    q_all, doc_all, score_all, line_all, rank_all, unjudged = _judged_lines(
        run, qrels, trec_eval_compat
    )
    width = max(doc_all.dtype.itemsize, qrels.doc.dtype.itemsize)
    judged = _judgments(qrels, width)
    counts = np.bincount(q_all, minlength=nq)
    depth = int(counts.max()) if counts.size else 0
    cuts, contiguous = _chunk_cuts(q_all, counts)
    if grade_max := (int(qrels.grade.max()) if qrels.grade.size else 0):
        if grade_max > 32767:
            raise InputError(f"{qrels.source or 'qrels'}: grades above 32767 are not supported")
    gm = np.full((nq, depth), -1, dtype=np.int16)
    docs = scores = None
    if keep:
        docs = np.zeros((nq, min(keep, depth)), dtype=doc_all.dtype)
        scores = np.zeros(docs.shape, dtype=np.float64)

    def chunk(span: tuple[int, int]) -> tuple:
        """A chunk's lines graded and put in rank order: (query, position, grade, doc,
        score), with the documents only when the top ones are kept."""
        a, b = span
        q, run_doc, score = q_all[a:b], doc_all[a:b], score_all[a:b]
        rank = None if rank_all is None else rank_all[a:b]
        run_w = _words(run_doc, width)  # (n, W) uint64: compares as the ids do
        grade = _grade_lines(run, judged, q, run_doc, run_w, line_all[a:b])
        order = _line_order(q, score, run_w, rank, trec_eval_compat, contiguous)
        if order is not None:
            q, grade, score = q[order], grade[order], score[order]
            if keep:
                run_doc = run_doc[order]
        return q, _positions(q), grade, run_doc, score

    # chunks on threads, in order (the first duplicate line found is the first in the file)
    spans = zip(cuts[:-1], cuts[1:], strict=True)
    for q, pos, grade, run_doc, score in thread_map(chunk, spans):
        gm[q, pos] = np.maximum(grade, 0)
        if keep:
            top = pos < keep
            docs[q[top], pos[top]] = run_doc[top]
            scores[q[top], pos[top]] = score[top]
    return Matrix(gm, counts == 0, unjudged, docs, scores)


def _judged_lines(run: Run, qrels: Qrels, trec_eval_compat: bool) -> tuple:
    """The run's lines whose query is judged, in file order, as ``(query row, doc, score,
    line, rank or None)``, and the run's queries without judgments (sorted)."""
    idx, known = _query_rows(run.qid, qrels.qids)
    all_known = bool(known.all())
    unjudged = (
        []
        if all_known
        else sorted({x.decode("utf-8", "replace") for x in np.unique(run.qid[~known])})
    )

    def pick(a: np.ndarray | None) -> np.ndarray | None:
        return a if a is None or all_known else a[known]

    rank = None if trec_eval_compat else pick(run.rank)  # trec_eval ignores the rank field
    return pick(idx), pick(run.doc), pick(run.score), pick(run.line), rank, unjudged


@dataclass
class _Judgments:
    """The qrels indexed for grading run lines: each judgment's (query, document) hash,
    and an open-addressing table of them (``None`` when two share a hash: then grades
    are joined on the strings, :func:`_grades_exact`)."""

    qrels: Qrels
    words: np.ndarray  # the judged documents as words (:func:`_words`)
    key: np.ndarray
    exact: bool
    slot_of: np.ndarray | None


def _judgments(qrels: Qrels, width: int) -> _Judgments:
    """The qrels indexed for documents ids ``width`` bytes wide: made once per qrels and
    width (kept on the qrels), since every run scored against them needs the same."""
    made = qrels.__dict__.setdefault("_indexed", {})
    if width not in made:
        judged_w = _words(qrels.doc, width)
        qkey = _pair_hash(qrels.q, judged_w)
        exact = np.unique(qkey).size != qkey.size  # two judgments share a hash
        slot_of = None if exact or not qkey.size else _table(qkey)
        made[width] = _Judgments(qrels, judged_w, qkey, exact, slot_of)
    return made[width]


def _chunk_cuts(q_all: np.ndarray, counts: np.ndarray) -> tuple[list[int], bool]:
    """Where the lines are cut into chunks of about :data:`CHUNK` (where a query starts),
    and whether each query's lines are contiguous (if not, the lines are one chunk)."""
    n = q_all.size
    # cut into chunks where a query starts, when each query's lines are contiguous
    heads = np.zeros(0, np.int64)
    if n:  # no (n,) integer temporary: one byte a line
        heads = np.concatenate(([0], np.flatnonzero(q_all[1:] != q_all[:-1]) + 1))
    contiguous = heads.size == int(np.count_nonzero(counts))
    cuts = [0]
    if contiguous:
        while cuts[-1] + CHUNK < n:
            nxt = int(np.searchsorted(heads, cuts[-1] + CHUNK))
            if nxt >= heads.size:
                break
            cuts.append(int(heads[nxt]))
    cuts.append(n)
    return cuts, contiguous


def _grade_lines(
    run: Run,
    judged: _Judgments,
    q: np.ndarray,
    run_doc: np.ndarray,
    run_w: np.ndarray,
    line: np.ndarray,
) -> np.ndarray:
    """Each line's grade (0 when unjudged); a document listed twice for one query is an
    error naming both lines."""
    qrels = judged.qrels
    rkey = _pair_hash(q, run_w)
    # grades: join on a hash of (query, document), each match checked word for word
    grade = np.zeros(q.size, dtype=np.int64)
    if judged.exact:
        grade = _grades_exact(q, run_doc, qrels)
    elif judged.slot_of is not None:
        j = _lookup(judged.key, judged.slot_of, rkey)
        hit = j >= 0
        jh = j[hit]
        ok = (qrels.q[jh] == q[hit]) & np.all(judged.words[jh] == run_w[hit], axis=1)
        grade[np.flatnonzero(hit)[ok]] = qrels.grade[jh[ok]]
    if rkey.size > 1:
        srt = np.sort(rkey)
        if np.any(srt[1:] == srt[:-1]):
            _raise_duplicate(run, run_doc, q, run_w, line, qrels)
    return grade


def _words(values: np.ndarray, width: int) -> np.ndarray:
    """Zero-padded byte strings as big-endian 64-bit words, ``(n, ceil(width / 8))``
    uint64: rows compare (lexicographically) as the strings do with strcmp."""
    words = max(-(-width // 8), 1)
    mat = np.zeros((values.size, words * 8), dtype=np.uint8)
    if values.size:
        size = values.dtype.itemsize
        mat[:, :size] = values.view(np.uint8).reshape(values.size, size)
    return mat.view(">u8").astype(np.uint64)


def _mix(h: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser (uint64, wrapping)."""
    h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return h ^ (h >> np.uint64(31))


def _hash(words: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row of words."""
    h = np.zeros(words.shape[0], dtype=np.uint64)
    for j in range(words.shape[1]):
        h = _mix(h ^ words[:, j] ^ np.uint64(j + 1))
    return h


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _pair_hash(q: np.ndarray, words: np.ndarray) -> np.ndarray:
    """A 64-bit hash of (query row, document words)."""
    return _mix(_hash(words) ^ (q.astype(np.uint64) * _GOLDEN))


def _table(keys: np.ndarray) -> np.ndarray:
    """An open-addressing table (linear probing) of distinct ``keys``: slot ->
    index into ``keys``, or -1; built a round at a time."""
    cap = 1 << max(int(2 * keys.size).bit_length(), 4)
    mask = np.uint64(cap - 1)
    slot_of = np.full(cap, -1, dtype=np.int64)
    pending = np.arange(keys.size)
    slots = (keys & mask).astype(np.int64)
    while pending.size:
        s = slots[pending]
        free = slot_of[s] < 0
        cand, cs = pending[free], s[free]
        _, first = np.unique(cs, return_index=True)  # one winner per free slot
        slot_of[cs[first]] = cand[first]
        won = np.zeros(pending.size, dtype=bool)
        won[np.flatnonzero(free)[first]] = True
        pending = pending[~won]
        slots[pending] = (slots[pending] + 1) & (cap - 1)
    return slot_of


def _lookup(keys: np.ndarray, slot_of: np.ndarray, probe: np.ndarray) -> np.ndarray:
    """For each of ``probe``, its index in ``keys`` or -1 (``slot_of``: :func:`_table`)."""
    cap = slot_of.size
    mask = np.uint64(cap - 1)
    out = np.full(probe.size, -1, dtype=np.int64)
    active = np.arange(probe.size)
    slot = (probe & mask).astype(np.int64)
    while active.size:
        j = slot_of[slot]
        empty = j < 0
        match = ~empty & (keys[np.maximum(j, 0)] == probe[active])
        out[active[match]] = j[match]
        more = ~empty & ~match
        active = active[more]
        slot = (slot[more] + 1) & (cap - 1)
    return out


def _query_rows(run_qids: np.ndarray, qids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each run line's row in the sorted, unique ``qids`` and whether it has one;
    looked up once per run of equal query ids."""
    n = run_qids.size
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
    head = np.empty(n, dtype=bool)
    head[0] = True
    np.not_equal(run_qids[1:], run_qids[:-1], out=head[1:])
    heads = np.flatnonzero(head)
    hv = run_qids[heads]
    if qids.size:
        idx = np.searchsorted(qids, hv)
        idx_c = np.minimum(idx, qids.size - 1)
        known = qids[idx_c] == hv
    else:
        idx_c = np.zeros(hv.size, dtype=np.int64)
        known = np.zeros(hv.size, dtype=bool)
    lengths = np.diff(np.append(heads, n))  # lines in each run of equal ids
    return np.repeat(idx_c.astype(np.int64), lengths), np.repeat(known, lengths)


def _raise_duplicate(run, run_doc, q, run_w, line, qrels) -> None:
    dup_order = np.lexsort((*(run_w[:, j] for j in range(run_w.shape[1] - 1, -1, -1)), q))
    qs, ws = q[dup_order], run_w[dup_order]
    same = (qs[1:] == qs[:-1]) & np.all(ws[1:] == ws[:-1], axis=1)
    if not same.any():
        return  # a hash collision, not a duplicate
    i = int(np.flatnonzero(same)[0])
    first, second = dup_order[i], dup_order[i + 1]
    a, b = sorted((int(line[first]), int(line[second])))
    name = run_doc[first].decode("utf-8", "replace")
    raise InputError(
        f"{run.source or run.name}:{b}: {name!r} already listed for query "
        f"{qrels.qids[q[first]].decode('utf-8', 'replace')!r} on line {a}"
    )


def _grades_exact(q: np.ndarray, docs: np.ndarray, qrels: Qrels) -> np.ndarray:
    """Grades by an exact string join (the fallback when hashes collide)."""
    vocab = np.unique(np.concatenate([qrels.doc, docs]))
    span = vocab.size
    qkey = qrels.q * span + np.searchsorted(vocab, qrels.doc)
    korder = np.argsort(qkey)
    qk = qkey[korder]
    rkey = q * span + np.searchsorted(vocab, docs)
    pos = np.minimum(np.searchsorted(qk, rkey), max(qk.size - 1, 0))
    grade = np.zeros(q.size, dtype=np.int64)
    if qk.size:
        hit = qk[pos] == rkey
        grade[hit] = qrels.grade[korder[pos[hit]]]
    return grade


def run_order(
    q: np.ndarray,
    score: np.ndarray,
    rank: np.ndarray | None = None,
    doc: np.ndarray | None = None,
    *,
    trec_eval_compat: bool = False,
) -> np.ndarray:
    """The order in which a run's lines are read: by query, score highest first, then
    the tie order (:func:`_tie_keys`); every reader of run lines orders them here.

    ``q`` holds each line's query as an integer (lines of one query come out together,
    in the order of ``q``'s values), ``score`` its score, ``rank`` its rank (``None``:
    file order breaks ties) and ``doc`` its document id as bytes (needed with
    ``trec_eval_compat``, whose ties go by document id, descending, on scores held as
    32-bit floats). The arrays are in file order.
    """
    words = None
    if trec_eval_compat:
        if doc is None:
            raise ValueError("trec_eval's tie order needs the document ids")
        words = _words(doc, doc.dtype.itemsize)
    order = _line_order(q, score, words, rank, trec_eval_compat, grouped=True)
    return np.arange(q.size) if order is None else order


def _line_order(
    q: np.ndarray,
    score: np.ndarray,
    doc: np.ndarray | None,
    rank: np.ndarray | None,
    trec_eval_compat: bool,
    grouped: bool,
) -> np.ndarray | None:
    """:func:`run_order` with the ids as words (:func:`_words`); ``None`` when the lines
    are in order as they are. ``grouped=False`` (a query's lines are known to be apart)
    goes straight to the full sort."""
    # order within each query, on integer keys: the score's bits as an integer
    # that sorts as the float does (-0.0 as 0.0). trec_eval keeps a score as a C
    # float: scores equal in 32 bits are a tie, broken by its tie order
    ranked = score.astype(np.float32).astype(np.float64) if trec_eval_compat else score
    bits = (ranked + 0.0).view(np.int64)
    skey = bits ^ ((bits >> 63) & np.int64(0x7FFFFFFFFFFFFFFF))
    order = _presorted(q, skey, doc, rank, trec_eval_compat) if grouped else False
    if order is False:
        # by query, score descending (~skey), then the tie order
        order = np.lexsort((*_tie_keys(doc, rank, trec_eval_compat), ~skey, q))
    return order


def _tie_keys(
    doc: np.ndarray | None, rank: np.ndarray | None, trec_eval_compat: bool
) -> tuple[np.ndarray, ...]:
    """The order of documents with equal scores in one query, as :func:`numpy.lexsort`
    keys (least significant first); both ways of ordering a run end with these.

    trec_eval's order (``trec_eval_compat``): document id descending, compared as strcmp
    compares (``doc`` holds each id as big-endian words, :func:`_words`; the complement
    of a word sorts backwards). Otherwise rank ascending when the run has ranks, then
    file order (the sort is stable).
    """
    if trec_eval_compat:
        return tuple(~doc[:, j] for j in range(doc.shape[1] - 1, -1, -1))
    return () if rank is None else (rank,)


def _presorted(
    q: np.ndarray,
    skey: np.ndarray,
    doc: np.ndarray | None,
    rank: np.ndarray | None,
    trec_eval_compat: bool,
) -> np.ndarray | None | bool:
    """The order without a full sort when the lines already come grouped by query
    and by descending score (as run files are written): only runs of tied scores
    are sorted, by :func:`_tie_keys`; ``None`` when the lines are in order as they
    are, ``False`` when they are not so grouped.
    """
    n = q.size
    if n < 2:
        return None
    same = q[1:] == q[:-1]
    if int(np.count_nonzero(~same)) + 1 != int(np.count_nonzero(np.bincount(q))):
        return False  # a query's lines are not contiguous
    if not bool(np.all((skey[1:] <= skey[:-1]) | ~same)):
        return False  # scores rise somewhere within a query
    tie = same & (skey[1:] == skey[:-1])
    if not tie.any():
        return None
    order = np.arange(n)
    # elements in runs of ties: sort just those, within their run
    in_run = np.zeros(n, dtype=bool)
    in_run[1:] |= tie
    in_run[:-1] |= tie
    idx = np.flatnonzero(in_run)
    start = np.ones(idx.size, dtype=bool)
    start[1:] = ~tie[idx[1:] - 1]  # a new run where the previous pair is not a tie
    run_id = np.cumsum(start)
    rank_in = None if rank is None else rank[idx]
    doc_in = None if doc is None else doc[idx]
    order[idx] = idx[np.lexsort((*_tie_keys(doc_in, rank_in, trec_eval_compat), run_id))]
    return order


def measure_names(measures: Iterable[str], trec_eval_compat: bool) -> list[str]:
    """Output names: ragmeter's, or trec_eval's in compatibility mode."""
    out = []
    for m in measures:
        metric = metrics.Metric.parse(m) if isinstance(m, str) else m
        if trec_eval_compat:
            if metric.trec_name is None:
                raise InputError(f"{metric} has no trec_eval name; leave it out in compat mode")
            out.append(metric.trec_name)
        else:
            out.append(str(metric))
    return out


def evaluate_run(
    run: Run,
    qrels: Qrels,
    measures: Sequence[str] = COMPAT_MEASURES,
    *,
    level: int = 1,
    gain: str | None = None,
    ideal: str = "judged",
    trec_eval_compat: bool = False,
    block: int | None = None,
    keep: int = 0,
) -> Evaluation:
    """Score one run against qrels, one value per judged query per measure.

    Queries are scored ``block`` at a time (default: as many as make about
    :data:`CELLS` ranked documents, so the temporaries stay small at any depth).

    ``gain`` defaults to ``exponential`` (``linear`` in compat mode, and compat
    mode takes the judged ideal); ``ideal`` is ``judged`` (the qrels' grades,
    as trec_eval) or ``returned`` (the best order of the returned list). Asking
    compat mode for another gain or ideal is an error: trec_eval has neither.
    """
    if trec_eval_compat and gain not in (None, "linear"):
        raise InputError(
            f"trec_eval compatibility uses trec_eval's linear gain, not {gain!r}: "
            "leave out --gain, or leave out --trec-eval-compat"
        )
    if trec_eval_compat and ideal != "judged":
        raise InputError(
            f"trec_eval compatibility uses the judged ideal, not {ideal!r}: "
            "leave out --ideal, or leave out --trec-eval-compat"
        )
    if gain is None:
        gain = "linear" if trec_eval_compat else "exponential"
    if ideal not in ("judged", "returned"):
        raise InputError(f"ideal must be 'judged' or 'returned' for qrels, not {ideal!r}")
    wanted = [metrics.Metric.parse(m) if isinstance(m, str) else m for m in measures]
    names = measure_names(wanted, trec_eval_compat)
    m = run_matrix(run, qrels, trec_eval_compat, keep=keep)
    g = m.grades
    nq, depth = g.shape
    n_rel = qrels.n_relevant(level)
    ks = sorted({x.k for x in wanted if x.k is not None}) or [1]
    ideal_m = None
    if ideal == "judged" and any(x.name == "ndcg" for x in wanted):
        whole = any(x.name == "ndcg" and x.k is None for x in wanted)
        ideal_m = qrels.ideal(None if whole else max(x.k for x in wanted if x.name == "ndcg"))
    parts: dict[str, list[np.ndarray]] = {n: [] for n in names}
    block = block or max(1, CELLS // max(depth, 1))
    for lo in range(0, max(nq, 1), block):
        hi = min(lo + block, nq)
        if hi <= lo:
            break
        out = metrics.score_questions(
            g[lo:hi],
            None,
            ks=ks,
            ideal=None if ideal_m is None else ideal_m[lo:hi],
            relevant_grade=level,
            n_relevant=n_rel[lo:hi],
            gain=gain,
            measures=wanted,
        )
        for name, metric in zip(names, wanted, strict=True):
            parts[name].append(out[str(metric)])
    scores = {
        n: np.concatenate(v) if v else np.zeros(0, dtype=np.float64) for n, v in parts.items()
    }
    qids = [x.decode("utf-8", "replace") for x in qrels.qids.tolist()]
    missing = [qids[i] for i in np.flatnonzero(m.missing)]
    top = Matrix(g[:, :keep].copy(), m.missing, m.unjudged, m.docs, m.scores) if keep else None
    return Evaluation(run.name, qids, scores, missing, m.unjudged, depth, top)
