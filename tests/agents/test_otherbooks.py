"""Another book's term (``core/agents/otherbooks.py``) on the real session store: a word neither the books
nor English use is declined as not_in_corpus naming the word and the books gmprep holds; rare words the
books do use, common English words and names English never records are left to the rest of the judge."""

from __future__ import annotations

import pytest

from gmprep.common.settings import AnswerabilitySettings
from gmprep.core.agents.answerability import Assessment, answer_note
from gmprep.core.agents.otherbooks import (
    BookUse,
    asked_besides,
    foreign_terms,
    held_books,
    hinge_terms,
    names_asked,
    other_book_terms,
    publication_terms,
)
from gmprep.core.answer import answer_question

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def use(searcher) -> BookUse:
    return BookUse(searcher.store.db)


def _verdict(ans) -> dict:
    return next(s for s in ans.steps if s.name == "answerability").output


def test_other_books_terms_are_found(use):
    assert foreign_terms("Does Megavolt's unstable version cost more than the normal one?", use) == ["Megavolt"]
    # only the trait glossary defines it (it defines every book's traits): still another book's term
    assert foreign_terms("Is my summoner unconscious when the eidolon drops to 0 HP?", use) == ["eidolon"]


def test_rare_words_the_books_use_and_other_words_are_not(use):
    assert use.uses("cockatrice") > 0 and use.uses("thunderclap") > 0
    assert foreign_terms("What does a cockatrice's bite do, and how does thunderclap deafen?", use) == []
    assert foreign_terms("Our party hides in a warehouse; can the toddler see us?", use) == []  # plain English
    # a name English never records is more often the asker's character or a typo than a book's term
    assert foreign_terms("Ezren fires his crossbow: does the wall block line of effect?", use) == []


def test_held_books_are_the_rulebooks(use):
    books = held_books(use.db)
    assert "Player Core" in books and "GM Core" in books and "Monster Core" in books
    assert not any("glossary" in b for b in books)


async def test_an_other_books_term_is_not_in_corpus_naming_it(searcher, extractive, monkeypatch):
    from gmprep.core.agents import otherbooks

    q = "Does the liturgist's immanence stack with the transcendence of my ikon?"
    # off by default (its held-out false declines, docs/answerability.md): by default the word is no decline
    ans = await answer_question(q, history=[], searcher=searcher, settings=extractive)
    assert not _verdict(ans).get("foreign")
    monkeypatch.setattr(otherbooks, "WORD_RULE", True)
    ans = await answer_question(q, history=[], searcher=searcher, settings=extractive)
    verdict = _verdict(ans)
    assert ans.outcome == "not_in_corpus" and ans.declined, verdict
    assert verdict["foreign"] == "liturgist"
    assert "“liturgist” is not in the rules gmprep holds (" in ans.text
    assert "Player Core" in ans.text and "`gmprep books add`" in ans.text


def test_entries_other_books_list_are_found_by_name(use):
    held = held_books(use.db)
    [t] = other_book_terms("Can I use Risky Reload with a crossbow?", use, held)
    assert (t.shown, t.book, t.category) == ("Risky Reload", "Guns & Gears", "Feat")
    # class features come from the class pages: the source pages list a book's classes, not their features
    [t] = other_book_terms("If I cast a spell, then Unleash Psyche, can I cast again?", use, held)
    assert (t.name, t.book, t.category) == ("Unleash Psyche", "Dark Archives (Remastered)", "Class Feature")
    # lower case counts when English rarely uses the name
    assert [t.shown for t in other_book_terms("how does megavolt work?", use, held)] == ["megavolt"]


def test_names_the_held_books_have_or_write_and_superseded_books_are_not_another_books(use):
    held = held_books(use.db)
    assert other_book_terms("Is Trip an attack? Can I Shield Block twice?", use, held) == []
    # Core Rulebook / Advanced Player's Guide names: the Remaster keeps the rule under another name
    assert other_book_terms("Does Attack of Opportunity work with Combat Reflexes?", use, held) == []
    # an everyday word in lower case is not a name, even where a book lists it
    assert other_book_terms("Can my wrestler grab the moth?", use, held) == []


