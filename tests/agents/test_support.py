"""The support check on real passages from the built store: sentence splitting and markers, the
structural not-a-claim rule, the number rule (a wrong condition value), and the shipped weights with
the real cross-encoder telling a sentence its passage states from one it does not."""

from __future__ import annotations

import pytest

from gmprep.core.agents.support import (
    Passage,
    SupportChecker,
    is_claim,
    number_features,
    resolve,
    split_sentences,
)
from gmprep.kg.render import passage_text
from gmprep.kg.store import Store


@pytest.fixture(scope="module")
def passages(store_dir) -> dict[str, Passage]:
    with Store.open(store_dir, create=False) as store:
        ids = ["pf2e:condition:frightened", "pf2e:condition:prone", "pf2e:condition:stupefied",
               "pf2e:condition:quickened", "pf2e:spell:gust-of-wind", "pf2e:spell:gale-blast",
               "pf2e:action:treat-wounds", "pf2e:action:repair", "pf2e:condition:fatigued",
               "pf2e:rule:gm-screen--cost-of-living", "pf2e:condition:grabbed", "pf2e:condition:restrained",
               "pf2e:action:escape", "pf2e:rule:player-core--flanking"]
        nodes = store.get_many(ids)
        return {i: Passage(source_id=i, name=nodes[i].name, text=passage_text(nodes[i])) for i in ids}


@pytest.fixture(scope="module")
def checker() -> SupportChecker:
    return SupportChecker(device="cpu")


def test_sentences_keep_their_markers():
    text = ("Frightened is a status penalty to checks and DCs [pf2e:condition:frightened]. It drops by 1 each "
            "turn.[1]\n- Prone gives a -2 circumstance penalty to attack rolls (Player Core, p. 83). [2]\n"
            "I hope this helps.")
    sents = split_sentences(text)
    assert [s.markers for s in sents] == [["pf2e:condition:frightened"], ["1"], ["2"], []]
    assert sents[2].text.startswith("Prone gives") and "p. 83" in sents[2].text  # "p." did not end it
    assert [is_claim(s.text, bool(s.markers)) for s in sents] == [True, True, True, False]
    assert is_claim("Quickened [1].", cites=True) and not is_claim("Quickened.")
    assert not is_claim("Do you want the rules for prone too?") and not is_claim("Here is what the books say:")


def test_markers_resolve_to_passages(passages):
    given = [passages["pf2e:condition:frightened"], passages["pf2e:condition:prone"]]
    assert resolve(["2", "1, 2", "pf2e:condition:prone"], given) == ["pf2e:condition:prone",
                                                                      "pf2e:condition:frightened"]
    assert resolve(["3", "pf2e:condition:quickened"], given) == []  # nothing the answer was given


def test_wrong_number_is_unsupported(passages, checker):
    frightened = passages["pf2e:condition:frightened"]
    # the entry says the value decreases by 1 at the end of each turn; 2 is not in it
    assert number_features("The frightened value decreases by 2 at the end of each of your turns.", frightened.text)[0] == 0.0
    assert number_features("The frightened value decreases by 1 at the end of each of your turns.", frightened.text) == (1.0, 1.0)
    report = checker.check("At the end of each of your turns, your frightened value decreases by 2 [1].", [frightened])
    (s,) = report.sentences
    assert s.claim and s.supported is False and s.reason == "number not in passage"
    stupefied = passages["pf2e:condition:stupefied"]
    ok = checker.check("To cast a spell while stupefied you need a flat check against DC 5 plus the stupefied "
                       "value [1].", [stupefied])
    bad = checker.check("To cast a spell while stupefied you need a DC 11 flat check [1].", [stupefied])
    assert ok.sentences[0].supported is True
    assert bad.sentences[0].supported is False


def test_uncited_claim_is_unsupported(passages, checker):
    report = checker.check("You take a status penalty equal to the value to all your checks and DCs.",
                           [passages["pf2e:condition:frightened"]])
    assert report.sentences[0].reason == "no citation" and report.sentences[0].supported is False
    assert report.supported_share == 0.0


def test_supported_against_the_cited_passage_not_another(passages, checker):
    sentence = "While frightened you take a status penalty equal to the condition's value to all your checks and DCs [1]."
    right = checker.check(sentence, [passages["pf2e:condition:frightened"]]).sentences[0]
    wrong = checker.check(sentence, [passages["pf2e:condition:prone"]]).sentences[0]
    assert right.supported is True and wrong.supported is False
    assert right.score is not None and wrong.score is not None and right.score > wrong.score
    extra = checker.check("Quickened gives you one extra action at the start of your turn [1].",
                          [passages["pf2e:condition:quickened"]]).sentences[0]
    assert extra.supported is True  # "one" is read as the passage's "1"


