"""Neovim (0.7 API, headless) as a second real LSP client: attach gmprep, hover a condition."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lsp_helpers import copy_store

NVIM = shutil.which("nvim")
LUA = """
local id = vim.lsp.start_client({
  name = "gmprep",
  cmd = { %(python)s, "-m", "gmprep", "lsp", "--no-build", "--stdio" },
  root_dir = vim.fn.getcwd(),
  init_options = { storeDir = %(store)s },
})
vim.lsp.buf_attach_client(0, id)
vim.wait(20000, function() local c = vim.lsp.get_client_by_id(id); return c and c.initialized end, 50)
vim.api.nvim_win_set_cursor(0, { 1, 24 })
local res
vim.wait(30000, function()
  res = vim.lsp.buf_request_sync(0, "textDocument/hover", vim.lsp.util.make_position_params(), 10000)
  for _, r in pairs(res or {}) do if r.result then return true end end
  return false
end, 200)
local out = io.open(%(out)s, "w")
out:write(vim.inspect(res))
out:close()
vim.cmd("qa!")
"""


@pytest.mark.e2e
@pytest.mark.skipif(NVIM is None, reason="nvim is not installed (apt-get install -y neovim; CI installs it)")
def test_neovim_hover(tmp_path: Path, store_dir: Path):
    store = copy_store(store_dir, tmp_path / "store")
    note = tmp_path / "note.md"
    note.write_text("The goblin warrior is frightened 2 after the Demoralize.\n", encoding="utf-8")
    out = tmp_path / "hover.txt"
    script = tmp_path / "hover.lua"
    script.write_text(LUA % {"python": _lua(sys.executable), "store": _lua(str(store)), "out": _lua(str(out))})
    env = {**os.environ, "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}
    subprocess.run(
        [NVIM, "--headless", "--clean", "-c", f"luafile {script}", str(note)],
        cwd=tmp_path, env=env, timeout=120, check=False, stdin=subprocess.DEVNULL, capture_output=True,
    )
    result = out.read_text()
    assert "pf2e:condition:frightened" in result
    assert "Pathfinder Player Core" in result


def _lua(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
