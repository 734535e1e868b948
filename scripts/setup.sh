#!/usr/bin/env bash
# Installs what opbench needs, idempotently, saying what it does.
#   CPU machine (dev, CI, users): Debian packages + a git-ignored venv (.venv) with torch, the packages the
#   tools need, and the tools package itself (tools/, editable: .venv/bin/opbench-compare runs this checkout).
#   Offline GPU machine (python3 already has torch with CUDA): installs nothing, only checks; the tools run
#   there as PYTHONPATH=tools python3 -m opbench_tools.<tool> (tools/README.md).
# Versions come from third_party/versions.env. Prints the python to use as its last line: PYTHON=<path>.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../third_party/versions.env
source "$root/third_party/versions.env"
say() { echo "[setup] $*" >&2; }

system_torch_has_cuda() {
  python3 - <<'EOF' 2>/dev/null
import torch, sys
sys.exit(0 if torch.version.cuda else 1)
EOF
}

if [ -z "${OPBENCH_FORCE_VENV:-}" ] && system_torch_has_cuda; then
  # The GPU machine: everything is in the image, and nothing can be fetched.
  say "python3 has a CUDA torch ($(python3 -c 'import torch; print(torch.__version__)')): using the system, installing nothing"
  echo "PYTHON=$(command -v python3)"
  exit 0
fi

missing=()
for pkg in $DEBIAN_PACKAGES; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >&2
else
  say "Debian packages present: $DEBIAN_PACKAGES"
fi

venv="$root/.venv"
if [ ! -x "$venv/bin/python" ]; then
  say "creating venv $venv"
  python3 -m venv "$venv"
fi
want_torch="$TORCH_VERSION"
have_torch=$("$venv/bin/python" -c 'import torch; print(torch.__version__.split("+")[0])' 2>/dev/null || true)
if [ "$have_torch" != "$want_torch" ]; then
  say "installing torch==$want_torch into the venv (large download, once)"
  "$venv/bin/pip" install -q --disable-pip-version-check "torch==$want_torch" >&2
else
  say "venv has torch $have_torch"
fi
# --all: plain `pip freeze` leaves out pip, setuptools and wheel, so a pinned wheel would never be found.
frozen=$("$venv/bin/pip" freeze --all --disable-pip-version-check 2>/dev/null | tr '[:upper:]_' '[:lower:]-')
missing_py=()
for pin in $PY_TOOL_PACKAGES; do
  want=$(echo "$pin" | tr '[:upper:]_' '[:lower:]-')
  grep -qx "$want" <<<"$frozen" || missing_py+=("$pin")
done
if [ ${#missing_py[@]} -gt 0 ]; then
  say "installing tool packages: ${missing_py[*]}"
  "$venv/bin/pip" install -q --disable-pip-version-check "${missing_py[@]}" >&2
else
  say "venv has the tool packages: $PY_TOOL_PACKAGES"
fi
# The tools package, editable from this checkout, built with the venv's setuptools (no download: the venv of
# Debian bookworm's Python 3.11 has setuptools 65; one without setuptools >= 64 gets the pinned version).
# Reinstalled when the venv's copy points at another checkout or lacks a console script of tools/pyproject.toml.
if ! "$venv/bin/python" -c 'import setuptools, sys; sys.exit(int(setuptools.__version__.split(".")[0]) < 64)' 2>/dev/null; then
  say "installing setuptools==$SETUPTOOLS_VERSION into the venv (it builds the tools package)"
  "$venv/bin/pip" install -q --disable-pip-version-check "setuptools==$SETUPTOOLS_VERSION" >&2
fi
installed_from=$("$venv/bin/python" -c 'import opbench_tools, os; print(os.path.realpath(os.path.dirname(opbench_tools.__file__)))' 2>/dev/null || true)
scripts_missing=0
for script in $(sed -n 's/^\(opbench-[a-z-]*\) = .*/\1/p' "$root/tools/pyproject.toml"); do
  [ -x "$venv/bin/$script" ] || scripts_missing=1
done
if [ "$installed_from" != "$(realpath "$root/tools/opbench_tools")" ] || [ "$scripts_missing" = 1 ]; then
  say "installing the tools package (editable, from $root/tools) into the venv"
  if ! "$venv/bin/pip" install -q --disable-pip-version-check --no-deps --no-build-isolation -e "$root/tools" >&2; then
    say "pip could not build the tools package. Offline (--no-index), pip needs --no-build-isolation and the venv"
    say "needs setuptools >= 64 and wheel ($venv/bin/pip install wheel; setuptools >= 70.1 needs none): tools/README.md"
    exit 1
  fi
else
  say "venv has the tools package (editable, from $root/tools)"
fi
echo "PYTHON=$venv/bin/python"