def test_quoted_fallback_is_attributed_to_its_heading(passages, checker):
    """The not-found fallback and the extractive answer quote passages under "[n] **Name**" headings."""
    quickened = passages["pf2e:condition:quickened"]
    text = ("The passages do not answer this.\n\nFrom the books (the closest passages, quoted):\n\n"
            "[1] **Quickened** (condition; Pathfinder Player Core)\n> You're able to act more quickly. "
            "You gain 1 additional action at the start of your turn each round.\n> ...\n\nSee the rules above.")
    sents = split_sentences(text)
    assert [s.kind for s in sents] == ["text", "text", "heading", "quote", "quote", "text"]
    assert sents[3].markers == ["1"] and sents[5].markers == []
    report = checker.check(text, [quickened])
    assert [s.claim for s in report.sentences] == [False, False, False, True, True, False]
    assert report.sentences[4].supported is True and report.supported_share == 1.0


def test_logistic_fit_learns_a_separating_feature():
    from gmprep.evals.faithfulness import _cv_accuracy, _fit_logistic

    x = [[c / 20, 0.5] for c in range(20)]  # the first feature separates at 0.5, the second is constant
    y = [int(c >= 10) for c in range(20)]
    w, b = _fit_logistic(x, y)
    assert w[0] > 0 and all((b + w[0] * r[0] + w[1] * r[1] >= 0) == bool(t) for r, t in zip(x, y, strict=True))
    assert _cv_accuracy(x, y) >= 0.9


def test_a_number_the_question_gave_is_not_one_the_passage_must_print(passages, checker):
    """"My fighter is frightened 2": the answer may repeat the asker's 2; the passage states the rule for any
    value. A number neither the question nor the passage gives is still unsupported."""
    frightened = [passages["pf2e:condition:frightened"]]
    sentence = "At frightened 2 you take a status penalty equal to the value (2) to all your checks and DCs [1]."
    assert checker.check(sentence, frightened).sentences[0].reason == "number not in passage"
    given = checker.check(sentence, frightened, given="My fighter is frightened 2. What does that do?")
    assert given.sentences[0].supported is True
    invented = checker.check("At frightened 2 the penalty is 7 [1].", frightened,
                             given="My fighter is frightened 2. What does that do?").sentences[0]
    assert invented.supported is False and invented.reason == "number not in passage"


def test_a_claim_about_another_passages_entry_is_unsupported(passages, checker):
    """The 1.5B model states one entry's rule of its neighbour in the same words ("The Gale Blast spell can knock
    creatures prone", citing Gust of Wind): word overlap with the cited passage is high, but the claim names another
    of the answer's entries that the cited passage never writes. Answered again by the passage that states it."""
    given = [passages["pf2e:spell:gust-of-wind"], passages["pf2e:condition:prone"], passages["pf2e:spell:gale-blast"]]
    moved = checker.check("The Gale Blast spell can knock creatures prone [1].", given).sentences[0]
    assert moved.supported is False and moved.reason == "names another passage's entry"
    own = checker.check("The Gust of Wind spell can knock creatures prone [1].", given).sentences[0]
    assert own.supported is True  # its own name, and Prone written in the passage, are no other entry
    # the same claim citing the entry it names is judged by the score, as before
    assert checker.check("Gale Blast pushes creatures 5 feet away on a failure [3].", given).sentences[0].reason == "score"
    repair = [passages["pf2e:action:repair"], passages["pf2e:action:treat-wounds"]]
    wounds = checker.check("You can use the Treat Wounds action to repair a damaged item with a repair kit [1].", repair)
    assert wounds.sentences[0].supported is False
    assert checker.recite("The Gust of Wind spell can knock creatures prone [3].", given) == (
        "The Gust of Wind spell can knock creatures prone [1].")


def test_local_coverage_reads_one_place_of_the_passage(passages):
    """``local_coverage``: the share of a claim's words that two consecutive sentences of one passage hold. A claim
    restating one sentence is covered there as in the whole passage; one gathered from a passage's far ends is not."""
    from gmprep.core.agents.support import coverage, local_coverage

    gust = passages["pf2e:spell:gust-of-wind"].text
    one = "The wind extinguishes small non-magical fires and disperses fog and mist."
    assert local_coverage(one, [gust]) == coverage(one, gust) == 1.0
    gathered = "A violent palm wind makes the creature critically unaffected by mist and fires."
    assert coverage(gathered, gust) > 0.85 and local_coverage(gathered, [gust]) < 0.6
    assert local_coverage(gathered, [gust, gathered]) == 1.0  # the best passage counts


