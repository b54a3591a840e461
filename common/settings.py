"""Configuration in one place, with the workspace-trust policy.

Sources, later ones win: built-in defaults < the user's ``$XDG_CONFIG_HOME/gmprep/config.toml``
< ``[tool.gmprep]`` in the workspace ``pyproject.toml`` < ``gmprep.toml`` in the workspace
< environment (``GMPREP_STORE``) < LSP ``initializationOptions`` / ``workspace/configuration``
(section ``gmprep``) < command-line flags. The server's workspace is the opened folder, the CLI's the
current folder; both read them through ``resolve_settings``/``load_settings``.

Workspace files are written by whoever wrote the folder (a cloned campaign repository), not by the
user: they may set only ``WORKSPACE_KEYS`` (``notes_dir`` inside the workspace). The answer backend,
its URL, key and model, the store folder and the device - what could send note text
off the machine or read and write outside the folder - come from the user (the user config file,
the editor, the environment, the command line) unless the user lists the folder in
``trusted_workspaces`` of the user config file. Ignored keys are returned by ``resolve_settings``
so the caller can say so.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

# What a workspace file may set without the user's trust: nothing here reaches the network, a model
# file or a path outside the workspace. (notes_dir is also checked to stay inside the workspace.)
WORKSPACE_KEYS = frozenset({"books", "notes_dir", "search", "hover"})
TRUST_KEY = "trusted_workspaces"  # user config file only: folders whose files may set everything


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/gmprep`` (or ``~/.cache/gmprep``): models assembled once, the CLI's default store."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gmprep"


class SearchSettings(BaseModel):
    """Hybrid search knobs (documented defaults)."""

    # On by default: on the dev set the bundled cross-encoder lifts R@5 from 0.848 (fused BM25+dense +
    # graph) to 0.914 (docs/retrieval.md). Scoring only the top 8 fused candidates (plus named entries)
    # keeps the recall of 20 at under half the CPU time; a larger rerank_top is cheap on a GPU.
    rerank: bool = True  # cross-encoder rerank of the fused top candidates
    rerank_top: int = 8  # how many fused candidates the cross-encoder scores
    # Tokens (question + passage) the cross-encoder reads. The passage starts with the entry's name,
    # type, traits and first lines, which is what tells relevance apart: 80 scored as well as 128
    # on dev (R@5 0.91 vs 0.89) at 60% of the CPU time.
    rerank_max_length: int = Field(80, ge=32, le=512)
    # A question longer than this many tokens is read by the cross-encoder as what it asks: its question
    # sentences and the sentence before them (kg.query.condense), so a forum post does not fill the window and
    # leave the passage unread; the first stage reads the whole question. 28: tuning sets with hint_words,
    # R@1 0.622 -> 0.627, R@5 0.896 -> 0.902 (docs/retrieval.md "Long questions"). 0: the whole question.
    rerank_query_tokens: int = Field(28, ge=0, le=512)
    # The books' rules-prose sections (kg.models.Node.is_prose) have places of their own in the rerank
    # window, beside the rerank_top entries: in one window, long prose sections sharing the question's words
    # took the places of the entries the question names (docs/retrieval.md, "Rules prose").
    prose_top: int = Field(3, ge=0, le=50)
    # A reranked entry scores its reranker probability plus this share of its fused-rank prior (1 for the
    # first fused candidate, 0.5 for the fifth): the first-stage order keeps a say where the cross-encoder
    # is unsure. 0.6 since reranker r7 (trained on written situation questions): tuning sets, docs/retrieval.md.
    rerank_prior: float = Field(0.6, ge=0.0, le=5.0)
    # Past this many words the reranker's probability counts (rerank_words / words)^2 of itself (kg.search): a long
    # real post is read by the cross-encoder as its asking sentences only, often about "it", and there the first
    # stage (which read the whole post) ranked better. 40: forum-answerable-tune2 R@1 / R@5 / MRR 0.410 / 0.821 /
    # 0.576 -> 0.462 / 0.872 / 0.623, the 193 tuning questions unchanged; fresh forum-answerable-tune3 R@5 / R@10
    # 0.667 / 0.806 -> 0.722 / 0.861 but R@1 0.528 -> 0.472 (docs/retrieval.md, "The reranker's say in a long post").
    # 0: the whole probability whatever the length.
    rerank_words: int = Field(40, ge=0, le=1000)
    # In a question over rerank_words words, graph expansion lends each lead the same share of its source's score
    # ((rerank_words / words)^2): the story's named entries lead a long post's list, and their links (the story's
    # conditions) filled the rest of its top 10. forum-answerable-tune2 R@10 / MRR 0.872 / 0.635 -> 0.923 / 0.658,
    # dev and situation-dev unchanged; validation forum-answerable-tune3 R@5 0.722 -> 0.778, R@1 0.472 -> 0.444
    # (docs/retrieval.md, "A long post's expansion and readings"). False: the full share whatever the length.
    expand_share: bool = True
    # In a question over rerank_words words the cross-encoder also reads each sentence that does not ask, and the
    # whole post; a candidate keeps its best probability (max over readings). Off: tune2 R@5 +1, validation R@1 -1
    # and MRR down, at about twice a long post's search time (docs/retrieval.md, "A long post's expansion and readings").
    rerank_readings: bool = False
    # An entry named inside the question (a hint, or an action used as a verb) earns a bonus (kg.search NAME_BONUS);
    # past this many words the bonus shrinks to hint_words / words: a long question names the story around what it
    # asks (tuning sets: R@1 0.601 -> 0.622 at equal R@5, docs/retrieval.md "Long questions"). 0: always the full bonus.
    hint_words: int = Field(15, ge=0, le=1000)
    # Past hint_words words, a learned decision per named entry instead of the word count (kg.hint_share): whether
    # the question's asking sentence names it, after a question word, how many entries it names ... A name keeps
    # min(1, p / hint_keep_at) of its bonus, p the model's probability that it is what is asked. Off: measured, not
    # better on the tuning sets (docs/retrieval.md "Names asked about, learned").
    hint_model: bool = False
    hint_keep_at: float = Field(0.5, gt=0.0, le=1.0)
    # A question over hint_words words (a forum post: a story, then the ask, often "it") is also read as what it
    # asks: its asking sentences and the ones before them within focus_words words (kg.query.condense). That focus's
    # dense and question-index lists join the fusion at focus_weight of a plain list's share; BM25 and the names
    # still read the whole post. 0: off. Tuning sets R@1 0.622 -> 0.632, MRR 0.793 -> 0.796 at equal R@5; forum
    # answerable tune2 R@1 0.444 -> 0.528 (docs/retrieval.md "A long post's focus").
    focus_weight: float = Field(0.0, ge=0.0, le=2.0)  # 0.5 was chosen on tuning; off after the held-out run
    focus_words: int = Field(40, ge=1, le=500)
    seed_k: int = 50  # candidates taken from each of BM25 and the vector index
    expand_rounds: int = 2  # graph expansion rounds ("repeat until leads die out")
    expand_decay: float = 0.7  # score multiplier per hop (0.7: best dev R@5 with and without rerank)
    # The question index (kg.question_index): situations each rules entry answers, as a third fused list.
    question_index: bool = True
    question_k: int = 20  # entries taken from it
    question_weight: float = Field(1.0, ge=0.0, le=2.0)  # its share in the fusion, relative to BM25/dense
    # The fine-tuned bi-encoder's dense list (kg.dense_stage) where the repository ships the model and the store
    # holds its vectors (none is shipped: measured, not better on the tuning sets, docs/retrieval.md); with
    # dense_model_questions its question-index list too. Off: the stock MiniLM's lists.
    dense_model: bool = True
    dense_model_questions: bool = False
    # seeds and reranker read "the someone" where the query says "the wizard" (kg.query): dev and situation-dev R@5/R@10/MRR
    # equal or better (docs/retrieval.md)
    mask_characters: bool = True
    # Two-part questions ("Trips the bandit ... what does that leave it with?") need the entry a top hit's
    # matching paragraph links to (Trip's Success line -> Prone) among the first five: the best such link the
    # cross-encoder scores at least ``link_slot_floor`` takes the fifth place (kg.search, docs/retrieval.md).
    link_slot: bool = True
    link_slot_floor: float = Field(0.5, ge=0.0, le=1.0)
    # An entry whose name the question says only inside a longer name it names ("Sneak" in "Sneak Attack",
    # "Shield" in "Shield Block") is the shorter name's word match, not what is asked: its score loses this
    # much before graph expansion, so it neither leads the list nor lends its links (kg.search). 0.5: "Can my
    # rogue use Sneak Attack against a flanked creature?" Sneak Attack 7th -> 3rd; R@1/5/10 unchanged on the 327
    # tuning and 374 held-out questions (docs/retrieval.md, "A name inside a longer name"). 0: off.
    subname_penalty: float = Field(0.5, ge=0.0, le=2.0)
    # A feature name several classes share ("Weapon Specialization", "Reflex Expertise") names the feature of the
    # class the question names ("my fighter"), not the index's first pick by id (the bard's) (kg.query)
    class_own_features: bool = True
    # "cast heal", "casts fireball", "a scroll of sleep": the words before a lowercase name ask for the spell, which is
    # then named in the question like a capitalised one (kg.names' spell cues, the hover's ``hover.spell_cues``). The
    # 638 tuning questions write spells capitalised (3 read a cue, no gold moved); held out, one multi-gold forum
    # question's Heal rose from past 10th to 2nd (docs/retrieval.md, "A spell asked by casting it")
    spell_cues: bool = True
    # A table's initials for a name ("RK" Recall Knowledge, "AoO" the legacy Attack of Opportunity, "LoH", "FoB": the
    # name index's 51, the ones notes already hover) name their entry in a question and are read as that name by the
    # seeds, the cross-encoder and the answerability model ("do ogres get AoO" was declined as off-topic).
    # docs/retrieval.md, "Initials in a question"
    initials: bool = True


class LLMSettings(BaseModel):
    """Which answer backend to use. ``extractive`` needs no model at all; ``auto`` (the default) uses the
    local model when one is installed: transformers on a GPU, else llama.cpp on the CPU, else extractive
    (``gmprep.core.llm.factory.resolve_backend`` decides; ``gmprep doctor`` says what it picked)."""

    backend: Literal["auto", "extractive", "llamacpp", "transformers", "openai"] = "auto"
    model_path: str | None = None  # GGUF file (llamacpp) or HF model directory (transformers)
    url: str | None = None  # OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1
    model: str | None = None  # model name sent to the OpenAI-compatible endpoint
    api_key: str | None = None
    n_ctx: int = 4096
    n_threads: int | None = None
    timeout_s: float = 120.0
    max_tokens: int = 512
    temperature: float = 0.0
    # The answering model reads again each claim it wrote that the support check keeps (one yes/no call a claim, on
    # the cited passages' sentences around it),
    # and the claim is struck when the check's score and the model's reading together say unsupported
    # (``core/agents/support.py``, ``support_reader.json``). Measured on the hand judgements (docs/faithfulness.md,
    # "The answering model as the reader of support" and stop 41's excerpt): today's answers' test half 0.635 -> 0.716
    # agreement, the older answers' 0.949 -> 0.938; replayed, the kept claims judged supported rise 59% -> 71% (dev) and 50% -> 69%
    # (situation-dev). Off by default: more answers fall back to quoting, dev's text cites its gold less often
    # (0.943 -> 0.914, under the extractive answer's), and single-need answers' median goes 7.6 -> 18.4 s on 2 CPU
    # cores (issue 13's target: 15 s). Only llama.cpp reads next-token probabilities; other backends answer as before.
    support_reader: bool = False


class HoverSettings(BaseModel):
    """Which rule names in a note are hovered (docs/hover.md). Hover, diagnostics, inlay hints,
    completion and ``gmprep mentions`` all read these through one decision."""

    # Words and phrases never hovered in this workspace, as written ("Commander", "Everlight");
    # case and punctuation don't matter. The code action "Don't hover 'X' in this workspace" adds here.
    ignore_words: list[str] = Field(default_factory=list)
    # A GM's own shorthand for an entry, as written -> the entry's name or id ({strat = "Devise a Stratagem"}):
    # hovered wherever it is written, at any strictness (the GM said what it means); ignore_words still win.
    # A target that names no entry is left out.
    aliases: dict[str, str] = Field(default_factory=dict)
    # How sure the context scorer must be before a name is hovered: "loose" shows more (and more
    # noise), "strict" only clear rule references; the thresholds are calibrated with the model.
    strictness: Literal["loose", "normal", "strict"] = "normal"
    # Read a candidate near the threshold in its sentence with the small context model (kg/mention_context.py,
    # docs/mention-scorer.md "The context model in the hover decision"); off: the logistic scorer alone decides.
    context_model: bool = True
    # Words before a name that ask for a spell ("cast Sleep", "casts guidance", "scroll of detect magic", "wand of
    # charm"; kg/names.py ``_spell_asked``) choose the spell among the entries so named and show it at any score
    # below the threshold (not with "strict"). Off: on the tuning split it gained on one half of the GMs and
    # changed nothing on the other (docs/hover.md section 5, helper hov40).
    spell_cues: bool = False
    # Hover names of entries from books gmprep does not hold ("Defiant Banner", "Tracking Tag"; the other-books
    # catalogue, core/agents/otherbooks.py): the card says which book has it and how to add that book, having no text
    # to show. The scorer decides them like any name; several lowercase words are the English phrase (vetoed). Off by
    # default: the one clean held-out run (before the veto) raised recall 0.442 -> 0.471 but cost precision 0.830 ->
    # 0.812, past the bar set before it; the run with the veto (0.826 / 0.468) came after reading that run's errors
    # (docs/hover.md, "Entries of books gmprep does not hold"). Changing it reloads the name index.
    other_books: bool = False


class AnswerabilitySettings(BaseModel):
    """Knobs of the answer / not_in_books / not_in_corpus decision (``core/agents/answerability.py``)."""

    # A term the question repeats (at least ``hinge_repeats`` times) that books gmprep does not hold name entries
    # with, and that at most ``repeats + hinge_slack`` entries of the held books use, is another book's rule
    # ("kingdom" three times, the books say it in five entries): not_in_corpus (core/agents/otherbooks.py). Measured
    # on the tuning sets (docs/answerability.md, "The term the question turns on"): with 3 repeats, slack 2-12 finds
    # the same gaps and declines no answerable question; with 2 repeats only slack 2-3 does (4: "zombies" twice, six
    # entries). Answerable questions repeat words the books use in 6-22 entries, so the slack stays at 2.
    hinge_slack: int = Field(2, ge=-1, le=50)  # -1: off
    # ... and when none of the top five retrieved passages uses the term, up to ``repeats + hinge_unquoted_slack``
    # entries ("implement" four times, 17 entries: cooking and writing implements, "implement the rule"). Measured
    # (docs/answerability.md, "When the passages do not use the term"): 13-45 finds the same gaps and declines no
    # answerable question; 46 declines "defender" four times (50+ entries). Off (-1) by default: on the fresh
    # validation pair (not-in-corpus-tune2 / forum-answerable-tune2) 30 found one gap and made one false decline
    # (search missed the Tower Shield entry, so no passage used "tower"). -1: no such widening.
    hinge_unquoted_slack: int = Field(-1, ge=-1, le=50)
    hinge_repeats: int = Field(3, ge=2, le=10)
    # A word (or word pair) the question uses at least this many times, that other books name entries with (the
    # catalogue), that no held entry states (is named, aliased or bolded for: ``core/agents/stated.py``) and that no
    # top-five passage uses, is the other book's rule the question turns on ("implement" four times): not_in_corpus.
    # Measured (docs/answerability.md, "What the books state, not what they mention"): 2 found three more tuning gaps
    # with no answerable tuning question declined, but on the fresh validation pair (tune3) one gap (for a wrong
    # word) for three false declines ("seem", "right", "roof" twice each); 3 finds one tuning gap and changes nothing
    # on the validation pair, nor flags any of 15,497 generated answerable questions. 0: off.
    unstated_repeats: int = Field(3, ge=0, le=10)
    # ... or at least this many times when a sentence that asks (ends in "?") uses it and it is not among English's
    # commonest words (zipf < 5.5, ``stated.ASKED_MAX_ZIPF``): the asking sentence is about it ("If I crew a Crew 1
    # siege engine, ... am I still crewing it?" after "Siege engine question: ..."). Measured (docs/answerability.md,
    # "What the asking sentence is about"): 2 finds two more tuning gaps (siege engine, a bell implement), fires on 32
    # of 89 tuning gaps and on none of 248 answerable tuning questions; without the asking-sentence condition it is
    # the 2 repeats above ("seem", "roof" twice each, outside the asking sentences). 0: off.
    unstated_asked_repeats: int = Field(2, ge=0, le=10)
    # The word rule above (``unstated_repeats`` / ``unstated_asked_repeats``) also when an asking sentence names a held
    # rule beside other books' entries (``other_book_besides``): the repeated, asked term no held book states
    # outweighs it ("construct companion" three times beside Command an Animal; the exemplar's "ikon"). Measured: +2
    # tuning gaps, no answerable tuning question changes (5 of them name a held rule beside other books' entries).
    # False: such questions are answered with the note, as before.
    unstated_over_besides: bool = True
    # The word rule's vocabulary (``unstated_repeats`` / ``unstated_asked_repeats``) also holds the words of other
    # books' rules sections (core/agents/data/other-rules-sections.tsv.gz: the Gamemastery Guide's "Dual-Class PCs", the
    # Core Rulebook's "Alignment Damage"; a section a held book also heads is out), and a hyphenated word ("dual-class")
    # is a term. Measured (docs/answerability.md, "Other books' rules sections, and what "it" refers to"): +2 tuning
    # gaps, fires on no answerable tuning question and on none more of 15,497 generated ones. False: the entry
    # catalogue's words only.
    unstated_sections: bool = True
    # ... of those sections' titles, a single word counts only below this English frequency (wordfreq zipf; a word
    # pair always): titles are mostly ordinary words ("Normal Travel", "Card Games": "normal", "list", "card", "camp"
    # are 4.8-5.3), the asked ones rarer ("dual-class" 4.2, "payout" 3.4). Set by that reading, not swept: on the
    # tuning sets 4.3-6.0 give the same outcomes.
    unstated_section_zipf: float = Field(4.5, ge=0.0, le=8.0)
    # ... and a sentence that asks about "it" ("But what about spells that don't target it directly?") brings the
    # sentence before it in as asking, for ``unstated_asked_repeats`` ("Golem Antimagic says a golem is immune ...").
    # Only "it"/"its"/"itself": with "they" a generated question's scene word was flagged ("jumping from ship to ship.
    # How far can they move ...?"). Measured as above: +1 tuning gap (+1 for a wrong word), no answerable question.
    unstated_antecedent: bool = True
    # ... and of a sentence that asks after a colon, only the part after the colon asks (``stated.asking_clause``):
    # "The party members outside the cube want to help: can you reach in and ... pull someone out ...?" is not about
    # "members" (said twice, another book's word). Measured (docs/answerability.md, "A held name that is another
    # book's entry too"). False: the whole sentence, as before.
    unstated_asking_clause: bool = True
    # Whether the statistical model's own not_in_corpus (either stage, ``AnswerabilityModel``) declines. Measured
    # (docs/answerability.md, "The model's own gap verdict, off"): it was the reason of 0 of 175 declined tuning gaps
    # and 2 of 144 held-out ones (the rules in ``AnswerabilityJudge.assess`` found the rest), and of false declines of
    # plain questions about held rules ("Do I get a reaction at the start of combat ...?" -> "The reaction at the start
    # rule itself is not in the rules"; "Can you Strike with a shield?"). Off: those are answered, the rules still
    # decline gaps. True: as before stop 46.
    model_gaps: bool = False
    # A word English never records (wordfreq zipf 0) that no held entry uses, said at least this many times with one use
    # in a sentence that asks, that no top-five passage uses, is a creature, place or class of a book gmprep does not
    # hold ("The vrock's Dance of Ruin ... Does that mean a vrock must be flying ...?"): not_in_corpus
    # (``otherbooks.unknown_names``). Said once it is as often the asker's campaign ("Ezren") or a typo. Measured
    # (docs/answerability.md, "A held name that is another book's entry too"). 0: off.
    unknown_name_repeats: int = Field(2, ge=0, le=10)
    # A phrase of two or three ordinary words said at least this many times with one use in a sentence that asks, that
    # no entry body uses (FTS phrase count 0), is no entry's name, holds no multi-word entry name, is no pre-Remaster
    # name, and that no top-five passage uses, is the asker's term for a rule the held books do not state ("... making
    # a full attack ... during a full attack ... can I move and then make a full attack?": Pathfinder 1e)
    # (``answerability.absent_phrases``). Measured (docs/answerability.md, "A phrase the books never use, said again
    # and again"): at 2 it declined five answerable tuning questions ("gaze action", "leap bonuses"), at 3 none. 0: off.
    absent_phrase_repeats: int = Field(3, ge=0, le=10)
    # Another book's entry named beside the held rule asked (a sentence that asks, naming no other book's entry, names
    # the first passage's rule: Long Jump beside "greater spry sinews") is answered, saying the other book's name
    # aside (core/agents/otherbooks.py, ``asked_besides``; docs/answerability.md, "Another book's name beside a held
    # rule"). False: every such question is declined not_in_corpus, as before.
    other_book_besides: bool = True
    # ... except when the first passage's name is also an entry of one of those other books, of a kind no held book
    # lists under that name (a homonym): "a single gate fire kineticist ... Doesn't the 2-action Elemental Blast
    # qualify for the impulse junction ...?" names Rage of Elements' Elemental Blast (a class feature), not Player
    # Core 2's spell of that name, so it is that book's rule (``otherbooks.homonym``; the catalogue decides, no
    # word list). Shield Block beside a guardian stays the held rule: a held book lists Shield Block as a class
    # feature too. Measured (docs/answerability.md, "A held name that is another book's entry too"). False: as before.
    besides_homonym: bool = True
    # ... and the held rule asked may be any held entry that a sentence that asks names, retrieved or not, by a name
    # of at least this many words, outside the sentence's parentheses and "like" / "such as" examples, when the
    # sentence names no other book's entry ("There's an 8th-level commander ... Demoralizing Charge tactic (...). Can
    # the commander pick himself ... and if so does it count toward his multiple attack penalty ...?"). Measured
    # (docs/answerability.md, "A held rule further down, and another game's terms in any spelling"): at 2 words it
    # answered a gap ("Does it apply to persistent damage ...?" of Unleash Psyche), as did the first five passages'
    # names of two words ("shield augmentation" beside Shield Block). 0: the first passage's rule only, as before.
    besides_held_names: int = Field(3, ge=0, le=6)
    # ... and when every other book's name the question writes is a kind of person (an archetype, background, class,
    # ancestry or heritage) brought in by an article as the scene's NPC ("A Hellknight patrol stops the party", "An
    # Ulfen raider uses a greataxe"), never as the asker's build ("my summoner", "Hellknight Armiger Dedication"), the
    # held rule asked may be one a sentence that asks names by a capitalised name of any length, or the first
    # passage's rule named in the sentence that sentence refers back to ("... wants to Demoralize the bandits. How
    # many creatures can he target?"). Measured (docs/answerability.md, "Another book's person in the scene").
    besides_scene_people: bool = True
    # The same for the other-systems guard's Pathfinder 2e names (a class of another book: summoner; Kingmaker),
    # decided with the passages instead of declined before retrieval, and only when no sentence that asks (ends in
    # "?", or says it is the question) names one of them outside its asides (``otherbooks.names_asked``). Measured
    # (docs/answerability.md, "The guard's names in the asking sentences"): on the tuning sets it answers two
    # answerable questions the guard declined (fat3-002, prose nict-031) and loses no gap (without the asking-sentence
    # condition it lost nict2-020 and nict3-007). Off by default after the held-out run (stop 31): on the held-out
    # sets it answered three gap questions (nic2-106, nic3-106, nic-103) and no answerable one. False: the guard
    # declines them before retrieval, as before.
    guard_besides: bool = False
    # Another game's terms (PF1, 5e: the other-systems guard, ``core/sources.py``) decline a question as not_in_books
    # only when a sentence that asks (ends in "?", or says it is the question) names one outside its asides
    # (parentheses, examples given with "like" / "such as": ``otherbooks.names_asked``); named only in the setting or
    # as an example ("no special off-hand penalty like PF1"), the question goes to search and the decision like any
    # other. Measured (docs/answerability.md, "The guard's names in the asking sentences"). False: any such term
    # declines, as before.
    guard_asked: bool = True
    # The guard's terms match with their words joined by a hyphen or by spaces alike ("5 foot step" for the list's
    # "5-foot step", "full round action"), in questions, in the sentences that ask (``guard_asked``) and in the store's
    # scan that drops the terms the books use (``sources._term_pattern``). Plurals too were measured and left out
    # ("when he Wild Shapes into an animal" is a verb). Measured (docs/answerability.md, "A held rule further down, and
    # another game's terms in any spelling"). False: each term as listed.
    guard_loose_forms: bool = True
    # Besides its hand-written list, the guard reads other game systems' rules vocabularies derived from complete open
    # sources (``core/agents/data/other-systems-derived.json.gz``, by ``scripts/derive_other_systems_terms.py``: the
    # D&D 5e SRD, Pathfinder 1e and Starfinder 1e rules sections, conditions, class features and capitalised rules
    # terms their own text uses at least five times: "spell-like ability", "touch attack", "minor crew action"),
    # dropping, as for the list, every term the store's non-trait entries use. Such a term declines (not_in_books)
    # only when a sentence that asks names it, the question does not say it is about Pathfinder 2e ("Is there a coup
    # de grace in 2e?") and the books' own decision would answer (a not_in_corpus decline stays). Measured
    # (docs/answerability.md, "Other games' rules vocabularies, derived from their open sources"). False: the hand
    # list only.
    guard_derived: bool = True
    # The derived vocabularies hold other games' feats too (Pathfinder 1e's and Starfinder's, by name: "Crane
    # Riposte", "Paired Opportunist"; ``scripts/derive_other_systems_terms.py --feats``), filtered as the other derived
    # terms, matched only as written, capitalised ("punch through" in lower case is the asker's own words) and
    # deciding as they do. Measured (docs/answerability.md, "Another game's feats by name, and what "this ability"
    # refers to"). False: the derived rules terms only.
    guard_derived_feats: bool = True
    # A question that does not name the organized-play campaign but writes one of its guide's section titles that is
    # the campaign's own word (two content words or more that no held entry's name or text uses: "challenge points",
    # "chronicle sheets"; ``campaign.CampaignRules.own_title``) asks that section's rule: not_in_corpus naming the
    # guide, as when the campaign is named. Measured (docs/answerability.md, "Another game's feats by name, and what
    # "this ability" refers to"). False: the campaign must be named.
    campaign_own_titles: bool = True
    # The term-repeats reader (``unstated_repeats``) counts a word in capitals that spells the initials of a pair the
    # question writes out in capitals as a use of that pair ("I lose 1 Resolve Point ... with 2 RP, ... my remaining
    # RP": "Resolve Point" five times; ``otherbooks.repeated_terms``). Measured (docs/answerability.md, "Another game's
    # feats by name, and what "this ability" refers to"). False: the acronym is a word of its own.
    unstated_acronyms: bool = True
    # The term-repeats reader (``unstated_repeats``) leaves a term alone whose every word is at least this common in
    # English (wordfreq zipf), however often the question says it: "right" three times ("... the budget right? ...
    # If I'm reading this right, ...") is the asker's word, as the asked-twice reader (``unstated_asked_repeats``)
    # already held with ``stated.ASKED_MAX_ZIPF`` (5.5). Measured (docs/answerability.md, "Where the foreign name
    # sits, and English's commonest words"): no tuning question changes; forum-answerable-tune5's "right" is no
    # longer a false not_in_corpus. 0: off (any word counts, as before).
    unstated_common_zipf: float = Field(5.5, ge=0.0, le=8.0)
    # A sentence that asks and refers back, by "it" or a demonstrative before a noun ("Does using this ability provoke
    # ...?", "Wouldn't that move interrupt his attack?"), asks about what the sentence before it names: another game's
    # term named there declines as if the asking sentence named it (``otherbooks.names_asked``, ``refers_back``), for
    # the hand list (``guard_asked``) and the derived terms alike. Measured (the same section). False: only the
    # sentences that ask.
    guard_antecedent: bool = True
    # With ``guard_antecedent``, "her" / "his" / "their" before a noun refers back too ("Let's assume a lillend tries to
    # use her hallucinatory terrain spell-like ability ... What's her concentration modifier?";
    # ``otherbooks.refers_back(possessive=True)``). Measured (docs/answerability.md, "Another game's rule, asked, is a
    # rule gmprep does not hold": one tuning gap more, no new decline among the 15,386 generated answerable questions).
    # False: "it" and demonstratives only.
    guard_possessive: bool = True
    # A term derived from another game's source (``guard_derived``) that the held books use in another inflection,
    # word by word by Snowball stem ("Befuddled" where they write "befuddle foes", "Siege Engine" where they write
    # "siege engines", "Multiclassing" beside "multiclass archetype"), is their own word, as an exact use already is.
    guard_derived_inflections: bool = True
    # Another game's rule asked by name (the other-systems guard's term, hand list or derived, in a sentence ending in
    # "?" or one saying it is the question: ``SourceResult.game_term``) is a rule whose text gmprep does not hold: the
    # decline is not_in_corpus, naming the game and the books held (``AnswerabilityJudge.other_game``), as for another
    # Pathfinder 2e book's rule. A scene described without a question ("... wants to regain one during a short rest.")
    # keeps not_in_books: its other game's word is the asker's. Measured (docs/answerability.md, "Another game's rule,
    # asked, is a rule gmprep does not hold"). Off: on the held-out sets, run once (stop 35), it turned one answerable
    # question the guard declines (fah3-040) from not_in_books into a false not_in_corpus (6 -> 7 of 320, over the
    # issue's 2%), past the bar set before the run. False: not_in_books for every other game's term.
    other_game_not_in_corpus: bool = False
    # The other-edition reader (``core/agents/edition.py``; weights fitted on the books' text only by
    # ``scripts/fit_other_edition_reader.py``: word unigrams and bigrams, log-odds of Pathfinder 1e / D&D 5e SRD /
    # Starfinder 1e rules text against Pathfinder 2e's, the store's and the pre-Remaster Pf2eTools data's; calibrated
    # on held-aside windows of both): a question (not one that says it is about Pathfinder 2e) it reads as another
    # game's with at least this probability is declined not_in_corpus, "this reads as a Pathfinder 1st Edition rules
    # question", whatever the other readers decided (``AnswerabilityJudge.assess``), and so is the other-systems
    # guard's decline of such a question (``AnswerContext.other_game_decline``). Chosen by the smallest threshold with
    # no tuning answerable question newly declined, rounded up: 0.9 on the older tuning sets (stop 38), 0.85 with every
    # tuning set of stop 39 (the highest answerable reads 0.831; docs/answerability.md, "The other-edition threshold on
    # all the tuning data"). 1.0 or more: off.
    edition_threshold: float = 0.85
    # A question (not one that says it is about Pathfinder 2e) that quotes another game's rules text, nine words in a
    # row that Pathfinder 1e's, D&D 5e SRD's or Starfinder 1e's rules print and Pathfinder 2e's text never uses
    # (``core/agents/quotes.py``), asks that game's rule: declined not_in_corpus like the other-edition reader's.
    # Tuning: 5 more real gaps, 1 answerable post (which quotes Starfinder's Bulk rule) (docs/answerability.md, "A
    # quoted rule of another game"). False: off.
    quote_decline: bool = True
    # A Remaster rename ("attack of opportunity" -> Reactive Strike) forces the held rule only when the question read
    # without the renamed name is not another game's by ``edition_threshold``: the renames are Pathfinder 1e's words
    # too. False: a rename always forces the answer, as before.
    edition_rename: bool = True
    # Besides other games' vocabularies, the guard reads the pre-Remaster Pathfinder 2e names the Remaster dropped
    # (``core/agents/data/pf2e-legacy-derived.json.gz``, by ``scripts/derive_legacy_pf2e_terms.py`` from Pf2eTools'
    # JSON of the Core Rulebook, Advanced Player's Guide, Gamemastery Guide and Bestiary: "mummy rot", "ghast fever",
    # "Owlbear"), filtered as the derived terms (no name the store's non-trait entries use, no renamed ``kg.legacy``
    # name, no other book's entry). Decided as the derived terms (a sentence that asks names it; the books' own decline
    # stays), also in a question that says it is about Pathfinder 2e; one asked in a question is declined not_in_corpus,
    # "a pre-Remaster Pathfinder 2e name; the Remaster books gmprep holds do not have it"
    # (``AnswerabilityJudge.other_game``), whatever ``other_game_not_in_corpus`` says. Measured (docs/answerability.md,
    # "Pre-Remaster names the Remaster dropped"). False: no pre-Remaster vocabulary.
    guard_legacy: bool = True
    # The rules outline's section (``core/agents/coverage.py``) is not the one asked when a top-five passage of rules
    # prose (a rule page, a book's section or sidebar) is named with a word of its title: that page states the part
    # asked ("Step 1: Start Your Turn" beside Rounds and Turns, "for 1 round ... the champion's next turn"). Measured
    # (docs/answerability.md, "The guard's names in the asking sentences"): on store29 the outline rule fires on one
    # tuning question, an answerable one, and this answers it; but in the test store without the rules prose it
    # answers "How does heightening a spell work ...?" (Heightened Spells, not held): a shared word is too weak. Off.
    outline_prose_words: bool = False
    # The rules outline's section is not the one asked when a top-five passage of rules prose is printed inside it: the
    # section's book, a printed page in common, the section's chapter and parent sections in the passage's path, and
    # below them the passage's own headings or its name sharing a word of the title ("Step 1: Start Your Turn", Player
    # Core p. 435 under Playing the Game / Encounter Mode / Turns, is part of Rounds and Turns, which no entry is named
    # for; "Aquatic Combat" on that page, under Special Battles, is not). Structural evidence that the store holds the
    # section's text, unlike the shared word alone above; a section whose page the outline does not give is never set
    # aside by it. Measured
    # (docs/answerability.md, "A retrieved page printed inside the section"). False: as before.
    outline_printed_in: bool = True
    # A held book's entry the store has no entry for (the catalogue lists Staff Nexus for Player Core; the bundled
    # corpus kept only the class feature that introduces the theses) is treated like another book's entry, with its
    # book named, when at most this many held entries write the name. Measured (docs/answerability.md, "Books named
    # by title, and held books' entries the store lacks"): 0 finds Staff Nexus and flags 3 of 15,481 generated
    # answerable questions; 3 adds Toxicologist (answered anyway) but flags names a class entry states inside itself
    # (Deific Weapon, 2 entries). -1: off.
    held_missing_uses: int = Field(0, ge=-1, le=50)
    # A Pathfinder book gmprep does not hold named by its title ("Extinction Curse", "Book of the Dead") is treated
    # like another book's entry (``otherbooks.publication_terms``); so is a Pathfinder 1st Edition book ("Pathfinder
    # Unchained", "Reign of Winter"), unless the question says it is about Pathfinder 2e. False: titles are not read.
    book_titles: bool = True


class Settings(BaseModel):
    """Everything gmprep reads from configuration."""

    store_dir: Path = Field(default_factory=lambda: default_cache_dir() / "store")
    books: list[str] = Field(default_factory=list)  # restrict answers to these books; empty = all four
    notes_dir: str | None = None  # workspace-relative folder of house rules / homebrew notes to index
    # torch device of every model (embedder, reranker, relevance judge, transformers LLM); None picks
    # cuda when torch sees one, else cpu. On the CPU the reranker runs int8, on a GPU fp32.
    device: str | None = None
    # CPU workers of one query's model calls; None: the cores, 1 to 4. The reranker's pairs are cut into that
    # many shards, each a single-threaded model call, run at once (faster than intra-op threads on small
    # matrices: docs/retrieval.md, "Threads"); 1 is one call on one thread. The query's embedding runs on one
    # thread; bulk encoding (index build) always uses every core (kg/threads.py).
    query_threads: int | None = Field(None, ge=1, le=256)
    search: SearchSettings = Field(default_factory=SearchSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    hover: HoverSettings = Field(default_factory=HoverSettings)
    answerability: AnswerabilitySettings = Field(default_factory=AnswerabilitySettings)

    def merged(self, overrides: dict | None) -> Settings:
        """A copy with ``overrides`` (possibly nested, camelCase or snake_case keys) applied."""
        if not overrides:
            return self
        data = self.model_dump()
        _deep_update(data, _snake(overrides))
        return Settings.model_validate(data)


# Settings whose keys are the user's own words, kept as written ("FA" is no "f_a"): hover.aliases.
_DATA_KEYS = frozenset({"aliases"})


def _snake(obj):
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            key = "".join("_" + c.lower() if c.isupper() else c for c in str(k))
            out[key] = v if key in _DATA_KEYS else _snake(v)
        return out
    return obj


def _deep_update(base: dict, upd: dict) -> None:
    for k, v in upd.items():
        if v is None:
            continue
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            _deep_update(base[k], v)
        else:
            base[k] = v


def user_config_path() -> Path:
    """``$XDG_CONFIG_HOME/gmprep/config.toml`` (or ``~/.config/gmprep/config.toml``)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "gmprep" / "config.toml"


