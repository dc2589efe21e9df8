"""`bench/bench_growth.py` builds each poisoned shape it names and times its scan at each size."""

from __future__ import annotations

import json

from .bench_modules import load


def test_every_shape_is_built_poisoned_and_measured_at_each_size(capsys) -> None:
    bench = load("bench_growth")
    assert bench.main(["--units", "30", "--factor", "2", "--steps", "1", "--repeat", "1", "--json"]) == 0
    results = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["shape"] for r in results] == list(bench.SHAPES)
    for result in results:
        assert [row["units"] for row in result["sizes"]] == [30, 60]
        assert all(row["seconds"] > 0 and row["bytes"] > 0 for row in result["sizes"])
        assert result["sizes"][1]["bytes"] > result["sizes"][0]["bytes"]
        if result["shape"] not in FIXED_POISON:
            assert result["sizes"][1]["findings"] > result["sizes"][0]["findings"] > 0, result


# The shapes whose findings do not grow with them: the API-error shape reports nothing by itself
# (below), and a one-session bench database carries its poison only every few hundred messages.
FIXED_POISON = {"cc-api-errors", "opencode-one-session", "hermes-one-session"}


def test_a_database_of_sessions_heals_more_as_it_grows(capsys) -> None:
    # `test_growth_work_heal.py` counts these heals because their fixes grow with the store.
    bench = load("bench_growth")
    only = ["opencode-sessions", "hermes-sessions"]
    assert bench.main(["--units", "30", "--factor", "2", "--steps", "1", "--repeat", "1", "--json", "--heal", "--write",
                       "--only", *only]) == 0  # fmt: skip
    results = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["shape"] for r in results] == only
    for result in results:
        assert result["sizes"][1]["findings"] > result["sizes"][0]["findings"] > 0, result


def test_the_table_names_the_sizes_and_the_growth(capsys) -> None:
    bench = load("bench_growth")
    assert bench.main(["--units", "10", "--steps", "1", "--repeat", "1", "--only", "cc-broken-parents"]) == 0
    header, row, summary = capsys.readouterr().out.splitlines()
    assert header.split()[:3] == ["shape", "10", "40"]
    assert row.split()[0] == "cc-broken-parents" and len(row.split()) == 4 and row.split()[3].startswith("x")
    assert summary.startswith("size grew x4; median per-unit growth x")


def test_the_api_error_shape_gathers_every_prompt_into_one_user_message(tmp_path) -> None:
    # Synthetic replies are not sent, so the prompts between them merge: the shape that made
    # the request builder quadratic (it reports nothing by itself).
    from transcript_doctor.stores import Options, open_store

    bench = load("bench_growth")
    path = bench.SHAPES["cc-api-errors"][1](tmp_path / "s.jsonl", 30)
    store = open_store(path, str(path), Options())
    try:
        messages = store.resume.cli.request.messages
        assert [m.role for m in messages] == ["user"] and len(messages[0].records) == 30
    finally:
        store.close()