def test_a_number_beside_other_words_is_unsupported(passages, checker):
    """A number the passage prints, but in another row or beside other words, is the wrong number: "52 gp per month"
    is the Comfortable row's Year column (the Month column says 4 gp). Two-letter capitals anchor a number as well
    as a longer word ("-1 to AC"); a quoted table row (the fallback's quotes) keeps its numbers."""
    living = [passages["pf2e:rule:gm-screen--cost-of-living"]]
    wrong = checker.check("Living comfortably costs 52 gp per month [1].", living).sentences[0]
    assert wrong.supported is False and wrong.reason == "number beside other words"
    assert checker.check("Living comfortably costs 52 gp per year [1].", living).sentences[0].reason != (
        "number beside other words")
    fatigued = [passages["pf2e:condition:fatigued"]]
    ac = checker.check("The penalty for being fatigued is -1 to AC and saving throws [1].", fatigued).sentences[0]
    assert ac.supported is True
    quoted = checker.check("[1] **Cost of Living** (rule)\n> Comfortable 1 gp 4 gp 52 gp", living).sentences
    assert [s.supported for s in quoted if s.claim] == [True]


def test_a_one_word_name_counts_when_written_as_a_name(passages, checker):
    """A one-word entry name is an ordinary word too: "knock creatures prone" does not name the Knock spell, "the
    goblin" no Goblin entry; written with its capital inside the sentence ("try to Escape") it names the entry."""
    from gmprep.core.agents.support import named_elsewhere

    gust, prone = passages["pf2e:spell:gust-of-wind"], passages["pf2e:condition:prone"]
    knock = Passage(source_id="pf2e:spell:knock", name="Knock", text="You make the target easier to open.")
    given = [gust, prone, knock]
    assert named_elsewhere("The Gust of Wind spell can knock creatures prone [1].", [gust.source_id], given) == []
    assert named_elsewhere("Gust of Wind works like Knock on doors [1].", [gust.source_id], given) == ["Knock"]
    assert named_elsewhere("Knock spells open doors [1].", [gust.source_id], given) == []  # first word: any capital
    assert checker.check("The Gust of Wind spell can knock creatures prone [1].", given).sentences[0].supported


class FakeReading:
    """A fake model reading (NOT a model): a fixed log P(yes) - log P(no) per claim, recording what it was asked."""

    def __init__(self, *values: float | None):
        self.values = list(values)
        self.asked: list[list[dict[str, str]]] = []

    def __call__(self, messages: list[dict[str, str]]) -> float | None:
        self.asked.append(messages)
        return self.values.pop(0) if self.values else None


def test_the_models_reading_strikes_a_claim_the_score_keeps(passages):
    """``llm.support_reader``: a claim the model wrote and the score keeps is read by the model; a clear "no" strikes
    it (the second logistic of support_reader.json), a "yes" or no reading keeps it. The prompt names the cited
    passage and states the claim without its markers."""
    frightened = passages["pf2e:condition:frightened"]
    sentence = ("While frightened you take a status penalty equal to the condition's value to all your checks "
                "and DCs [1].")
    plain = SupportChecker(device="cpu").check(sentence, [frightened]).sentences[0]
    assert plain.supported is True and plain.reason == "score"
    for reading, kept in ((-8.0, False), (8.0, True), (None, True)):
        fake = FakeReading(reading)
        s = SupportChecker(device="cpu", reader=fake).check(sentence, [frightened]).sentences[0]
        assert s.supported is kept and s.score == plain.score
        assert s.reason == ("score" if kept else "the model reads it as unsupported")
        (asked,) = fake.asked
        assert asked[1]["content"].startswith("Passage 1: Frightened\n")
        assert "Claim: While frightened you take a status penalty" in asked[1]["content"]
        assert "[1]" not in asked[1]["content"].split("Claim:")[1]
        assert ("model_reading" in s.features) is (reading is not None)


def test_the_model_never_reads_quotes_or_claims_a_rule_decided(passages):
    frightened = passages["pf2e:condition:frightened"]
    fake = FakeReading(-8.0, -8.0, -8.0)
    checker = SupportChecker(device="cpu", reader=fake)
    ruled = checker.check("At the end of each of your turns, your frightened value decreases by 2 [1].", [frightened])
    assert ruled.sentences[0].reason == "number not in passage"
    quoted = checker.check("From the books (the closest passages, quoted):\n\n[1] **Frightened** (condition)\n> "
                           "You take a status penalty equal to this value to all your checks and DCs.", [frightened])
    assert all(s.supported is not False for s in quoted.sentences if s.claim)
    assert fake.asked == []  # neither was read: the rule decided one, the other is the passage's own words


