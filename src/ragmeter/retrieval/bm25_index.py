"""bm25s's score matrix built from token ids with array operations, in 32-bit arrays.

bm25s indexes with per-document Python loops; :func:`build_scores` makes the same matrix
(Lucene BM25, float32, CSC over tokens), bit for bit, from one array of token ids and the
texts' lengths, in 32-bit arrays (tested against bm25s).
"""

from __future__ import annotations

import math

import numpy as np

# Elements per block of the index's array arithmetic (bounds its temporaries).
_BLOCK = 1 << 16
# Sort keys (token * texts + text) take 32 bits below this many (token, text) combinations.
_KEY32_LIMIT = 2**31


def build_scores(
    ids: np.ndarray,
    lengths: np.ndarray,
    n_vocab: int,
    k1: float,
    b: float,
    consume: bool = False,
    counts: np.ndarray | None = None,
) -> dict[str, np.ndarray | int]:
    """bm25s's eager score matrix (Lucene BM25, float32 CSC over tokens) from token ids.

    ``ids`` are the texts' tokens one text after the other and ``lengths`` the texts' lengths
    in tokens. When only some of each text's tokens are given (an index of the columns that
    some questions need), ``counts`` says how many ids each text has; the lengths, and so
    every score, stay those of the whole texts.

    The arithmetic is bm25s's, operation for operation and in the same precision, so every
    entry is bit-identical; only the loops are replaced by array operations.

    Memory: 32-bit arrays only. While (token, text) combinations fit 32 bits, one sort key
    per token (with ``consume``, ``ids`` itself is turned into the keys), compacted in place
    into the distinct pairs' texts, the index's ``indices``; past that, each token's texts
    gathered by token, 4 bytes a token. Then 4 bytes a distinct (token, text) pair for its
    count, which the scores replace; the float64 arithmetic runs a block at a time.
    """
    n_docs = len(lengths)
    counts = lengths if counts is None else counts
    if len(counts) != n_docs or int(np.sum(counts)) != len(ids):
        raise ValueError("counts must give each text's number of ids")
    if n_docs == 0 or len(ids) == 0:
        return {
            "data": np.zeros(0, np.float32),
            "indices": np.zeros(0, np.int32),
            "indptr": np.zeros(n_vocab + 1, np.int64),
            "num_docs": n_docs,
        }
    if n_docs * n_vocab < _KEY32_LIMIT:
        d, tf, indptr = _pairs_by_key(ids, counts, n_vocab, consume)
    else:
        d, tf, indptr = _pairs_by_token(ids, counts, n_vocab)
    df = np.diff(indptr)
    idf = np.zeros(n_vocab, dtype=np.float32)
    for token, count in enumerate(df.tolist()):  # math.log, as bm25s computes it
        if count:
            idf[token] = math.log(1 + (n_docs - count + 0.5) / (count + 0.5))
    l_avg = np.asarray(lengths).mean()
    # bm25s: idf * (tf / (k1 * ((1 - b) + b * l_d / l_avg) + tf)), tf float32, the rest
    # float64 (in place, same operations: x + tf, tf / x, then x * idf), rounded to float32
    denom = k1 * ((1 - b) + b * lengths / l_avg)
    values = tf.view(np.float32)  # tf is ours: the scores take its place
    for a in range(0, len(d), _BLOCK):  # (each block's tf is read before its scores land)
        v = np.searchsorted(indptr, np.arange(a, min(a + _BLOCK, len(d))), side="right") - 1
        tf64 = tf[a : a + _BLOCK].astype(np.float32).astype(np.float64)
        x = denom[d[a : a + _BLOCK]]
        x += tf64
        np.divide(tf64, x, out=x)
        x *= idf[v]
        values[a : a + _BLOCK] = x
    return {
        "data": values,
        "indices": d,
        "indptr": indptr,
        "num_docs": n_docs,
    }


def _run_lengths(first: np.ndarray, out: np.ndarray) -> None:
    """``out[j]``: how far run ``j`` reaches, runs starting where ``first`` is true (in
    blocks: no array of the run starts)."""
    n, done, last = len(first), 0, 0
    for a in range(0, n, _BLOCK):
        at = np.flatnonzero(first[a : a + _BLOCK]) + a
        if len(at):
            if done:
                out[done - 1] = at[0] - last
            out[done : done + len(at) - 1] = np.diff(at)
            done += len(at)
            last = int(at[-1])
    out[done - 1] = n - last