async def test_an_entry_of_another_book_is_not_in_corpus_naming_its_book(searcher, extractive):
    q = "Several feats can cause a misfire, such as Risky Reload. Is the gun jammed until I Interact to clear it?"
    ans = await answer_question(q, history=[], searcher=searcher, settings=extractive)
    verdict = _verdict(ans)
    assert ans.outcome == "not_in_corpus" and ans.declined, verdict
    assert (verdict["foreign"], verdict["foreign_book"], verdict["foreign_kind"]) == ("Risky Reload", "Guns & Gears", "feat")
    assert ans.text.startswith("“Risky Reload” (feat) is from Guns & Gears, which is not among the books gmprep holds (")
    assert "Add your Guns & Gears PDF with `gmprep books add`" in ans.text


async def test_rare_but_held_terms_are_answered(searcher, extractive):
    for q, gold in (("What happens when a cockatrice bites you?", "cockatrice"),
                    ("What does the thunderclap spell do?", "thunderclap")):
        ans = await answer_question(q, history=[], searcher=searcher, settings=extractive)
        assert ans.outcome == "answered", (q, _verdict(ans))
        assert any(gold in c.source_id for c in ans.citations), [c.source_id for c in ans.citations]


async def test_a_class_of_another_pf2e_book_is_not_in_corpus(searcher, extractive):
    # the other-systems guard knows the summoner is a class of a Pathfinder 2e book gmprep does not hold:
    # that is a rule the user can add with the book, not another game's
    q = "Is my summoner unconscious or dying when his eidolon drops to 0 Hit Points?"
    ans = await answer_question(q, history=[], searcher=searcher, settings=extractive)
    assert ans.outcome == "not_in_corpus" and ans.declined, ans.steps
    # the catalogue knows the class's book: the text names it
    assert ans.text.startswith("“summoner” (class) is from Secrets of Magic, which is not among the books gmprep "
                               "holds ("), ans.text
    assert "Add your Secrets of Magic PDF with `gmprep books add`" in ans.text
    # an Adventure Path the guard knows is named as a book
    ans = await answer_question("What does Kingmaker add for armies at war?", history=[], searcher=searcher,
                                settings=extractive)
    assert ans.outcome == "not_in_corpus", ans.steps
    assert ans.text.startswith("This question is about Kingmaker, which is not among the books gmprep holds ("), ans.text


async def test_another_games_rule_stays_not_in_books(searcher, extractive):
    ans = await answer_question("Can I Stride as a bonus action?", history=[], searcher=searcher, settings=extractive)
    assert ans.outcome == "not_in_books", ans.text


def test_other_books_names_possessive_singular_or_in_plain_words(use):
    held = held_books(use.db)
    # the name written possessive
    [t] = other_book_terms("Does Titan's Breaker's extra damage count per die?", use, held)
    assert (t.shown, t.name, t.book) == ("Titan's Breaker", "Titan's Breaker", "War of Immortals")
    # the singular of the plural the book lists
    [t] = other_book_terms("Can I Sustain a vessel spell on another creature's turn?", use, held)
    assert (t.shown, t.name) == ("vessel spell", "Vessel Spells")
    # in lower case, several plain words the held books never write
    [t] = other_book_terms("Can a shield augmentation give my buckler the forceful trait?", use, held)
    assert (t.shown, t.book) == ("shield augmentation", "Grand Bazaar")
    # ... but not words the held books write together, nor a phrase with small words in it
    assert other_book_terms("Does the fire damage of my shield spikes double on a crit?", use, held) == []
    # nor part of a held entry's name ("Spirit Spell" is an adventure's entry; Shed Spirit is held)
    assert other_book_terms("What is the frequency of the Shed Spirit spell?", use, held) == []


def test_a_term_the_question_turns_on_and_the_books_say_in_passing(use):
    held = held_books(use.db)
    q = "Our kingdom has a Loyalty problem. Which kingdom skill fixes it, and who rolls for the kingdom?"
    [t] = hinge_terms(q, use, held, slack=2, min_repeats=2)
    assert (t.shown, t.repeats) == ("kingdom", 3) and 0 < t.uses <= 5  # Downtime, Wish ... say it in passing
    assert hinge_terms(q, use, held, slack=1, min_repeats=2) == []  # five entries: more than three plus one
    assert hinge_terms(q, use, held, slack=2, min_repeats=4) == []
    # said once, it is not what the question turns on
    assert hinge_terms("Which skill fixes Loyalty in my kingdom?", use, held, slack=2, min_repeats=2) == []
    # repeated, but the books use it more (creatures, their abilities), or name an entry with it, or no other
    # book names its entries with it (the asker's own word)
    for q in ("Do two zombies next to me both hit me with their auras, or do the zombies share one?",
              "Can I Shield Block with a shield that is already broken, and does the shield take the damage?",
              "I get a discount per extra day of Crafting. Does the discount grow when I level up?"):
        assert hinge_terms(q, use, held, slack=2, min_repeats=2) == [], q


