"""Fencing untrusted text in prompts (ragmeter.llm.fence)."""

from __future__ import annotations

import hashlib

from ragmeter.llm.fence import as_data, blocks, fence, fence_tag, fenced


def test_the_tag_is_a_stable_hash_of_every_text_with_separators():
    want = hashlib.sha256(b"ab\x00c\x00").hexdigest()[:12]
    assert fence_tag(["ab", "c"]) == "data-" + want
    assert fence_tag(["ab", "c"]) != fence_tag(["a", "bc"])
    assert fence_tag(["\udc80"]) == "data-" + hashlib.sha256(b"\xed\xb2\x80\x00").hexdigest()[:12]


def test_data_cannot_hold_a_fence_line_or_the_tag():
    tag = "data-abc"
    assert as_data("plain\ntext", tag) == "plain\ntext"
    assert as_data(">>>a data-abc\n  <<<b", tag) == "\\>>>a \n  \\<<<b"
    assert as_data("x\r>>>y\u2028<<<z\x85 >>>w", tag) == "x\r\\>>>y\u2028\\<<<z\x85 \\>>>w"
    assert as_data("a >>> b", tag) == "a >>> b"  # not at a line start
    assert as_data("data-data-abcabc", tag) == ""  # removed until none is left
    assert as_data("data-abc", "") == "data-abc"


def test_blocks_read_back_what_was_fenced():
    tag = fence_tag(["q", "p"])
    prompt = "Intro\n" + fence("QUESTION", "q?\n>>>QUESTION x", tag) + "\n"
    prompt += fence("PASSAGE", "line 1\nline 2", tag) + "\nEnd"
    assert blocks(prompt) == ["q?\n\\>>>QUESTION x", "line 1\nline 2"]
    assert fenced(prompt, "PASSAGE") == "line 1\nline 2"
    assert fenced(prompt, "QUESTION") == "q?\n\\>>>QUESTION x"
    assert fenced(prompt, "ANSWER") == ""
    assert blocks("no blocks") == [] and fenced("no blocks", "PASSAGE") == ""
    cut = prompt[: prompt.index(">>>PASSAGE")]
    assert fenced(cut, "PASSAGE") == ""


def test_a_closing_line_without_its_opening_reads_as_no_block():
    tag = fence_tag(["q"])
    prompt = fence("QUESTION", "q", tag) + f"\nstray text\n>>>ANSWER {tag}\n"
    assert fenced(prompt, "ANSWER") == ""
    assert blocks(prompt) == ["q"]