def _pairs_by_key(
    ids: np.ndarray, lengths: np.ndarray, n_vocab: int, consume: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each distinct (token, text) pair in CSC order: its text, its count, and ``indptr``,
    from one sorted 32-bit key per token (``token * texts + text``)."""
    n_docs, n_tokens = len(lengths), len(ids)
    if consume and ids.dtype == np.int32:
        key = ids  # the caller's ids become the keys, in place
        key *= n_docs
        ends = np.cumsum(lengths)
        for a in range(0, n_tokens, _BLOCK):  # += each token's text, a block at a time
            at = np.arange(a, min(a + _BLOCK, n_tokens))
            key[a : a + _BLOCK] += np.searchsorted(ends, at, side="right").astype(np.int32)
        del ends
    else:
        key = np.repeat(np.arange(n_docs, dtype=np.int32), lengths)
        for a in range(0, n_tokens, _BLOCK):  # += ids * n_docs, a block at a time
            key[a : a + _BLOCK] += ids[a : a + _BLOCK].astype(np.int32) * n_docs
    key.sort()
    # Runs of equal keys are the pairs: counted in one pass, then compacted in place (the
    # keys' first elements become the distinct keys) with their lengths, tf, a block at a
    # time: no array of flags, no second array of keys.
    n_pairs = 1 + sum(
        int(np.count_nonzero(key[a : a + _BLOCK + 1][1:] != key[a : a + _BLOCK + 1][:-1]))
        for a in range(0, n_tokens, _BLOCK)
    )
    tf = np.empty(n_pairs, dtype=np.int32)
    done, last, prev = 0, 0, None
    for a in range(0, n_tokens, _BLOCK):
        block = key[a : a + _BLOCK].copy()  # (the compaction below may overwrite its place)
        new = np.empty(len(block), dtype=bool)
        new[0] = prev is None or block[0] != prev
        np.not_equal(block[1:], block[:-1], out=new[1:])
        at = np.flatnonzero(new) + a
        if len(at):
            if done:
                tf[done - 1] = at[0] - last
            tf[done : done + len(at) - 1] = np.diff(at)
            key[done : done + len(at)] = block[new]
            done += len(at)
            last = int(at[-1])
        prev = block[-1]
    tf[done - 1] = n_tokens - last
    if key.flags.owndata:  # give the keys' tail back in place (no copy): the index keeps
        key.resize(done, refcheck=False)  # only its pairs' texts
        pairs = key
    else:
        pairs = key[:done]
    del key
    # Keys are sorted, so each token's pairs are one run: indptr by binary search
    # (n_vocab * n_docs fits 32 bits: no widened copy of pairs)
    bounds = np.arange(n_vocab + 1, dtype=np.int32) * np.int32(n_docs)
    indptr = np.searchsorted(pairs, bounds).astype(np.int64, copy=False)
    for a in range(0, len(pairs), _BLOCK):
        pairs[a : a + _BLOCK] %= n_docs  # each pair's text
    return pairs, tf, indptr


def _pairs_by_token(
    ids: np.ndarray, lengths: np.ndarray, n_vocab: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_pairs_by_key` where ``token * texts + text`` would not fit 32 bits: every
    token's texts are gathered by token (a stable bucket sort, a block of tokens at a time,
    so each token's texts stay in increasing order), then runs of one text are pairs."""
    n_tokens = len(ids)
    ends = np.cumsum(lengths)
    counts = np.zeros(n_vocab, dtype=np.int64)
    for a in range(0, n_tokens, _BLOCK):  # (bincount widens its input to 64 bits: blocks)
        counts += np.bincount(ids[a : a + _BLOCK], minlength=n_vocab)
    begins = np.zeros(n_vocab + 1, dtype=np.int64)
    np.cumsum(counts, out=begins[1:])
    del counts
    texts = np.empty(n_tokens, dtype=np.int32)  # the text of each token, grouped by token
    fill = begins[:-1].copy()  # where each token's next text goes
    for a in range(0, n_tokens, _BLOCK):
        block = ids[a : a + _BLOCK].astype(np.int64)
        order = np.argsort(block, kind="stable")
        tokens = block[order]
        new = np.empty(len(tokens), dtype=bool)
        new[0] = True
        np.not_equal(tokens[1:], tokens[:-1], out=new[1:])
        group = np.flatnonzero(new)
        rank = np.arange(len(tokens)) - np.repeat(group, np.diff(group, append=len(tokens)))
        here = np.searchsorted(ends, np.arange(a, a + len(block)), side="right")
        texts[fill[tokens] + rank] = here[order]
        fill[tokens[group]] += np.diff(group, append=len(tokens))
    del fill
    # a pair starts where the text changes or a token's group begins
    first = np.empty(n_tokens, dtype=bool)
    first[0] = True
    np.not_equal(texts[1:], texts[:-1], out=first[1:])
    first[begins[:-1][begins[:-1] < n_tokens]] = True
    pairs = texts[first]
    del texts
    tf = np.empty(len(pairs), dtype=np.int32)
    _run_lengths(first, tf)
    # indptr: pairs begun before each token's group
    indptr = np.zeros(n_vocab + 1, dtype=np.int64)
    done = 0
    for a in range(0, n_tokens, _BLOCK):
        seen = np.cumsum(first[a : a + _BLOCK])
        lo, hi = np.searchsorted(begins, [a, a + len(seen)], side="left")
        at = begins[lo:hi] - a  # group beginnings inside this block
        indptr[lo:hi] = done + np.where(at > 0, seen[np.maximum(at - 1, 0)], 0)
        done += int(seen[-1])
    indptr[begins >= n_tokens] = done  # the end, and tokens with no text after the last
    return pairs, tf, indptr
