#!/usr/bin/env bash
# Builds the compiled scheduling cycle (kernel/, the extension kplan._kernel) into the checkout,
# for working from a clone with `python -m kplan` and `python -m pytest` without installing kplan:
# `pip install .` builds it by itself (setuptools-rust). Needs cargo; the Python it builds for is
# $PYTHON or python3.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
suffix=$("$python" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
PYO3_PYTHON=$(command -v "$python") cargo build --release --quiet --manifest-path kernel/Cargo.toml
cp kernel/target/release/lib_kernel.so "kplan/_kernel$suffix"
echo "built kplan/_kernel$suffix"