async def test_a_term_the_books_say_in_passing_is_not_in_corpus(searcher, extractive):
    q = "Our kingdom has a Loyalty problem. Which kingdom skill fixes it, and who rolls for the kingdom?"
    ans = await answer_question(q, history=[], searcher=searcher, settings=extractive)
    verdict = _verdict(ans)
    assert ans.outcome == "not_in_corpus" and ans.declined, verdict
    assert verdict["foreign"] == "kingdom" and verdict["foreign_uses"] == 5
    assert ans.text.startswith("This question turns on “kingdom”: the books gmprep holds (")
    assert "use it only in passing (5 entries, none of them for its rules)" in ans.text and "`gmprep books add`" in ans.text
    # the setting turns it off: the same question is then declined only because no held entry states a rule under
    # "kingdom" (core/agents/stated.py); with that off too, it is no longer declined for the term
    off = extractive.model_copy(update={"answerability": AnswerabilitySettings(hinge_slack=-1)})
    ans = await answer_question(q, history=[], searcher=searcher, settings=off)
    assert _verdict(ans).get("foreign") == "kingdom"
    off = extractive.model_copy(update={"answerability": AnswerabilitySettings(hinge_slack=-1, unstated_repeats=0)})
    ans = await answer_question(q, history=[], searcher=searcher, settings=off)
    assert _verdict(ans).get("foreign_uses") is None


def test_another_books_name_beside_the_held_rule_asked():
    # the asking sentence names the first passage's rule and no other book's entry: the held rule is asked
    q = ("Bonuses to Leap distance like greater spry sinews stack. So if I roll a 30 on the Athletics check to Long "
         "Jump, do I jump 30 feet or 60 feet?")
    assert asked_besides(q, ["spry sinews"], "Long Jump").startswith("So if I roll a 30")
    # a parenthesis is an aside: its examples are not what is asked
    q2 = "If I use a transcendence (like Flowing Spirit Strike with the Gleaming Blade), do both Strikes get it?"
    assert asked_besides(q2, ["Gleaming Blade"], "Transcendence (trait)")
    # the other book's entry is in the asking sentence, or no asking sentence names the first passage's rule
    assert asked_besides("Can a Starlit Span magus use the d6 damage of the Ignition cantrip at range?",
                         ["Starlit Span", "magus"], "Ignition") == ""
    assert asked_besides(q, ["spry sinews"], "High Jump") == ""
    assert asked_besides("Risky Reload says the firearm misfires. What does a misfire do?", ["Risky Reload"],
                         "Interact") == ""


async def test_another_books_name_beside_a_held_rule_is_answered_saying_so(searcher, extractive):
    q = ("I'm trying to understand Leap bonuses. Bonuses to Leap distance like greater spry sinews, boots of bounding "
         "and Powerful Leap are untyped and stack, and Long Jump says you Leap. So if my character has a 30-foot "
         "Speed, +30 feet of Leap bonuses, and rolls a 30 on the Athletics check to Long Jump, do they jump only 30 "
         "feet, 30 + 30 = 60 feet, or could they have gone farther with a better roll?")
    ans = await answer_question(q, history=[], searcher=searcher, settings=extractive)
    verdict = _verdict(ans)
    assert ans.outcome == "answered", verdict
    assert verdict["besides"] == [("spry sinews", "Howl of the Wild", "equipment")]
    assert ans.text.startswith("“spry sinews” (equipment) is from Howl of the Wild, which gmprep does not hold, so "
                               "this does not cover it; the books it holds (")
    assert any("long-jump" in c.source_id for c in ans.citations), [c.source_id for c in ans.citations]
    # off: declined naming the book, as before
    off = extractive.merged({"answerability": {"other_book_besides": False}})
    ans = await answer_question(q, history=[], searcher=searcher, settings=off)
    assert ans.outcome == "not_in_corpus" and _verdict(ans)["foreign_book"] == "Howl of the Wild"