def test_reader_excerpt_keeps_the_place_the_claim_is_stated():
    """The reader's cut of a long passage (``reader_excerpt``) holds the sentence that shares the claim's words, in
    whole sentences, within the budget; a passage that fits is left whole."""
    from gmprep.core.agents.support import reader_excerpt, reader_prompt

    filler = " ".join(f"Line {i} speaks of the weather in town." for i in range(60))
    tail = " ".join(f"Line {i} speaks of the harbour at night." for i in range(60, 120))
    text = f"{filler} A creature that fails its Fortitude save is stunned 1. {tail}"
    cut = reader_excerpt("On a failed Fortitude save the creature is stunned 1 [1].", text, 300)
    assert "fails its Fortitude save is stunned 1." in cut
    assert len(cut) <= 300 and cut.endswith(".") and "Line 59" in cut and "Line 60" in cut
    short = "You take a status penalty equal to this value to all your checks and DCs."
    assert reader_excerpt("Frightened gives a penalty [1].", short, 300) == short
    # the answer path's prompt reads around the claim; ``head`` (the first prompt measured) from the start
    around = reader_prompt("The creature is stunned 1 [1].", [("Stun", text)])[1]["content"]
    head = reader_prompt("The creature is stunned 1 [1].", [("Stun", text)], chars=1400, head=True)[1]["content"]
    assert "stunned 1." not in head.split("Claim:")[0] and "stunned 1." in around.split("Claim:")[0]


def test_recite_reads_one_other_passage_once(passages):
    """A claim struck where it was cited is offered to the other passages (``recite``): the score finds the first
    other passage that would keep it, and the model reads only that one, once ("yes": cited there; "no": struck)."""
    given = [passages["pf2e:spell:gale-blast"], passages["pf2e:spell:gust-of-wind"], passages["pf2e:condition:prone"]]
    claim = "The Gust of Wind spell can knock creatures prone [1]."
    for reading, expected in ((8.0, "The Gust of Wind spell can knock creatures prone [2]."), (-8.0, None)):
        fake = FakeReading(reading, reading, reading)
        assert SupportChecker(device="cpu", reader=fake).recite(claim, given) == expected
        (asked,) = fake.asked
        assert asked[1]["content"].startswith("Passage 1: Gust of Wind\n")


def test_recite_needs_the_words_the_claim_was_struck_for(passages, checker, monkeypatch):
    """A struck claim moves only to a passage holding at least half of the words its own passages lack: the model's
    "No, they cannot cast spells while grabbed [1] ... or restrained [2]" (Grabbed says a manipulate action takes a
    flat check) was kept on Escape, which names the three conditions and says nothing of casting."""
    given = [passages["pf2e:condition:grabbed"], passages["pf2e:condition:restrained"], passages["pf2e:action:escape"]]
    claim = "No, they cannot cast spells while grabbed [1], immobilized [1], or restrained [2]."
    assert checker.check(claim, given).sentences[0].supported is False
    assert checker.recite(claim, given) is None
    monkeypatch.setattr(SupportChecker, "recite_new_words", False)
    assert checker.recite(claim, given) == "No, they cannot cast spells while grabbed, immobilized, or restrained [3]."
    monkeypatch.undo()
    # a claim its neighbour states still moves there (the Gust of Wind case above)
    gust = [passages["pf2e:spell:gust-of-wind"], passages["pf2e:condition:prone"], passages["pf2e:spell:gale-blast"]]
    assert checker.recite("The Gust of Wind spell can knock creatures prone [3].", gust) == (
        "The Gust of Wind spell can knock creatures prone [1].")


def test_an_answers_yes_is_its_verdict_not_a_word_to_find(passages, checker):
    """"Yes, a flanked creature becomes off-guard" is Flanking's rule; "yes" is no word the passage could hold (as "no",
    a stop word, never was)."""
    flanking = [passages["pf2e:rule:player-core--flanking"]]
    yes = checker.check("Yes, a flanked creature becomes off-guard [1].", flanking).sentences[0]
    assert yes.supported is True, yes.features
    assert yes.features["coverage"] == checker.check("A flanked creature becomes off-guard [1].",
                                                     flanking).sentences[0].features["coverage"]
