"""The one tokeniser and the one passage picker (``common.text``): what counts as a word, which
words carry meaning, when two words match, and which paragraphs of a long entry a query keeps."""

from __future__ import annotations

from gmprep.common.text import (
    QUESTION_WORDS,
    STOP_WORDS,
    content_stems,
    content_words,
    cut_words,
    exact_terms,
    linear_tables,
    pick_paragraphs,
    stem,
    words,
)


def test_words_are_lowercased_runs_of_letters_and_digits_with_inner_apostrophes():
    assert words("What's the AC of a Goblin-Warrior, level 3?") == [
        "what's", "the", "ac", "of", "a", "goblin", "warrior", "level", "3"]
    assert words("the dragon\u2019s breath") == ["the", "dragon's", "breath"]  # typographic apostrophe
    assert words("") == []


def test_content_words_drop_stop_words_short_words_and_possessives_but_keep_numbers():
    assert content_words("What happens to the dragon's AC when it is frightened 2?") == [
        "happens", "dragon", "frightened", "2"]
    assert content_words("ac of an ogre", min_len=2) == ["ac", "ogre"]
    assert content_words("how does trip work exactly", extra_stop=QUESTION_WORDS) == ["trip"]
    assert not STOP_WORDS & QUESTION_WORDS  # two named lists, no word in both


def test_stems_join_the_inflections_of_one_word():
    assert {stem(w) for w in ("trip", "trips", "tripped", "tripping")} == {"trip"}
    assert stem("critically") == stem("critical")
    assert stem("poisoned") == stem("poison")
    assert stem("grabbed") == "grab"
    # degree-of-success words: Snowball keeps succeed/success apart, the 5-letter key joins them
    assert stem("succeeds") == stem("success") == stem("succeed")
    assert content_stems("Tripped creatures fall prone") == content_stems("a creature trips and falls PRONE")


def test_picker_keeps_the_opening_and_the_paragraph_the_query_asks_about():
    paras = [
        "Dragon Turtle: a huge aquatic dragon.",
        "Perception +20; darkvision, scent (imprecise) 30 feet",
        "Bite Jaws +25 to hit, 3d10+12 piercing damage",
        "Capsize The dragon turtle tries to capsize a boat or ship it is adjacent to.",
        "Breath Weapon A cone of scalding steam.",
    ]
    keep = pick_paragraphs(paras, "how does it capsize a ship", budget=140)
    assert keep[:2] == [0, 3]  # the opening, then the best match first
    assert 1 not in keep  # shares nothing with the query and the budget was half used
    # no query words: the opening, then paragraphs in text order while the budget lasts
    assert pick_paragraphs(paras, "", budget=90) == [0, 1]  # ties: text order
    assert pick_paragraphs(paras, "", budget=130) == [0, 1, 2]
    assert pick_paragraphs([], "anything", budget=100) == []


def test_an_answer_excerpt_finds_the_stat_line_a_two_letter_capital_names():
    paras = ["Creature 3 (common, large, animal)", "Perception +10; Low-Light Vision", "Skills Athletics +11",
             "Mauler The bear gains a +2 circumstance bonus to damage rolls.", "AC 17; Fort +12, Ref +6, Will +8"]
    query = "OK, and what are its AC and saves?"
    assert 4 not in pick_paragraphs(paras, query, budget=80)  # "AC" is no content word: text order wins
    assert pick_paragraphs(paras, query, budget=80, match_exact=True)[:2] == [0, 4]
    assert pick_paragraphs(paras, "what's the ac", budget=80, match_exact=True) == pick_paragraphs(
        paras, "what's the ac", budget=80)  # capitals only: "ac" in lower case is no acronym


def test_an_answer_excerpt_finds_the_table_row_a_number_names():
    paras = ["Use the table below to set the DC.", "Level 4: DC 19", "Level 5: DC 20", "Level 6: DC 22"]
    assert exact_terms("a 5th-level fey, +2 to hit, 1d6 damage, DC 20") == {"DC", "#5", "#20"}
    assert pick_paragraphs(paras, "DC for a 5th-level fey?", budget=40, match_exact=True)[:2] == [0, 2]
    assert pick_paragraphs(paras, "DC for a 5th-level fey?", budget=40)[:2] == [0, 1]  # "5th" is no "5" as a word


def test_a_table_is_read_row_by_row_with_each_cell_under_its_column():
    text = ("Intro with a | pipe in prose.\n\n| Standard of Living | Week | Month | Year |\n|---|---|---|---|\n"
            "| Comfortable | 1 gp | 4 gp | 52 gp |\n| * Subsist for free. |  |  |  |\n\nAfter.")
    assert linear_tables(text).split("\n") == [
        "Intro with a | pipe in prose.", "", "Standard of Living Comfortable: Week 1 gp, Month 4 gp, Year 52 gp",
        "* Subsist for free.", "", "After."]
    # two tables printed side by side with an empty spacer column are read as the two they are
    side = "| Level | DC |  | Level | DC |\n|---|---|---|---|---|\n| 0 | 14 |  | 13 | 31 |\n| 1 | 15 |  | 14 | 32 |"
    assert linear_tables(side).split("\n") == ["Level 0: DC 14", "Level 1: DC 15", "Level 13: DC 31", "Level 14: DC 32"]
    assert linear_tables("no table here") == "no table here"


def test_cut_words_cuts_on_a_word_boundary_and_marks_the_cut():
    assert cut_words("short text", 40) == "short text"
    assert cut_words("one two three four five six", 17) == "one two three ..."  # 17 chars exactly
    assert cut_words("one two three four five six", 16) == "one two ..."


def test_stemming_from_many_threads_at_once_gives_the_serial_stems():
    # the answer steps search and judge in worker threads at once; a Snowball stemmer keeps the word it works on,
    # so each thread has its own (a shared one garbled words mid-stem: IndexError in CI)
    from concurrent.futures import ThreadPoolExecutor

    import snowballstemmer

    from gmprep.common.text import snowball_stem

    words = [f"{a}{b}ations" for a in "abcdefghijklmnop" for b in ("tripp", "befuddl", "engin", "ration", "sett")] * 40
    serial = snowballstemmer.stemmer("english")
    expected = [serial.stemWord(w) for w in words]
    with ThreadPoolExecutor(max_workers=8) as pool:
        for _ in range(3):
            assert list(pool.map(snowball_stem, words, chunksize=1)) == expected


def test_table_cells_give_each_number_its_column():
    """``table_cells``: the text without its tables, and each cell with its row's first cell and its column's header,
    read by the same parser as ``linear_tables`` (the support check anchors a table's number to its column)."""
    from gmprep.common.text import table_cells

    text = ("Costs per period:\n\n| Standard of Living | Week | Month | Year |\n|---|---|---|---|\n"
            "| Comfortable | 1 gp | 4 gp | 52 gp |\n\nSubsist for free.")
    prose, cells = table_cells(text)
    assert "52" not in prose and "Subsist for free." in prose and "Costs per period:" in prose
    assert ("Comfortable", "Year", "52 gp") in cells and ("Comfortable", "Month", "4 gp") in cells
    assert table_cells("no | table here") == ("no | table here", [])
