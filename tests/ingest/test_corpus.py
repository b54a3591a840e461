"""The bundled corpus loads whole into the book > chapter > section > entry hierarchy with its edges."""

from collections import Counter

from gmprep.ingest.corpus import load_corpus, trait_entry_id


def test_all_entries_types_and_books(corpus):
    entries = [n for n in corpus.nodes if n.kind == "entry"]
    assert len(entries) == 6949  # README corpus table
    assert not corpus.errors
    types = Counter(n.type for n in entries)
    assert len(types) == 16 and types["skill"] == 18 and types["feat"] == 1817 and types["creature"] == 497 and types["action"] == 190
    books = {n.book for n in entries}
    assert {"Pathfinder Player Core", "Pathfinder Player Core 2", "Pathfinder GM Core", "Pathfinder Monster Core"} <= books
    # the corpus id is kept as the node's source_id (citations and evaluation depend on it)
    assert all(n.source_id == n.node_id and n.node_id.startswith("pf2e:") for n in entries)


def test_hierarchy_and_edges(corpus):
    nodes = {n.node_id: n for n in corpus.nodes}
    falling = nodes["pf2e:rule:gm-screen--falling"]
    assert falling.path[-2:] == ["GM Screen", "Playing the Game"]
    assert nodes[falling.parent_id].kind == "section"
    feature = nodes["pf2e:class-feature:druid--anathema"]
    assert feature.parent_id == "pf2e:class:druid"
    heritage = nodes["pf2e:heritage:charhide-goblin"]
    assert heritage.parent_id == "pf2e:ancestry:goblin"
    edges = {(e.src, e.dst, e.kind) for e in corpus.edges}
    assert ("pf2e:condition:blinded", "pf2e:condition:dazzled", "ref") in edges
    assert ("pf2e:creature:animated-broom", "pf2e:trait:mindless", "trait") in edges
    kinds = Counter(e.kind for e in corpus.edges)
    assert kinds["parent"] and kinds["next"] and kinds["ref"] and kinds["trait"]
    book = nodes["book:pathfinder-player-core"]
    chapter = nodes["book:pathfinder-player-core/class"]
    assert book.kind == "book" and chapter.parent_id == book.node_id and "Fighter" in chapter.summary


def test_trait_with_value_points_at_base_trait():
    ids = {"pf2e:trait:deadly", "pf2e:trait:reach"}
    assert trait_entry_id("deadly-d10", ids) == "pf2e:trait:deadly"
    assert trait_entry_id("reach", ids) == "pf2e:trait:reach"
    assert trait_entry_id("unknown-d8", ids) is None


def test_malformed_line_is_reported_and_skipped(tmp_path):
    src = (tmp_path / "c.jsonl")
    good = '{"id": "pf2e:condition:x", "name": "X", "type": "condition", "book": "B", "text": "t"}'
    src.write_text(good + "\n{not json\n" + '{"id": "only-id"}\n')
    load = load_corpus(tmp_path)
    assert [n.node_id for n in load.nodes if n.kind == "entry"] == ["pf2e:condition:x"]
    assert len(load.errors) == 2 and "c.jsonl:2" in load.errors[0]