async def test_another_books_entry_asked_stays_not_in_corpus(searcher, extractive):
    # the other book's entry is in the asking sentence: its rule is asked, though Ignition is held
    q = ("Can a Starlit Span magus use the d6 damage of the Ignition cantrip when Spellstriking at range, or does it "
         "have to be the d4 ranged version since the target isn't in melee reach?")
    ans = await answer_question(q, history=[], searcher=searcher, settings=extractive)
    verdict = _verdict(ans)
    assert ans.outcome == "not_in_corpus" and ans.declined, verdict
    assert verdict["foreign_book"] == "Secrets of Magic" and not verdict["besides"]


def test_the_note_names_each_entry_and_book_and_follows_a_rename():
    v = Assessment(outcome="answer", renamed=[("flat-footed", "Off-Guard")], held_books=["GM Core", "Player Core"],
                   besides=[("Spark Transcendence", "War of Immortals", "action"),
                            ("Gleaming Blade", "War of Immortals", "feat")])
    assert answer_note(v) == (
        "“flat-footed” is called Off-Guard in the Remaster books. “Spark Transcendence” (action) and “Gleaming Blade” "
        "(feat) are from War of Immortals, which gmprep does not hold, so this does not cover them; the books it "
        "holds (GM Core, Player Core) say:")
    assert answer_note(Assessment(outcome="answer")) == ""


def test_other_books_named_by_title(use):
    held = held_books(use.db)
    # an Adventure Path by its name (the source pages' "Source Group"), a book by its title, a hardcover without
    # "(Hardcover)"
    [t] = publication_terms("Running the circus shows in Extinction Curse: can a PC skip an action?", use, held)
    assert (t.shown, t.book, t.category) == ("Extinction Curse", "Extinction Curse", "book")
    [t] = publication_terms("Do the undead archetypes from Book of the Dead add the undead trait?", use, held)
    assert t.book == "Book of the Dead"
    [t] = publication_terms("Season of Ghosts book 3 question: are the PCs incorporeal there?", use, held)
    assert t.book == "Season of Ghosts"
    # held books, the superseded ones, and titles not written as names are no other book
    for q in ("Does Player Core 2 change the champion's reaction?", "The Core Rulebook said flat-footed; is it the same?",
              "Is there an extinction curse in the books?", "What does the book of the dead say about undead?"):
        assert publication_terms(q, use, held) == [], q


def test_another_books_name_english_never_records_and_the_glossary_chapter(use):
    held = held_books(use.db)
    # the trait glossary's chapter lists every trait it defines: no entry's use of the word
    assert use.uses("anadi") == 0 and "Pathfinder trait glossary (system localization)" in use.glossary_books()
    # English never records "anadi", but the catalogue lists it as another book's ancestry
    [t] = other_book_terms("Would the anadi's spider form stop a monk from using stances?", use, held)
    assert (t.shown, t.book, t.category) == ("anadi", "The Mwangi Expanse", "Ancestry")


def test_a_held_books_entry_the_store_lacks(use):
    held = held_books(use.db)
    # Player Core 2 lists Empiricism (an investigator methodology); the store has the Methodology class feature only,
    # which names none
    q = "Empiricism investigator question: can I use Expeditious Inspection more than once a minute?"
    [t] = other_book_terms(q, use, held)
    assert (t.shown, t.book, t.category, t.missing) == ("Empiricism", "Player Core 2", "Methodology", True)
    # off, or a held entry of that name, or more held entries writing it than lists of choices would
    assert other_book_terms(q, use, held, missing_uses=-1) == []
    # Staff Nexus was such a name until the corpus gained the arcane theses (ingest/class_options.py)
    assert other_book_terms("Remastered Staff Nexus question: does the makeshift staff gain charges?", use, held) == []
    assert other_book_terms("Can I Shield Block with my Staff?", use, held) == []
    # a name held entries write may be stated inside a longer entry (the cleric's Deific Weapon): not missing
    assert use.uses("deific weapon") > 0
    assert other_book_terms("What is the Deific Weapon class feature?", use, held) == []
    assert other_book_terms("Say a Liberation champion decides to enslave someone and falls.", use, held) == []
    # a held book's name in plain lower-case words is the held books' own phrase
    assert other_book_terms("Can my cleric cast a spell from a 1st-rank scroll?", use, held) == []


