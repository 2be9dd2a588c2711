#!/usr/bin/env bash
# Bootstrap everything circle needs on a fresh Debian machine; safe to run again (it only does
# what is missing). Usage: envs/setup.sh [--bible]
#   system packages via apt (when run as root; otherwise it names what to install),
#   .venv with the pinned PyPI packages of envs/requirements.lock.txt and circle itself
#   (reinstalled when a lock file, pyproject.toml, setup.py or a src/**/*.pyx changes),
#   KenLM's lmplz and build_binary compiled from the kenlm source distribution on PyPI
#   (the same version as the pinned Python module) into .venv/bin.
#   --bible also installs the sources of the Bible corpus builder (Debian SWORD modules and
#   the pythonbible packages of envs/requirements-bible.lock.txt).
set -euo pipefail
cd "$(dirname "$0")/.."

with_bible=false
[[ "${1:-}" == "--bible" ]] && with_bible=true

apt_packages=(build-essential cmake zlib1g-dev libbz2-dev liblzma-dev
              libboost-program-options-dev libboost-system-dev libboost-thread-dev libboost-test-dev
              graphviz wordnet-base)
$with_bible && apt_packages+=(sword-text-sparv sword-text-kjv sword-text-web)

missing=()
for package in "${apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
        || missing+=("$package")
done
if ((${#missing[@]})); then
    if [[ $(id -u) -eq 0 ]]; then
        echo "setup: apt-get install ${missing[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
    else
        echo "setup: please install the Debian packages: ${missing[*]}" >&2
        exit 1
    fi
fi

python=${PYTHON:-python3}
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || { echo "setup: Python >= 3.11 is required ($python is $("$python" --version))" >&2; exit 1; }
[[ -x .venv/bin/python ]] || "$python" -m venv .venv

locks=(envs/requirements.lock.txt)
$with_bible && locks+=(envs/requirements-bible.lock.txt)
shopt -s globstar
stamp=$(cat "${locks[@]}" pyproject.toml setup.py src/**/*.pyx | sha256sum | cut -c1-16)
stamp_file=.venv/.circle-installed-${stamp}
if [[ ! -e "$stamp_file" ]]; then
    echo "setup: installing pinned Python packages (${locks[*]})"
    for lock in "${locks[@]}"; do .venv/bin/pip install -q -r "$lock"; done
    .venv/bin/pip install -q --no-deps -e .
    touch "$stamp_file"
fi

if [[ ! -x .venv/bin/lmplz || ! -x .venv/bin/build_binary ]]; then
    kenlm_version=$(sed -n 's/^kenlm==//p' envs/requirements.lock.txt)
    echo "setup: building KenLM $kenlm_version lmplz and build_binary"
    build=$(mktemp -d)
    .venv/bin/pip download -q --no-deps --no-binary kenlm -d "$build" "kenlm==$kenlm_version"
    tar -xzf "$build"/kenlm-*.tar.gz -C "$build"
    cmake -S "$build/kenlm-$kenlm_version" -B "$build/build" -DCMAKE_BUILD_TYPE=Release > "$build/cmake.log"
    make -C "$build/build" -j "$(nproc)" lmplz build_binary > "$build/make.log" 2>&1 \
        || { tail -20 "$build/make.log" >&2; exit 1; }
    cp "$build/build/bin/lmplz" "$build/build/bin/build_binary" .venv/bin/
    rm -rf "$build"
fi
