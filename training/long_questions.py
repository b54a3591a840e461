"""Long training questions: a short written question told the way forum askers write.

Real forum questions run 2-5 sentences: table context first (party level, class, what just happened), the
question somewhere in it, an aside, a follow-up, often a second rule named that is not the one asked about.
The written situation questions (the question index's data files) are one sentence; a reranker trained on
them reads a long question's preamble and loses the question (docs/retrieval.md, "Reranker r10").

``lengthen`` wraps one written question in pieces drawn from the lists below (a GM's or a player's voice;
no rule names, so nothing in a piece points at an answer), reproducibly from the caller's ``random.Random``.
With ``mention``, the name of another entry is dropped in as "not what I am asking about"; the trainer
then uses that entry as the question's first hard negative (``TrainQuery.mentioned``).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

# Slot fillers of the pieces. A filler sharing a word with the asked entry's name is not used (a question
# about the Fighter class must not say "my fighter").
_LEVELS = [str(n) for n in range(1, 21)]
_HEROES = ["fighter", "rogue", "wizard", "cleric", "ranger", "bard", "druid", "champion", "monk", "barbarian",
           "sorcerer", "witch", "alchemist", "investigator", "swashbuckler", "magus", "oracle", "summoner",
           "thaumaturge", "psychic", "kineticist", "gunslinger", "inventor"]
_FOLK = ["dwarf", "elf", "goblin", "halfling", "gnome", "orc", "human", "leshy", "kobold", "catfolk", "ratfolk"]
_PLACES = ["a ruined keep", "the sewers under the city", "a swamp", "an old mine", "a haunted manor", "the docks",
           "a forest shrine", "a tavern brawl", "the lich's tower", "a collapsing bridge", "a desert tomb"]
_SIZES = ["four", "five", "three", "six"]

# Table context, before the question.
PREAMBLES = [
    "We're running a level {level} party of {size} and this came up last session.",
    "Quick context: my players are level {level}, and the {hero} is the one who triggered this.",
    "I'm GMing for the first time, a group of {size} at level {level}.",
    "Our {hero} has been carrying the group lately, but tonight something weird happened.",
    "So we were in {place} on Sunday and the fight went sideways fast.",
    "Long-time D&D player here, new to this system, playing a {folk} {hero} at level {level}.",
    "Running an adventure path, party of {size}, everyone level {level}.",
    "Last session my {folk} {hero} got into a situation none of us knew how to rule.",
    "This is probably a dumb question but our table argued about it for twenty minutes.",
    "Me and my group are about halfway through a homebrew campaign, level {level} right now.",
    "I play a {hero} in a weekly game and our GM asked me to look this up before next time.",
    "We had a big boss fight in {place} and I made a call at the table that I'm not sure about.",
    "Background: level {level} party, a {hero}, a {hero2} and two newer players.",
    "My {hero2} player asked me something after the game and I didn't have an answer.",
    "New GM here, still learning the rules, running a level {level} one-shot.",
    "Our group just hit level {level} and the {hero} wants to try something new.",
    "So the party was fighting in {place} when this happened.",
    "I've read the relevant pages three times and I'm still confused.",
    "Playing online with some friends, I'm the {folk} {hero} of the group.",
    "Situation from last night's game, party of {size} at level {level}.",
    "We play every other week and this keeps coming up.",
    "My table is split on this one and I said I'd ask here.",
    "Context: the {hero2} was almost out of the fight and the rest of us were spread out.",
    "Hi all, GM of a level {level} group here.",
    "I'm prepping next session, which takes place in {place}.",
    "One of my players (a {folk} {hero}) did something clever and I want to make sure I ruled it right.",
    "This happened in our level {level} game with a {hero} and a {hero2} in the front line.",
    "Sorry if this has been asked before, I searched and couldn't find it.",
    "First campaign in this edition, we're level {level} and mostly figuring things out as we go.",
    "Our {hero} player loves edge cases, and this was tonight's.",
]

# Asides: said in passing, answer nothing.
ASIDES = [
    "(Yes, we probably should have looked it up before the session.)",
    "For what it's worth, we ruled it the generous way at the table so the game could keep moving.",
    "The player was pretty upset about it, so I want to get it right.",
    "We use a VTT, if that matters.",
    "I couldn't find it quickly during play and I hate stopping the game to search.",
    "My gut says one thing but the wording seems to say another.",
    "We're all pretty new to the system.",
    "I know the answer might be 'GM's call', but I'd like to know what the book says.",
    "It didn't end up deciding the fight, but it will come up again.",
    "The {hero} player swears their last GM ran it differently.",
    "We spent way too long arguing about it.",
    "I'd rather not houserule it if there's a clear answer.",
    "Honestly it was a fun moment either way.",
    "Not trying to rules-lawyer, I just want to run it consistently.",
    "English isn't my first language, so sorry if this is worded oddly.",
    "It was late and everyone was tired, so we just moved on.",
    "I checked the index of the book but I'm not sure which part covers this.",
    "Our group has a rule to look things up after the session instead of during it.",
    "The rest of the party thought it was hilarious.",
    "I'm asking as the GM, not the player, if that changes anything.",
]

# Follow-ups and sign-offs, after the question.
FOLLOW_UPS = [
    "Also, does anything change at higher levels?",
    "And if it works, can they do it again the next round?",
    "Bonus question: does it matter whether the creature is an enemy or an ally?",
    "Thanks in advance!",
    "Any help appreciated.",
    "Would love a page reference if anyone has one.",
    "And would the answer be different outside of combat?",
    "Thanks, this sub has been super helpful so far.",
    "Does it work the same way for monsters?",
    "If I got it wrong, how would you fix it retroactively?",
    "Just want to make sure I'm not missing something obvious.",
    "Also curious whether people actually run it this way at their tables.",
    "Cheers!",
    "Do I need to ask for a roll, or does it just happen?",
    "And what if two players try it at the same time?",
    "Edit: fixed some typos.",
    "Am I overthinking this?",
    "Thanks for reading all that.",
    "Would it change anything if the {hero} had more actions left?",
    "Is there a simple way to explain it to the players?",
]

# A second rule named in passing, not the one asked about ({other}: that entry's name).
MENTIONS = [
    "We already know how {other} works, that's not the issue.",
    "Someone at the table brought up {other}, but I don't think that's related.",
    "I looked at {other} first, but it doesn't seem to cover this.",
    "The {hero} also had {other} going at the time, if that matters.",
    "This isn't about {other}, we sorted that part out.",
    "My first thought was {other}, but the wording doesn't fit.",
    "(We also had a question about {other}, but that's for another post.)",
    "One player insisted it's {other}, but I'm not convinced.",
    "Earlier that fight we'd already dealt with {other} without trouble.",
    "I know {other} is a thing, but I'm asking about something else.",
    "Before you say it, {other} doesn't apply here as far as I can tell.",
    "We had just used {other} the round before.",
]

# Before the question, to hand it over.
LEADS = ["So my question is:", "Anyway:", "My question:", "Here's the thing:", "", "", "", "So,", "Basically:"]

_SLOT = re.compile(r"\{(\w+)\}")
_WORD = re.compile(r"[a-z]+")


def _fill(piece: str, rng: random.Random, avoid: set[str], other: str | None) -> str:
    pools = {"level": _LEVELS, "hero": _HEROES, "hero2": _HEROES, "folk": _FOLK, "place": _PLACES, "size": _SIZES}

    def one(m: re.Match) -> str:
        slot = m.group(1)
        if slot == "other":
            return other or "that"
        choices = [c for c in pools[slot] if not set(_WORD.findall(c)) & avoid] or pools["size"]
        return rng.choice(choices)

    return _SLOT.sub(one, piece)


def lengthen(question: str, rng: random.Random, avoid_name: str = "", mention: str | None = None) -> str:
    """``question`` told the way a forum asker writes it: 1-2 sentences of context, maybe the ``mention``
    of another rule, a lead-in, the question, and an aside and/or a follow-up (2-6 sentences in all).
    ``avoid_name``: the asked entry's name; no filler shares a word with it."""
    avoid = set(_WORD.findall(avoid_name.lower()))
    before = rng.sample(PREAMBLES, rng.choice([1, 1, 2]))
    after: list[str] = []
    if rng.random() < 0.6:
        after.append(rng.choice(ASIDES))
    if rng.random() < 0.6 or not after:
        after.append(rng.choice(FOLLOW_UPS))
    if rng.random() < 0.25 and len(after) > 1:  # the aside before the question, now and then
        before.append(after.pop(0))
    if mention:
        before.insert(rng.randint(1, len(before)), rng.choice(MENTIONS))
    lead = rng.choice(LEADS)
    q = question.strip()
    if lead:
        q = f"{lead} {q[0].lower() + q[1:] if q[:2].isalpha() and not q[:2].isupper() else q}"
    parts = [*before, q, *after]
    return " ".join(_fill(p, rng, avoid, mention) for p in parts)