class IgnoredSetting(BaseModel):
    """A key a workspace file set that was not applied, and why."""

    key: str  # dotted, snake_case: "llm.url"
    source: str  # the file that set it
    reason: str


class LoadedSettings(BaseModel):
    """Settings with what was left out of them."""

    settings: Settings
    ignored: list[IgnoredSetting] = Field(default_factory=list)
    trusted: bool = False  # the workspace is in the user's trusted_workspaces
    # settings files that could not be read or held an invalid value, one line each; such a file is
    # left out whole (the CLI stops on it, the server says it and runs on the rest)
    problems: list[str] = Field(default_factory=list)

    def ignored_message(self) -> str | None:
        """One line for the user naming the ignored keys and how to trust the folder; None if none."""
        if not self.ignored:
            return None
        keys = ", ".join(dict.fromkeys(i.key for i in self.ignored))
        sources = ", ".join(dict.fromkeys(i.source for i in self.ignored))
        return (
            f"gmprep ignored {keys} from {sources}: a workspace file may set only books, notes_dir (inside "
            f"the folder) and search options. Set the others in your editor's gmprep settings or in "
            f"{user_config_path()}, or, if you trust this folder, add it to {TRUST_KEY} there."
        )


def resolve_settings(
    workspace: Path | None = None, overrides: dict | None = None, *, workspace_store: bool = True
) -> LoadedSettings:
    """Defaults, the user config file, the workspace's TOML files (under the trust policy), the
    environment, then ``overrides`` (the editor's options or CLI flags, which are the user's).

    Inside a workspace the store defaults to ``<workspace>/.gmprep`` (the server's opened folder);
    ``workspace_store=False`` keeps the user's cache store instead (the CLI, whose workspace is just
    the current folder). A relative ``store_dir`` is taken from the workspace either way.
    """
    s = Settings()
    if workspace is not None and workspace_store:
        s = s.merged({"store_dir": str(workspace / ".gmprep")})
    problems: list[str] = []
    user: dict = {}
    if user_config_path().is_file():
        try:
            user = _read_toml(user_config_path())
        except ValueError as exc:
            problems.append(str(exc))
    trusted_folders = [Path(p).expanduser() for p in user.pop(TRUST_KEY, []) or []]
    s = _merged_file(s, user, user_config_path(), problems)
    loaded = LoadedSettings(settings=s)
    if workspace is not None:
        loaded.trusted = _is_trusted(workspace, trusted_folders)
        for path, data in _workspace_files(workspace, problems):
            s = _merged_file(s, data if loaded.trusted else _allowed(data, workspace, path, loaded.ignored),
                             path, problems)
    if os.environ.get("GMPREP_STORE"):
        s = s.merged({"store_dir": os.environ["GMPREP_STORE"]})
    s = s.merged(overrides)
    if workspace is not None and not s.store_dir.is_absolute():
        s = s.merged({"store_dir": str(workspace / s.store_dir)})
    loaded.settings = s
    loaded.problems = problems
    return loaded


