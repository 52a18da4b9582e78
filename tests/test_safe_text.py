"""Text that may be shown or saved (ragmeter.files.safe_text): control characters escaped,
secrets hidden, and nothing else touched."""

from __future__ import annotations

import pytest

from ragmeter.files.safe_text import REDACTED, is_secret_name, printable, redact, redact_text


def test_printable_escapes_every_control_character_but_newline_and_tab():
    assert printable("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert printable("\x00\x08\x0b\x1f\x7f\x9f") == "\\x00\\x08\\x0b\\x1f\\x7f\\x9f"
    assert printable("line\nnext\tcol é \xa0") == "line\nnext\tcol é \xa0"


def test_secret_names():
    for name in ("api_key", "API-KEY", "token", "Authorization", "x.password", "openaiApiKey"):
        assert is_secret_name(name), name
    assert is_secret_name("my_apikey") and is_secret_name("dbpassword")
    for name in ("max_tokens", "api_key_env", "keys", "", "--", "monkey", "passage"):
        assert not is_secret_name(name), name


def test_redact_text_hides_values_and_tokens_only():
    assert redact_text("api_key=sk-123 model=x") == f"api_key={REDACTED} model=x"
    assert redact_text('{"token": "abc", "n": 3}') == f'{{"token": "{REDACTED}", "n": 3}}'
    assert redact_text("Authorization: Bearer abc.def") == f"Authorization: {REDACTED} {REDACTED}"
    assert redact_text("sent Bearer abc.def") == f"sent Bearer {REDACTED}"
    assert redact_text("basic dXNlcg==") == f"basic {REDACTED}"
    assert redact_text("api_key=KEY") == "api_key=KEY"  # a placeholder, shown as written
    assert redact_text("api_key=Key1") == f"api_key={REDACTED}"
    assert redact_text("url?token=t1&x=2") == f"url?token={REDACTED}&x=2"
    assert redact_text("nothing here") == "nothing here"
    assert redact_text("bearerxyz and basically") == "bearerxyz and basically"


def test_redact_walks_dicts_lists_and_tuples():
    value = {
        "api_key": "sk-1",
        "token": "",
        "password": None,
        "headers": [{"Authorization": "Bearer x"}, ("token=t", 3)],
        "note": "password=hunter2",
        "n": 1,
    }
    assert redact(value) == {
        "api_key": REDACTED,
        "token": "",
        "password": None,
        "headers": [{"Authorization": REDACTED}, (f"token={REDACTED}", 3)],
        "note": f"password={REDACTED}",
        "n": 1,
    }
    assert redact(value, strings=False)["note"] == "password=hunter2"
    assert redact(value, strings=False)["headers"][0] == {"Authorization": REDACTED}
    assert isinstance(redact(("a",)), tuple)
    assert redact(["token=t", ("token=u",)], strings=False) == ["token=t", ("token=u",)]


def test_urls_lose_their_userinfo_and_query_values():
    url = "http://user:KEY@host:8080/search?api_key=KEY&k=3#top"
    assert (
        redact_text(url)
        == f"http://{REDACTED}@host:8080/search?api_key={REDACTED}&k={REDACTED}#top"
    )
    assert redact_text(f"retriever at {url}, question 'q1'") == (
        f"retriever at http://{REDACTED}@host:8080/search?api_key={REDACTED}&k={REDACTED}#top, "
        "question 'q1'"
    )
    assert redact_text("https://KEY@host/x?KEY") == f"https://{REDACTED}@host/x?{REDACTED}"
    assert redact_text("http://127.0.0.1:8080/v1") == "http://127.0.0.1:8080/v1"  # nothing to hide
    assert redact_text("see docs/files.md?") == "see docs/files.md?"  # no URL, no change
    # a configuration's URL is redacted even where free text is kept (strings=False)
    cfg = {"kind": "http", "url": url, "note": "user:KEY@host"}
    out = redact(cfg, strings=False)
    assert "KEY" not in out["url"] and out["note"] == "user:KEY@host"


def test_every_header_value_is_redacted_whatever_its_name():
    cfg = {
        "headers": {"X-Auth": "KEY", "Accept": "json", "Empty": ""},
        "http_headers": ["X-Auth: KEY"],
    }
    assert redact(cfg, strings=False) == {
        "headers": {"X-Auth": REDACTED, "Accept": REDACTED, "Empty": ""},
        "http_headers": [f"X-Auth: {REDACTED}"],
    }
    assert redact({"header": "KEY"}) == {"header": REDACTED}


def test_markdown_text_shows_names_as_text():
    from ragmeter.files.safe_text import markdown_text

    assert markdown_text("<script>alert(1)</script>") == "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert markdown_text("a*b_c|d `e` #f") == "a\\*b\\_c\\|d \\`e\\` \\#f"
    assert markdown_text("my[b]system\nnext") == "my[b]system next"
    assert markdown_text("\x1b[2J") == "\\\\x1b[2J"  # shown as \\x1b, as printed


# --- CSV cells at their boundaries: header cells, lone signs, numbers that are not ----------


def test_header_cells_are_neutralised_and_dict_rows_still_found_by_the_raw_name():
    import csv
    import io

    from ragmeter.files.safe_text import csv_text

    columns = ["=HYPERLINK(x)", "-", "+3", "@sum", "recall@5"]
    text = csv_text(columns, [{"=HYPERLINK(x)": "=1", "-": -0.5, "+3": "+3", "recall@5": 1.0}])
    header, row = list(csv.reader(io.StringIO(text)))
    assert header == ["'=HYPERLINK(x)", "'-", "+3", "'@sum", "recall@5"]
    assert row == ["'=1", "-0.5", "+3", "", "1.0"]  # a missing column is empty, not a formula


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ("--5", "'--5"),  # two signs: no number
        ("+-1", "'+-1"),
        ("-1,5", "'-1,5"),  # a decimal comma is text to the matcher
        ("-.5", "-.5"),
        ("+5.", "+5."),
        ("-1E+05", "-1E+05"),
        ("-1e", "'-1e"),  # an exponent with no digits is no number
        ("=", "'="),
        (" =1", " =1"),  # a leading space: a spreadsheet shows it as text
        ("-\n1", "'-\n1"),
    ],
)
def test_a_cell_is_a_number_only_when_the_whole_of_it_is_one(cell, written):
    import csv
    import io

    from ragmeter.files.safe_text import csv_cell, csv_text

    assert csv_cell(cell) == written
    assert list(csv.reader(io.StringIO(csv_text([cell], [[cell]])))) == [[written], [written]]
