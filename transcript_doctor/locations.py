"""Where each agent keeps its sessions on this machine: what `tdoc scan` and `tdoc sessions` look at
when no path is given.

Every agent has a home directory that an environment variable can move; tdoc honours the same
variables the agents do (docs/cli.md §Default locations):

| agent | home (variable, default) | what is under it |
|---|---|---|
| kimi-code | `KIMI_CODE_HOME`, `~/.kimi-code` | `sessions/<workdir>/<session>/agents/<agent>/wire.jsonl` |
| Hermes | `HERMES_HOME`, `~/.hermes` | `state.db`, and `profiles/<name>/state.db` |
| OpenCode | `XDG_DATA_HOME`/opencode, `~/.local/share/opencode` | `opencode.db`, `opencode-<channel>.db`; `OPENCODE_DB` names another |
| Claude Code | `CLAUDE_CONFIG_DIR`, `~/.claude` | `projects/<cwd>/<session>.jsonl` |
| Codex | `CODEX_HOME`, `~/.codex` | `sessions/YYYY/MM/DD/rollout-*.jsonl` (and `archived_sessions/`) |

eve keeps no local store (its event streams are fetched over HTTP), so it has no default location.
A location only says where to look: what each file is still comes from its content.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Location:
    """One place an agent keeps sessions: a directory to search or a single database file."""

    agent: str
    path: Path
    variable: str  # the environment variable that moves it (the agent's own)

    def exists(self) -> bool:
        return self.path.exists()


def _home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or Path.home())


def _dir(env: Mapping[str, str], variable: str, default: str) -> Path:
    value = env.get(variable)
    return Path(value).expanduser() if value else _home(env) / default


def kimi_code(env: Mapping[str, str]) -> list[Location]:
    return [Location("kimi-code", _dir(env, "KIMI_CODE_HOME", ".kimi-code") / "sessions", "KIMI_CODE_HOME")]


def hermes(env: Mapping[str, str]) -> list[Location]:
    home = _dir(env, "HERMES_HOME", ".hermes")
    found = [Location("hermes", home / "state.db", "HERMES_HOME")]
    profiles = home / "profiles"
    if profiles.is_dir():
        found += [Location("hermes", p / "state.db", "HERMES_HOME") for p in sorted(profiles.iterdir())]
    return found


def opencode(env: Mapping[str, str]) -> list[Location]:
    data = Path(env["XDG_DATA_HOME"]) if env.get("XDG_DATA_HOME") else _home(env) / ".local" / "share"
    base = data / "opencode"
    override = env.get("OPENCODE_DB")
    if override and override != ":memory:":
        db = Path(override).expanduser()
        return [Location("opencode", db if db.is_absolute() else base / db, "OPENCODE_DB")]
    found = [Location("opencode", base / "opencode.db", "XDG_DATA_HOME")]
    if base.is_dir():
        found += [Location("opencode", p, "XDG_DATA_HOME") for p in sorted(base.glob("opencode-*.db"))]
    return found


def claude_code(env: Mapping[str, str]) -> list[Location]:
    return [Location("claude-code", _dir(env, "CLAUDE_CONFIG_DIR", ".claude") / "projects", "CLAUDE_CONFIG_DIR")]


def codex(env: Mapping[str, str]) -> list[Location]:
    home = _dir(env, "CODEX_HOME", ".codex")
    return [Location("codex", home / "sessions", "CODEX_HOME"),
            Location("codex", home / "archived_sessions", "CODEX_HOME")]  # fmt: skip


AGENTS = (kimi_code, hermes, opencode, claude_code, codex)


def default_locations(env: Mapping[str, str] | None = None) -> list[Location]:
    """Every place tdoc looks when no path is given, existing or not, in a stable order."""
    env = os.environ if env is None else env
    return [loc for agent in AGENTS for loc in agent(env)]


def existing_locations(env: Mapping[str, str] | None = None) -> list[Location]:
    return [loc for loc in default_locations(env) if loc.exists()]