def load_settings(
    workspace: Path | None = None, overrides: dict | None = None, *, workspace_store: bool = True
) -> Settings:
    """``resolve_settings`` without the report of ignored keys."""
    return resolve_settings(workspace, overrides, workspace_store=workspace_store).settings


def settings_error(exc: Exception) -> str:
    """One line for an invalid settings value (pydantic's report names every failing field on
    several lines; the first one, with its dotted key, is what the user needs) or an unreadable file."""
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "settings"
        return f"invalid setting {where}: {first.get('msg')}"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _merged_file(s: Settings, data: dict, source: Path, problems: list[str]) -> Settings:
    """``s`` with one settings file's values; a file with an invalid value is left out whole and said."""
    try:
        return s.merged(data)
    except ValidationError as exc:
        problems.append(f"{source}: {settings_error(exc)} (the file is not used)")
        return s


def _workspace_files(workspace: Path, problems: list[str] | None = None) -> list[tuple[Path, dict]]:
    """``[tool.gmprep]`` of pyproject.toml, then gmprep.toml, as snake_case dicts; an unreadable file
    is added to ``problems`` (raised when none is given)."""
    out: list[tuple[Path, dict]] = []
    for path in (workspace / "pyproject.toml", workspace / "gmprep.toml"):
        if not path.is_file():
            continue
        try:
            data = _read_toml(path)
        except ValueError as exc:
            if problems is None:
                raise
            problems.append(f"{exc} (the file is not used)")
            continue
        if path.name == "pyproject.toml":
            section = data.get("tool", {}).get("gmprep")
            if isinstance(section, dict):
                out.append((path, _snake(section)))
        else:
            out.append((path, _snake(data)))
    return out