def pick_mention(candidates: Sequence[str], rng: random.Random, top: int = 5) -> str | None:
    """One of the first ``top`` candidate entry ids (the question's lexical neighbours that are fair
    negatives), or None when there is none."""
    pool = list(candidates[:top])
    return rng.choice(pool) if pool else None


# ----- context made of another entry's situation ----------------------------------------------------------
# A long post's context is often the situation itself, and the situation calls on other rules than the one
# asked about. ``with_context`` puts another entry's written situation question(s) around the asked one:
# its situation part when it has one ("My rogue ducks behind a crate in the middle of the fight - can the
# guards still see her?" -> "My rogue ducks behind a crate in the middle of the fight."), otherwise the whole
# question in one of the frames below (something already settled or left for later). The other entry becomes
# the question's first hard negative.
SETTLED = [
    'Earlier in the session someone asked "{q}" and we sorted that out.',
    'We already answered "{q}" at the table, that part is fine.',
    'Last time the question was "{q}", and we looked that one up.',
    'The first thing that came up was "{q}", which we settled.',
    'A player also asked "{q}", but that one is for another post.',
    'We had just dealt with "{q}" the round before.',
    'I know the answer to "{q}" already.',
    'Someone also wondered "{q}" but we agreed on that quickly.',
]
_SITUATION = re.compile(r"^(.{25,}?)(?:([.!])\s+(?=[A-Z])|\s+[-\u2013\u2014;]\s+(?=\w))")
_ASKING = re.compile(r"^(how|what|when|where|which|who|why|can|could|does|do|is|are|should|would|will|if)\b", re.I)


