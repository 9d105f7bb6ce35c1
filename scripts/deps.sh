#!/usr/bin/env bash
# Installs every Debian 12 package gpufleet's build, tests and benchmarks need.
# Idempotent: installs only what is missing; safe to run again. Needs root (or sudo).
set -euo pipefail

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
  # bench: OpenMPI (mpirun, and the library gpufleet-bench links), fio (perf/bench_storage.sh),
  # python3 (the bench tests read the JSON results with it)
  openmpi-bin libopenmpi-dev fio python3
  # packaging (scripts/package.sh, tests/package): the .deb checked by lintian and installed by
  # dpkg, units by systemd-analyze; the bundle's RUNPATH set by patchelf; the OCI image read by
  # skopeo and umoci and run by podman; zsh parses the zsh completion
  lintian dpkg-dev systemd patchelf skopeo umoci podman zsh
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "deps: all ${#packages[@]} packages present"
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
