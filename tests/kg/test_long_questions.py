"""Long real questions (issue 12): a forum post names the spells, feats and actions of its story around what it
asks. The names it drops in passing must not outrank the rule it asks about, and the cross-encoder reads the
post's question sentences rather than a window filled by the story."""

from __future__ import annotations

from gmprep.common.settings import SearchSettings
from gmprep.kg.query import condense
from gmprep.kg.search import Searcher

POST = ("Last session the monk used Flurry of Blows twice and then tried to Stride away from the ogre, and the ogre "
        "used Reactive Strike. Is there a penalty for attacking several times in one turn, and does it reset each turn?")
MAP = {"pf2e:rule:player-core--attack-rolls--multiple-attack-penalty", "pf2e:rule:player-core--multiple-attack-penalty"}


def _words(text: str) -> int:
    return len(text.split())


def test_condense_keeps_the_question_sentences_within_the_budget():
    short = "Does Trip work on a flying creature?"
    assert condense(short, 28, _words) == short
    post = ("We started with the Beginner Box and just reached 5th level. I get four attribute boosts, but the sheet "
            "only has modifiers. How do the boosts raise my modifiers?")
    got = condense(post, 20, _words)
    # the question first, then the sentence just before it while it fits; the opening aside is dropped
    assert got == "I get four attribute boosts, but the sheet only has modifiers. How do the boosts raise my modifiers?"
    assert condense(post, 8, _words) == "How do the boosts raise my modifiers?"
    # several questions are all kept, in order; a statement-only post keeps its last sentence
    two = "The wall blocks sight. Can he cast charm? Does the wall block line of effect? We argued for an hour."
    assert condense(two, 12, _words) == "Can he cast charm? Does the wall block line of effect?"
    assert condense("One long story. Another long story here. Tell me the rule", 5, _words) == "Tell me the rule"


def test_names_in_a_long_post_do_not_outrank_the_rule_it_asks_about(store):
    # the names' bonus alone (the post's focus, search.focus_weight, is tests/kg/test_long_post_focus.py's)
    ranked = [h.node_id for h in Searcher(store, settings=SearchSettings(focus_weight=0)).search(POST, k=10)]
    plain = [h.node_id for h in Searcher(store, settings=SearchSettings(hint_words=0, focus_weight=0)).search(POST, k=10)]
    at = min(ranked.index(n) for n in MAP if n in ranked)
    assert at <= 2, ranked
    # with every name's full bonus the asides (Flurry of Blows, Stride, Reactive Strike) push it further down
    assert at < min((plain.index(n) for n in MAP if n in plain), default=10), (ranked, plain)
