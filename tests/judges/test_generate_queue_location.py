"""Where the annotation queue lives: under .evalops/ (ignored by git), and an earlier queue is kept."""

from __future__ import annotations

from evalops.judges.generate import default_queue


def test_the_queue_lives_under_the_state_folder(tmp_path):
    assert default_queue(tmp_path) == tmp_path / ".evalops" / "annotation" / "queue.jsonl"


def test_a_queue_at_the_earlier_place_is_used_until_one_exists_at_the_new_one(tmp_path):
    earlier = tmp_path / "annotation" / "queue.jsonl"
    earlier.parent.mkdir()
    earlier.write_text('{"status": "done"}\n')
    assert default_queue(tmp_path) == earlier  # people's work is not left behind
    new = tmp_path / ".evalops" / "annotation" / "queue.jsonl"
    new.parent.mkdir(parents=True)
    new.write_text("")
    assert default_queue(tmp_path) == new