async def test_another_book_named_by_title_is_not_in_corpus_naming_it(searcher, extractive):
    q = ("Running the circus shows in Extinction Curse: each performer in an act gets 3 actions and the listed "
         "options are Perform a Trick, Costar, and Send in the Clowns. Can a PC choose to just not use their "
         "remaining actions in an act?")
    ans = await answer_question(q, history=[], searcher=searcher, settings=extractive)
    verdict = _verdict(ans)
    assert ans.outcome == "not_in_corpus" and ans.declined, verdict
    assert (verdict["foreign"], verdict["foreign_book"], verdict["foreign_kind"]) == (
        "Extinction Curse", "Extinction Curse", "book")
    assert ans.text.startswith("This question is about Extinction Curse, which is not among the books gmprep holds (")
    assert "Add your Extinction Curse PDF with `gmprep books add`" in ans.text
    off = extractive.merged({"answerability": {"book_titles": False}})
    ans = await answer_question(q, history=[], searcher=searcher, settings=off)
    assert _verdict(ans).get("foreign_book") != "Extinction Curse"


def test_pathfinder_1e_books_named_by_title(use):
    held = held_books(use.db)
    # a book by its title, an Adventure Path by its player's guide's name; both say their edition
    [t] = publication_terms("In Pathfinder Unchained, does the unchained rogue keep sneak attack?", use, held)
    assert (t.shown, t.book, t.category) == ("Pathfinder Unchained", "Pathfinder Unchained (Pathfinder 1st Edition)",
                                             "book")
    [t] = publication_terms("About to start a Reign of Winter campaign: how does cold weather work?", use, held)
    assert t.book == "Reign of Winter (Pathfinder 1st Edition)"
    # a question that says it is about Pathfinder 2e plays the book in these rules; a 2e title stays the 2e book's
    assert publication_terms("Running Reign of Winter converted to 2e: how does cold weather work?", use, held) == []
    [t] = publication_terms("We are playing Kingmaker: how do kingdom turns work?", use, held)
    assert t.book == "Kingmaker"


async def test_a_pathfinder_1e_book_named_is_not_in_corpus_naming_the_edition(searcher, extractive):
    q = ("About to start a Reign of Winter campaign. We're confused on how cold weather works: cold and exposure deal "
         "nonlethal damage. Does that stop magical healing?")
    ans = await answer_question(q, history=[], searcher=searcher, settings=extractive)
    verdict = _verdict(ans)
    assert ans.outcome == "not_in_corpus" and ans.declined, verdict
    assert ans.text.startswith("This question is about Reign of Winter, a Pathfinder 1st Edition book: its rules are "
                               "not in the Pathfinder 2e books gmprep holds ("), ans.text


async def test_a_held_books_entry_the_store_lacks_is_not_in_corpus_naming_the_book(searcher, extractive):
    q = ("Empiricism investigator question: can I use Expeditious Inspection more than once a minute, and does it "
         "let me Recall Knowledge?")
    ans = await answer_question(q, history=[], searcher=searcher, settings=extractive)
    verdict = _verdict(ans)
    assert ans.outcome == "not_in_corpus" and ans.declined, verdict
    assert (verdict["foreign"], verdict["foreign_book"]) == ("Empiricism", "Player Core 2")
    assert ans.text.startswith("“Empiricism” (methodology) is in Player Core 2, but gmprep's copy of Player Core 2 "
                               "does not have its text")
    off = extractive.merged({"answerability": {"held_missing_uses": -1}})
    ans = await answer_question(q, history=[], searcher=searcher, settings=off)
    assert _verdict(ans).get("foreign") != "Empiricism"


def test_a_rename_beside_another_books_entry_is_asked_by_either_name():
    q = "Stitch Flesh aside, am I treated as undead for something like searing light?"
    assert asked_besides(q, ["Stitch Flesh"], ["Holy Light", "searing light"]) == ""  # the entry is in the sentence
    q = "I took Stitch Flesh. Am I treated as undead for something like searing light?"
    assert asked_besides(q, ["Stitch Flesh"], ["Holy Light", "searing light"]).startswith("Am I treated")
    assert asked_besides(q, ["Stitch Flesh"], "Holy Light") == ""


