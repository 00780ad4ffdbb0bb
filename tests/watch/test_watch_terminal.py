"""``idxadvisor watch`` in a real terminal (tmux): the live view, a sort key, and Ctrl-C printing the report.

Each test runs its own tmux server (``-L``), so it never touches another session; waits are bounded.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.helpers import json_line, slow_attr
from tests.watch.process import DEADLINE, REPO_ROOT

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class Terminal:
    """A 160×50 tmux pane running one command."""

    def __init__(self, command: str) -> None:
        self.server = f"idxadvisor-test-{uuid.uuid4().hex[:12]}"
        subprocess.run(["tmux", "-L", self.server, "-f", os.devnull, "new-session", "-d", "-s", "watch", "-x", "160",
                        "-y", "50", command], check=True, timeout=DEADLINE)

    def screen(self) -> str:
        result = subprocess.run(["tmux", "-L", self.server, "capture-pane", "-p", "-t", "watch"], capture_output=True,
                                text=True, timeout=DEADLINE)
        return result.stdout

    def wait_for(self, text: str, shows: Callable[[str], bool] = lambda screen: True,
                 timeout: float = DEADLINE) -> str:
        """The screen once it holds ``text`` and ``shows`` it as expected (a capture may catch a redraw half-way)."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if text in screen and shows(screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} did not appear as expected; the screen shows:\n{screen}")
            time.sleep(0.1)

    def keys(self, *keys: str) -> None:
        subprocess.run(["tmux", "-L", self.server, "send-keys", "-t", "watch", *keys], check=True, timeout=DEADLINE)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.server, "kill-server"], capture_output=True, timeout=DEADLINE)


@pytest.fixture
def terminal_for(tmp_path: Path) -> Iterator:
    opened: list[Terminal] = []

    def start(*arguments: str) -> Terminal:
        command = " ".join(shlex.quote(part) for part in [sys.executable, "-m", "idxadvisor", "watch", *arguments])
        # COLUMNS and LINES, where the test runner's environment has them, would size the view, not the pane
        root = shlex.quote(str(REPO_ROOT))
        script = (f"unset COLUMNS LINES; cd {root} && PYTHONPATH={root} NO_COLOR=1 {command}; echo WATCH-EXIT=$?; "
                  f"sleep {int(DEADLINE)}")
        terminal = Terminal(script)
        opened.append(terminal)
        return terminal

    yield start
    for terminal in opened:
        terminal.close()


def entries(count: int, collection: str, duration: int) -> str:
    return "".join(json_line(slow_attr({"find": collection, "filter": {"status": number}}, ns=f"shop.{collection}",
                                       durationMillis=duration), ctx=f"conn{number}") + "\n"
                   for number in range(count))


def since_start_order(screen: str) -> list[str]:
    """The namespaces of the 'Since start' table, top to bottom."""
    if "Since start" not in screen or "Findings" not in screen:
        return []
    table = screen[screen.index("Since start"):screen.index("Findings")]
    return [line.split()[1] for line in table.splitlines() if line.strip().startswith("find shop.")]


def test_the_live_view_sorts_on_a_key_and_ctrl_c_prints_the_report(tmp_path: Path, terminal_for) -> None:
    log = tmp_path / "mongod.log"
    log.write_text("")
    terminal = terminal_for(str(log), "--interval", "0.2")
    terminal.wait_for("no operation yet")
    with log.open("a") as handle:
        handle.write(entries(5, "orders", 10) + entries(2, "users", 900))
    by_time = ["shop.users", "shop.orders"]  # by total time: 1,800 ms against 50
    screen = terminal.wait_for("7 operations", lambda screen: since_start_order(screen) == by_time)
    assert "find shop.orders {status: eq}" in screen and "Last 5m" in screen
    terminal.keys("c")
    terminal.wait_for("sorted by count", lambda screen: since_start_order(screen) == by_time[::-1])  # 5 against 2
    terminal.keys("Space")
    terminal.wait_for("PAUSED")
    terminal.keys("C-c")
    screen = terminal.wait_for("WATCH-EXIT=")
    assert "7 operations" in screen and "2 shapes" in screen  # analyze's text report of everything seen
    assert "WATCH-EXIT=0" in screen or "WATCH-EXIT=1" in screen