def _is_trusted(workspace: Path, trusted: list[Path]) -> bool:
    here = workspace.resolve()
    return any(here == t.resolve() or t.resolve() in here.parents for t in trusted)


def _allowed(data: dict, workspace: Path, source: Path, ignored: list[IgnoredSetting]) -> dict:
    """The part of a workspace file's settings it may set; the rest is added to ``ignored``."""
    keep: dict = {}
    for key, value in data.items():
        if key not in WORKSPACE_KEYS:
            names = [f"{key}.{sub}" for sub in value] if isinstance(value, dict) and value else [key]
            ignored.extend(
                IgnoredSetting(key=n, source=str(source), reason="only the user may set it") for n in names
            )
        elif key == "notes_dir" and value is not None and not _inside(workspace, str(value)):
            ignored.append(IgnoredSetting(key=key, source=str(source), reason="it points outside the workspace"))
        else:
            keep[key] = value
    return keep


def _inside(workspace: Path, path: str) -> bool:
    target = Path(path).expanduser()
    target = (target if target.is_absolute() else workspace / target).resolve()
    root = workspace.resolve()
    return target == root or root in target.parents


def _read_toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"cannot read settings from {path}: {exc}") from exc


_HOVER_TABLE = re.compile(r"^\[hover\][ \t]*(?:#.*)?$", re.M)
_IGNORE_LINE = re.compile(r"^ignore_words[ \t]*=[ \t]*\[[^\]]*\][ \t]*(?:#.*)?$", re.M)