def test_the_note_names_books_by_title_and_held_books_entries_the_store_lacks():
    v = Assessment(outcome="answer", held_books=["GM Core", "Player Core", "Player Core 2"],
                   besides=[("Toxicologist", "Player Core 2", "research field"),
                            ("Abomination Vaults", "Abomination Vaults", "book")])
    assert answer_note(v) == (
        "“Toxicologist” (research field) is in Player Core 2, but gmprep's copy does not have the text; "
        "“Abomination Vaults” is a book gmprep does not hold, so this does not cover them; the books it holds "
        "(GM Core, Player Core, Player Core 2) say:")


async def test_the_guards_class_beside_a_held_rule_asked_is_answered_naming_its_book(searcher, extractive):
    # the other-systems guard's Pathfinder 2e names are decided like another book's entry: an asking sentence
    # without the class that names the first passage's rule asks the held rule. (Written in lower case: a capitalised
    # held name beside it, "Cast a Spell", already makes the guard step aside, without the note)
    q = ("My summoner holds a longspear in both hands. Do I need a hand free to cast a spell while wielding a "
         "two-handed weapon?")
    on = extractive.merged({"answerability": {"guard_besides": True}})  # off by default (the held-out run, stop 31)
    ans = await answer_question(q, history=[], searcher=searcher, settings=on)
    verdict = _verdict(ans)
    assert ans.outcome == "answered", (ans.text, ans.citations[:1])
    assert verdict["besides"] == [("summoner", "Secrets of Magic", "class")], verdict
    assert ans.text.startswith("“summoner” (class) is from Secrets of Magic, which gmprep does not hold, so this "
                               "does not cover it; the books it holds ("), ans.text
    # off: the guard declines it, naming the book, as before
    for off in (extractive.merged({"answerability": {"guard_besides": False}}),
                on.merged({"answerability": {"other_book_besides": False}})):
        ans = await answer_question(q, history=[], searcher=searcher, settings=off)
        assert ans.outcome == "not_in_corpus" and ans.text.startswith("“summoner” (class) is from Secrets of Magic")


def test_the_note_says_another_book_when_the_catalogues_know_none():
    v = Assessment(outcome="answer", held_books=["Player Core"], besides=[("gunslinger", "", "")])
    assert answer_note(v) == ("“gunslinger” is from another book, which gmprep does not hold, so this does not "
                              "cover it; the books it holds (Player Core) say:")


def test_the_guards_name_in_a_sentence_that_asks_is_what_is_asked():
    # a sentence that asks, or says it is the question, naming the class: the class's rules are asked
    assert names_asked("In the Kingmaker AP, what's the timing to claim a hex? I understand hexploration, but how long "
                       "does it take?", ["Kingmaker"]).startswith("In the Kingmaker AP")
    q = ("I have a question about how the summoner's shared hit point pool interacts with effects that target both me "
         "and my eidolon. But what if electric arc targets both of us?")
    assert names_asked(q, ["summoner", "eidolon"]).startswith("I have a question about how")
    # the scene, an example given with "like", a parenthesis: not asked
    assert names_asked("I'm building a Summoner that I'd like to hold a longspear. Can you cast a spell while "
                       "wielding a 2-handed weapon?", ["summoner"]) == ""
    assert names_asked("Can a character use encounter activities like the exemplar's Scar of the Survivor during "
                       "exploration? Is there any limit on using actions in exploration mode?", ["exemplar"]) == ""
    assert names_asked("Can I Stride twice (my thaumaturge wants to)?", ["thaumaturge"]) == ""
    # "like to" is a wish, not an example
    assert names_asked("Would a summoner like to hold a longspear?", ["summoner"]) != ""


async def test_the_guards_class_asked_is_declined_beside_a_held_rule(searcher, extractive):
    # the same held rule as above, but a sentence that asks names the class: its rules are in play, declined
    q = ("Can my summoner hold a longspear in both hands? Do I need a hand free to cast a spell while wielding a "
         "two-handed weapon?")
    ans = await answer_question(q, history=[], searcher=searcher, settings=extractive)
    assert ans.outcome == "not_in_corpus" and ans.text.startswith("“summoner” (class) is from Secrets of Magic"), \
        ans.text
