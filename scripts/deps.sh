#!/usr/bin/env bash
# Installs every Debian 12 package gpufleet's build, tests and benchmarks need.
# Idempotent: installs only what is missing; safe to run again. Needs root (or sudo).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  # toolchain
  g++ cmake ninja-build pkg-config git
  # libraries (DESIGN.md "Dependencies")
  libyaml-cpp-dev libcli11-dev libfmt-dev nlohmann-json3-dev
  # the agent: OpenSSL for TLS, libxcrypt for bcrypt basic-auth hashes
  libssl-dev libcrypt-dev
  # topology discovery (hwloc), capture archives (zlib), and tools the topo tests use
  libhwloc-dev hwloc zlib1g-dev bzip2 tar
  # tests and benchmarks
  googletest libgtest-dev libgmock-dev libbenchmark-dev hyperfine
  # style checks; clang with libFuzzer and its sanitizer runtimes (fuzz/, scripts/fuzz.sh)
  clang-format clang-tidy clang libclang-rt-14-dev
  # real components the tests drive: Slurm with munge (emit, check --slurm), Prometheus and
  # promtool (agent, emit), curl and openssl (agent TLS); node_exporter and wrk (perf/agent)
  slurm-wlm munge prometheus curl openssl prometheus-node-exporter wrk
  # the cluster in a box (tests/cluster): Alertmanager receives the alerts, iproute2 makes the
  # namespaces, veths, bridge and tc limits, util-linux's unshare and nsenter enter them
  prometheus-alertmanager iproute2 util-linux
  # bench: OpenMPI (mpirun, and the library the helpers' MPI plugin links), fio (perf/bench_storage.sh),
  # python3 (the bench tests read the JSON results with it)
  openmpi-bin libopenmpi-dev fio python3
  # packaging (scripts/package.sh, tests/package): the .deb checked by lintian and installed by
  # dpkg, units by systemd-analyze; the bundle's RUNPATH set by patchelf; the OCI image read by
  # skopeo and umoci and run by podman; zsh parses the zsh completion
  lintian dpkg-dev systemd patchelf skopeo umoci podman zsh
  # Node.js runs the Kubernetes schema check (tests/k8s; its npm packages are installed below)
  nodejs
  # the report browser test (tests/report/browser.sh) and docs/images screenshots: headless
  # Chromium and the font the reports are laid out for
  chromium fonts-dejavu-core
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
# npm's own package where Node.js came without it (Debian's nodejs does; NodeSource's has it).
command -v npm > /dev/null || missing+=(npm)

npm_packages() {
  # The npm packages tests/k8s validates manifests with, pinned by its lock file, in
  # tests/k8s/node_modules (git-ignored).
  if [[ ! -d tests/k8s/node_modules || tests/k8s/package-lock.json -nt tests/k8s/node_modules ]]; then
    echo "deps: npm packages for tests/k8s"
    (cd tests/k8s && npm ci --no-audit --no-fund --silent) && touch tests/k8s/node_modules
  fi
}

if ((${#missing[@]} == 0)); then
  echo "deps: all ${#packages[@]} packages present"
  npm_packages
  exit 0
fi
SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "deps: run as root or install sudo" >&2; exit 3; }
  SUDO="sudo"
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Debian's munge, slurm and prometheus postinsts start their daemons through invoke-rc.d; block
# that (tests start each daemon themselves, on their own config) unless a policy already does.
ours=0
if [[ ! -e /usr/sbin/policy-rc.d ]]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
  $SUDO chmod +x /usr/sbin/policy-rc.d
  ours=1
fi
trap '[[ $ours == 1 ]] && $SUDO rm -f /usr/sbin/policy-rc.d' EXIT
$SUDO apt-get update -qq
$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}"
npm_packages