def situation_part(question: str) -> str | None:
    """The part of a written question that tells the situation, before the asking clause ("My rogue ducks
    behind a crate - can the guards see her?" -> "My rogue ducks behind a crate."), or None."""
    m = _SITUATION.match(question.strip())
    if not m or _ASKING.match(m.group(1)) or "?" in m.group(1):
        return None
    return m.group(1).rstrip(" ,") + (m.group(2) or ".")


def _settled(other_q: str, rng: random.Random) -> str:
    # one quoted question: a "?" inside it would make a sentence that asks (kg.query.sentences) before the asked one
    q = re.sub(r"\?\s+", ", ", other_q.strip()).rstrip("?.! ")
    return rng.choice(SETTLED).format(q=q + "?")


def with_context(question: str, others: Sequence[str], rng: random.Random, avoid_name: str = "") -> tuple[str, str]:
    """``question`` inside context made of ``others`` (another entry's written questions): each one told as its
    situation part (before the question) when it has one, otherwise as something settled or left for later
    (before the question, now and then after it); a table preamble and a follow-up now and then. The asked
    question stays the only sentence of the context part that ends in "?" (what ``kg.query.condense`` keeps), so
    the reading search gives the reranker still holds it. Returns the text and how the first other was told
    ("situation" or "settled")."""
    avoid = set(_WORD.findall(avoid_name.lower()))
    before: list[str] = []
    after: list[str] = []
    kinds = []
    for other in others:
        situation = situation_part(other)
        if situation and rng.random() < 0.8:
            kinds.append("situation")
            before.append(situation)
        else:
            kinds.append("settled")
            (after if rng.random() < 0.3 else before).append(_settled(other, rng))
    if rng.random() < 0.4:
        before.insert(0, _fill(rng.choice(PREAMBLES), rng, avoid, None))
    if rng.random() < 0.3:
        after.append(_fill(rng.choice(FOLLOW_UPS), rng, avoid, None))
    lead = rng.choice(LEADS)
    q = question.strip()
    if lead:
        q = f"{lead} {q[0].lower() + q[1:] if q[:2].isalpha() and not q[:2].isupper() else q}"
    return " ".join([*before, q, *after]), kinds[0] if kinds else "none"
