# Sourced by the scripts in this folder: finds or installs uv, then builds the
# project's environment (.venv) from uv.lock with every extra.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if command -v uv >/dev/null 2>&1; then
  UV=(uv)
else
  python3 -m uv --version >/dev/null 2>&1 || python3 -m pip install --quiet --disable-pip-version-check uv
  UV=(python3 -m uv)
fi
# --compile-bytecode: write every module's .pyc now. Where PYTHONDONTWRITEBYTECODE is set
# (as on these machines) nothing writes them later, and every airflow, dagster and Spark
# process would compile its imports from source again (airflow's start took 6 s, not 3).
"${UV[@]}" sync --quiet --frozen --all-extras --compile-bytecode
.venv/bin/python -m compileall -q src
export PATH="$PWD/.venv/bin:$PATH"
