"""Loading a project's settings and putting its process-wide settings in force (what every command with
``--project`` does first) imports no pandas when Presidio is not asked for: the scrubber (whose package loads
pandas) is imported only to switch Presidio on or off, so that a command whose work needs no frames
(``evalops history``) does not pay for them; a scrubber imported later starts without Presidio."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys
from evalops.config import load_config
cfg = load_config(sys.argv[1], environ={})
cfg.apply_process_settings()
print(' '.join(m for m in ('pandas', 'pyarrow') if m in sys.modules) or 'LIGHT')
from evalops.querylog import scrub
assert not scrub.__globals__["_PRESIDIO"]
"""


def test_the_settings_of_a_project_load_without_pandas(tmp_path):
    (tmp_path / "evalops.yaml").write_text("measures: [nDCG@10]\nquery_logs: {presidio: []}\n")
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[0] == "LIGHT", out.stderr

