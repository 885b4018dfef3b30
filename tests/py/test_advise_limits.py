"""Advice that says when the machine cannot answer (advise.cores_advice, placement_advice): an
oversubscribed campaign gets no count of cores, and no advice is ever "keep at most 0"; one
NUMA node says what run would answer. On the hand-made contention campaign of test_model."""

import copy

import pytest

from jostle.analysis import advise, model
from jostle.records.results import load
from test_model import write_campaign

pytestmark = pytest.mark.unit

CROWDED = {"what": "memory bandwidth", "reason": "runs oversubscribed (more bound threads than "
           "cores): together, threads also share cores, so the split measures CPU time as much "
           "as memory"}


@pytest.fixture(scope="module")
def doc(tmp_path_factory):
    d = write_campaign(tmp_path_factory.mktemp("c") / "c")
    return model.document(load([d]), "c", draws=20)


def test_an_oversubscribed_machine_cannot_say_how_many_cores(doc):
    small = copy.deepcopy(doc)
    small["machine"]["cores"] = 2
    small["not_identifiable"] = [*small["not_identifiable"], CROWDED]
    items = advise.cores_advice(small)
    assert items and all("cannot answer" in i["text"] for i in items)
    assert all(not i["numbers"]["answerable"] for i in items)
    assert all("2 × (N + 1) cores" in i["text"] for i in items)
    assert not any("keep at most 0" in i["text"] for i in items)
    # one item for both sides, not two paragraphs a word apart
    sizes = {i["text"].split(":")[0] for i in items}
    assert len(items) == len(sizes) and all(i["numbers"]["side"] == "both" for i in items)
    assert all("communication or of the computation there" in i["text"] for i in items)


def test_a_machine_large_enough_still_advises(doc):
    items = advise.cores_advice(doc)
    assert items and all(i["numbers"]["answerable"] for i in items)
    assert not any("keep at most 0" in i["text"] for i in items)


def test_a_loss_from_the_first_core_is_said_so_not_as_zero_cores(doc, monkeypatch):
    monkeypatch.setattr(advise, "_first_drop", lambda p, size, top, side: 1)
    items = advise.cores_advice(doc)
    assert items and all("already with 1 compute core" in i["text"] for i in items)
    assert not any("keep at most 0" in i["text"] for i in items)


def test_one_numa_node_says_what_run_would_answer(doc):
    (item,) = advise.placement_advice(doc, [])
    assert "cannot answer" in item["text"] and "two or more NUMA nodes" in item["text"]