def add_ignore_word(workspace: Path, word: str) -> Path:
    """Add ``word`` to ``hover.ignore_words`` in the workspace's ``gmprep.toml`` (created if
    missing), keeping the rest of the file as written. Returns the file's path."""
    word = " ".join(word.split())
    if not word:
        raise ValueError("no word to ignore")
    path = workspace / "gmprep.toml"
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    data = tomllib.loads(text) if text else {}  # a broken file is reported, never overwritten
    hover = data.get("hover", {})
    words = list(hover.get("ignore_words", []))
    if any(w.lower() == word.lower() for w in words):
        return path
    words.append(word)
    array = "ignore_words = [" + ", ".join(json.dumps(w, ensure_ascii=False) for w in words) + "]"
    table = _HOVER_TABLE.search(text)
    if table is None:
        new = text + ("\n" if text and not text.endswith("\n") else "") + ("\n" if text else "") + f"[hover]\n{array}\n"
    else:
        line = _IGNORE_LINE.search(text, table.end())
        next_table = re.search(r"^\[", text[table.end():], re.M)
        limit = table.end() + next_table.start() if next_table else len(text)
        if line is not None and line.start() < limit:
            new = text[:line.start()] + array + text[line.end():]
        else:
            new = text[:table.end()] + "\n" + array + text[table.end():]
    if tomllib.loads(new).get("hover", {}).get("ignore_words") != words:
        raise ValueError(f"could not update {path} safely; add {word!r} to [hover] ignore_words by hand")
    path.write_text(new, encoding="utf-8")
    return path
