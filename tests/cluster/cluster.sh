#!/bin/bash
# The cluster in a box: N GPU "nodes" and a head node on this one machine, each a network + UTS +
# mount namespace with its own hostname, address, /etc and /run, joined by veth pairs to a bridge
# in a switch namespace of their own, each running its real daemons:
#   head   munged, slurmctld, Prometheus (the emitted scrape config and rules), Alertmanager
#   gpuNN  munged, slurmd (HealthCheckProgram = packaging/slurm/gpufleet-healthcheck), and
#          gpufleet agent, with 2 fake GPUs (tests/fakes' libnvidia-ml.so.1) whose faults come
#          from the node's /run/gpufleet/fake-nvml.json
# One munge key for the cluster; slurm.conf is what a site adds around `gpufleet emit slurm-conf`
# (gres.conf, topology.conf); every node reads the spec at /etc/gpufleet/cluster.yaml.
#
# Nothing leaves the machine: the addresses (10.77.0.0/24) exist only inside these namespaces,
# which have no default route, and the host's own network, /etc and /run are never touched. A
# node's /etc is an overlay on the host's, its /run a folder of DIR, its boot id a file of DIR
# bound over /proc/sys/kernel/random/boot_id (so a "reboot" is a new boot id).
#
# usage: cluster.sh up DIR [N]          start N nodes (default 4, at least 3) with state in DIR
#        cluster.sh down DIR            stop everything, delete the namespaces and DIR
#        cluster.sh exec DIR NODE CMD…  run CMD in NODE (head, gpu01, …) as root
#        cluster.sh fault DIR NODE FILE inject a fault: FILE becomes the node's fake-NVML state
#        cluster.sh clear DIR NODE      back to 2 healthy idle GPUs
#        cluster.sh reboot DIR NODE     new boot id, faults cleared, slurmd and agent restarted
#        cluster.sh tls DIR on|off      agents serve TLS + basic auth (or plain HTTP); Prometheus
#                                       is given the matching emitted scrape config and reloaded
#        cluster.sh status DIR
# Environment: GPUFLEET_BUILD, the build folder with src/gpufleet and tests/fakes (default
# build/dev). docs/cluster.md shows how to run it by hand, add a node and inject faults.
set -eEuo pipefail
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

die() { echo "cluster: $*" >&2; exit 1; }
say() { echo "cluster: $*" >&2; }

SUBNET=10.77.0
HEAD_ADDR=$SUBNET.254
GPUS=2
AGENT_PORT=9401
PROM_PORT=9090
AM_PORT=9093
# bcrypt("s3cret"), the basic-auth password of the TLS variant (tests only).
AUTH_HASH='$2b$04$9m61N.EeAx.kaFl84XDhJOPa0GeP3RvMlH8kcC41GytfGlGR0fbbm'

load() {
  D=$(cd "$1" 2>/dev/null && pwd) || die "$1: no such folder"
  [ -f "$D/cluster.env" ] || die "$D: no cluster here (run: cluster.sh up $1)"
  # shellcheck disable=SC1091
  . "$D/cluster.env"
}
holder() { cat "$D/$1/holder.pid" 2>/dev/null || die "$1: not a node of this cluster"; }
# Runs a command inside a node's namespaces (network, hostname, mounts).
nsx() { local n=$1; shift; nsenter -t "$(holder "$n")" -n -u -m -- "$@"; }
node_addr() { echo "$SUBNET.$((10 + 10#${1#gpu}))"; }

healthy_json() {
  printf '{"gpus": %d, "name": "NVIDIA H100 80GB HBM3", "util": 0, "power_w": 75, "temp": 34}\n' "$GPUS"
}

# --- up ------------------------------------------------------------------------------------------
cmd_up() {
  local dir=$1 n=${2:-4}
  [[ $n =~ ^[0-9]+$ ]] && ((n >= 3 && n <= 99)) || die "N=$n: want 3 to 99 nodes"
  # Outside CI a machine without root or the components skips (77); in CI that is a failure.
  local missing=""
  [ "$(id -u)" = 0 ] || missing="root (network namespaces, mounts, Slurm as root)"
  for tool in slurmctld slurmd munged prometheus prometheus-alertmanager promtool ip nsenter \
      unshare openssl curl python3 bc; do
    command -v "$tool" >/dev/null || missing="${missing:+$missing, }$tool"
  done
  if [ -n "$missing" ]; then
    [ "${CI:-}" = true ] && die "missing: $missing (scripts/deps.sh installs the tools)"
    echo "SKIP: the cluster in a box needs $missing (scripts/deps.sh installs the tools)"; exit 77
  fi
  local build=${GPUFLEET_BUILD:-$ROOT/build/dev}
  build=$(cd "$build" && pwd) || die "GPUFLEET_BUILD=$build: no such folder"
  [ -x "$build/src/gpufleet" ] || die "$build/src/gpufleet: not built (scripts/build.sh dev)"
  [ -e "$build/tests/fakes/libnvidia-ml.so.1" ] || die "$build/tests/fakes: no fake libnvidia-ml.so.1"
  if [ -f "$dir/cluster.env" ]; then say "$dir holds an old cluster: taking it down first"; cmd_down "$dir"; fi
  mkdir -p "$dir"
  D=$(cd "$dir" && pwd)
  chmod 755 "$D"
  trap 'say "up failed at line $LINENO: $BASH_COMMAND; taking down what started"; trap - ERR; cmd_down "$D" || true' ERR
  local id; id=$(od -An -N2 -tx2 /dev/urandom | tr -d ' ')
  local nodes=() i
  for ((i = 1; i <= n; i++)); do nodes+=("$(printf 'gpu%02d' "$i")"); done
  local last; last=$(printf '%02d' "$n")
  cat > "$D/cluster.env" <<ENV
ID=$id
N=$n
NODES="${nodes[*]}"
HOSTLIST="gpu[01-$last]"
BUILD=$build
BIN=$build/src/gpufleet
FAKE_NVML_DIR=$build/tests/fakes
ENV
  load "$D"
  say "cluster $ID in $D: head + $N nodes on $SUBNET.0/24"

  # The switch: a bridge in a namespace of its own (nothing on the host's network).
  ip netns add "gf$ID-sw"
  ip -n "gf$ID-sw" link add br0 type bridge
  ip -n "gf$ID-sw" link set br0 up

  # Shared files: the spec, Slurm's configuration, one munge key, users, hosts.
  mkdir -p "$D/shared" "$D/etc"
  chmod 1777 "$D/shared"
  cp "$HERE/box.yaml" "$D/etc/cluster.yaml"
  "$BIN" emit slurm-conf "$D/etc/cluster.yaml" --set "nodes.count=$N" --nodes "$HOSTLIST" \
    --gpu-device-prefix /run/gpufleet/dev/nvidia -o "$D/etc"
  # The spec the nodes judge themselves against says how many nodes there are.
  sed -i "s/^  count: 4$/  count: $N/" "$D/etc/cluster.yaml"
  write_slurm_conf > "$D/etc/slurm.conf"
  mungekey --create --keyfile="$D/etc/munge.key" --force >/dev/null 2>&1 \
    || dd if=/dev/urandom of="$D/etc/munge.key" bs=1024 count=1 status=none
  {
    echo "127.0.0.1 localhost"
    echo "$HEAD_ADDR head"
    for i in $NODES; do echo "$(node_addr "$i") $i"; done
  } > "$D/etc/hosts"
  # A job user, the same on every node (as LDAP would give it).
  { cat /etc/passwd; echo "alice:x:2001:2001:test job user:$D/shared:/bin/bash"; } > "$D/etc/passwd"
  { cat /etc/group; echo "alice:x:2001:"; } > "$D/etc/group"

  make_node head "$HEAD_ADDR"
  for i in $NODES; do make_node "$i" "$(node_addr "$i")"; done

  # Daemons: munge everywhere, then the controller, then the nodes.
  for i in head $NODES; do start_munged "$i"; done
  nsx head slurmctld </dev/null >/dev/null 2>&1
  for i in $NODES; do start_slurmd "$i"; start_agent "$i"; done
  start_monitoring
  wait_ready
  trap - ERR
  say "up: $(nsx head sinfo -h -p gpu -o "%D nodes %T" | paste -sd, -); Prometheus http://head:$PROM_PORT"
}

write_slurm_conf() {
  cat <<CONF
# slurm.conf of the cluster in a box: what a site adds around gpufleet emit slurm-conf's
# gres.conf and topology.conf. Every daemon reads it as /etc/slurm/slurm.conf (each node's /etc).
ClusterName=box$ID
SlurmctldHost=head
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=/run/slurm/state
SlurmdSpoolDir=/run/slurm/spool
SlurmctldPidFile=/run/slurm/slurmctld.pid
SlurmdPidFile=/run/slurm/slurmd.pid
SlurmctldLogFile=/run/slurm/slurmctld.log
SlurmdLogFile=/run/slurm/slurmd.log
# The pmix plugin's per-step folders, per node.
TmpFS=/run/slurm/tmp
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
# task/affinity binds each task to the CPUs its step was given. (Not task/cgroup: the nodes share
# the host's cgroup tree, and slurmd would leave its folders there.)
TaskPlugin=task/affinity
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=pmix
SwitchType=switch/none
ReturnToService=2
SlurmdTimeout=30
KillWait=5
MinJobAge=600
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
GresTypes=gpu
TopologyPlugin=topology/tree
HealthCheckProgram=$ROOT/packaging/slurm/gpufleet-healthcheck
HealthCheckInterval=5
HealthCheckNodeState=ANY
NodeName=$HOSTLIST CPUs=2 RealMemory=1000 Gres=gpu:h100:$GPUS State=UNKNOWN
PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu-long Nodes=ALL Default=NO MaxTime=INFINITE State=UP
CONF
}

# make_node NAME ADDRESS: the namespace, its link to the switch, its /etc, /run and boot id, and
# the process that holds its hostname and mounts.
make_node() {
  local name=$1 addr=$2 ns=gf$ID-$1 dir=$D/$1
  mkdir -p "$dir"/{etc-upper,etc-work,run}
  local up=$dir/etc-upper
  mkdir -p "$up"/{munge,slurm,gpufleet,default}
  echo "$name" > "$up/hostname"
  cp "$D/etc/hosts" "$D/etc/passwd" "$D/etc/group" "$up/"
  cp "$D/etc/slurm.conf" "$D/etc/gres.conf" "$D/etc/topology.conf" "$up/slurm/"
  install -m 0400 "$D/etc/munge.key" "$up/munge/munge.key"
  chown -R munge:munge "$up/munge"
  chmod 0700 "$up/munge"
  cp "$D/etc/cluster.yaml" "$up/gpufleet/cluster.yaml"
  cat > "$up/default/gpufleet" <<DEF
# Read by packaging/slurm/gpufleet-healthcheck (Slurm's HealthCheckProgram) and the agent.
GPUFLEET_BIN=$BIN
GPUFLEET_SPEC=/etc/gpufleet/cluster.yaml
# The fake NVML of the cluster in a box; a real node loads the driver's libnvidia-ml.so.1.
LD_LIBRARY_PATH=$FAKE_NVML_DIR
GPUFLEET_FAKE_NVML=/run/gpufleet/fake-nvml.json
GPUFLEET_AGENT_ARGS=
DEF
  install -d -o munge -g munge -m 0755 "$dir/run/munge"
  mkdir -p "$dir/run/slurm"/{spool,state,tmp} "$dir/run/gpufleet"/{dev,bench}
  # Bench results are written by job users and read by the agent: a sticky drop folder.
  chmod 1777 "$dir/run/gpufleet/bench"
  for ((g = 0; g < GPUS; g++)); do mknod -m 666 "$dir/run/gpufleet/dev/nvidia$g" c 1 3; done
  healthy_json > "$dir/run/gpufleet/fake-nvml.json"
  cat /proc/sys/kernel/random/uuid > "$dir/boot_id"

  ip netns add "$ns"
  ip link add "v$ID-$name" type veth peer name "w$ID-$name"
  ip link set "v$ID-$name" netns "$ns"
  ip link set "w$ID-$name" netns "gf$ID-sw"
  ip -n "$ns" link set "v$ID-$name" name eth0
  ip -n "$ns" addr add "$addr/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
  ip -n "gf$ID-sw" link set "w$ID-$name" master br0
  ip -n "gf$ID-sw" link set "w$ID-$name" up
  # shellcheck disable=SC2016  # expanded by the inner shell
  # nsenter, not `ip netns exec`: the node mounts its own sysfs (so /sys/class/net shows its
  # eth0) and keeps the host's cgroup hierarchies under it, which slurmd needs.
  mkdir -p "$dir/cgroup"
  nsenter --net="/run/netns/$ns" unshare --uts --mount --propagation private --fork sh -c '
    hostname "$1"
    mount --rbind /sys/fs/cgroup "$2/cgroup"
    mount -t sysfs sysfs /sys
    mount --rbind "$2/cgroup" /sys/fs/cgroup
    umount -l "$2/cgroup"
    mount -t overlay overlay -o "lowerdir=/etc,upperdir=$2/etc-upper,workdir=$2/etc-work" /etc
    mount --bind "$2/run" /run
    mount --bind "$2/boot_id" /proc/sys/kernel/random/boot_id
    echo $$ > "$2/holder.pid"
    exec sleep infinity' sh "$name" "$dir" </dev/null >"$dir/holder.log" 2>&1 &
  for _ in $(seq 100); do [ -s "$dir/holder.pid" ] && break; sleep 0.05; done
  [ -s "$dir/holder.pid" ] || die "$name: the namespace holder did not start: $(cat "$dir/holder.log")"
}

start_munged() {
  nsx "$1" runuser -u munge -- munged --seed-file=/run/munge/munged.seed \
    --log-file=/run/munge/munged.log </dev/null >/dev/null 2>&1
  for _ in $(seq 50); do nsx "$1" sh -c 'munge -n | unmunge' >/dev/null 2>&1 && return 0; sleep 0.1; done
  die "$1: munged did not start: $(tail -3 "$D/$1/run/munge/munged.log" 2>/dev/null)"
}

start_slurmd() { nsx "$1" slurmd </dev/null >/dev/null 2>&1; }

start_agent() {
  # shellcheck disable=SC2016  # expanded inside the node
  nsx "$1" setsid sh -c 'set -a; . /etc/default/gpufleet; set +a
    echo $$ > /run/gpufleet/agent.pid
    exec "$GPUFLEET_BIN" agent --listen ":$0" --bench-dir /run/gpufleet/bench --interval 1 \
      --check-interval 2 --disk / $GPUFLEET_AGENT_ARGS' "$AGENT_PORT" \
    </dev/null >"$D/$1/run/gpufleet/agent.log" 2>&1 &
}

stop_pidfile() {  # NODE PIDFILE (inside the node's /run)
  local f=$D/$1/run/$2 pid
  [ -s "$f" ] || return 0
  pid=$(cat "$f")
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.05; done
  kill -9 "$pid" 2>/dev/null || true
}

# Prometheus with the emitted scrape config and rules, and Alertmanager, on the head node.
start_monitoring() {
  local p=$D/head/run/prometheus
  mkdir -p "$p"/{tsdb,am}
  "$BIN" emit prometheus-rules "$D/etc/cluster.yaml" -o "$p/gpufleet-rules.yml"
  write_scrape_config off
  cat > "$p/alertmanager.yml" <<'Y'
route: {receiver: log, group_wait: 0s, group_interval: 1s, repeat_interval: 1h}
receivers: [{name: log}]
Y
  # shellcheck disable=SC2016
  nsx head setsid sh -c 'echo $$ > /run/prometheus/am.pid; exec prometheus-alertmanager \
    --config.file=/run/prometheus/alertmanager.yml --storage.path=/run/prometheus/am \
    --web.listen-address=":$0" --cluster.listen-address=' "$AM_PORT" \
    </dev/null >"$p/am.log" 2>&1 &
  # shellcheck disable=SC2016
  nsx head setsid sh -c 'echo $$ > /run/prometheus/prometheus.pid; exec prometheus \
    --config.file=/run/prometheus/prometheus.yml --storage.tsdb.path=/run/prometheus/tsdb \
    --web.listen-address=":$0" --web.enable-lifecycle' "$PROM_PORT" \
    </dev/null >"$p/prometheus.log" 2>&1 &
}

# write_scrape_config on|off: the emitted scrape config for plain HTTP or TLS + basic auth.
write_scrape_config() {
  local p=$D/head/run/prometheus tls=()
  if [ "$1" = on ]; then
    tls=(--agent-scheme https --agent-ca-file /run/prometheus/ca.pem --agent-user prometheus
      --agent-password-file /run/prometheus/agent.pw)
  fi
  "$BIN" emit prometheus-scrape "$D/etc/cluster.yaml" --set "nodes.count=$N" --nodes "$HOSTLIST" \
    --agent-port "$AGENT_PORT" --alertmanager "head:$AM_PORT" --scrape-interval 1s "${tls[@]}" \
    -o "$p/prometheus.yml"
}

wait_ready() {
  local want=$N got=""
  for _ in $(seq 300); do
    got=$(nsx head sinfo -h -N -p gpu -o %T 2>/dev/null | grep -cx idle || true)
    [ "$got" = "$want" ] && break
    sleep 0.1
  done
  [ "$got" = "$want" ] || die "Slurm: $got of $want nodes idle: $(nsx head sinfo -h -N -p gpu -o "%N %T %E" 2>&1 | paste -sd';' -)"
  for i in $NODES; do
    for _ in $(seq 150); do nsx "$i" curl -sf "http://localhost:$AGENT_PORT/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
    nsx "$i" curl -sf "http://localhost:$AGENT_PORT/healthz" >/dev/null 2>&1 \
      || die "$i: the agent does not answer: $(tail -3 "$D/$i/run/gpufleet/agent.log")"
  done
  for port in $PROM_PORT $AM_PORT; do
    for _ in $(seq 100); do nsx head curl -sf "http://localhost:$port/-/ready" >/dev/null 2>&1 && break; sleep 0.1; done
    nsx head curl -sf "http://localhost:$port/-/ready" >/dev/null 2>&1 \
      || die "head: nothing ready on port $port: $(tail -3 "$D"/head/run/prometheus/*.log)"
  done
}

# --- down ----------------------------------------------------------------------------------------
cmd_down() {
  local dir=$1
  [ -f "$dir/cluster.env" ] || { rm -rf "$dir"; return 0; }
  load "$dir"
  local ns pids left=""
  # Every process in the cluster's namespaces: TERM (slurmctld saves its state), then KILL.
  for ns in "gf$ID-head" $(for i in $NODES; do echo "gf$ID-$i"; done) "gf$ID-sw"; do
    ip netns list | grep -qw "$ns" || continue
    pids=$(ip netns pids "$ns" || true)
    [ -n "$pids" ] && kill $pids 2>/dev/null || true
  done
  for _ in $(seq 60); do
    left=""
    for ns in "gf$ID-head" $(for i in $NODES; do echo "gf$ID-$i"; done); do
      ip netns list | grep -qw "$ns" && left="$left$(ip netns pids "$ns" 2>/dev/null || true)"
    done
    [ -z "$left" ] && break
    sleep 0.1
  done
  for ns in "gf$ID-head" $(for i in $NODES; do echo "gf$ID-$i"; done) "gf$ID-sw"; do
    ip netns list | grep -qw "$ns" || continue
    pids=$(ip netns pids "$ns" || true)
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null || true
    ip netns del "$ns"
  done
  rm -rf "$D"
}

# --- operations on a running cluster --------------------------------------------------------------
cmd_fault() {
  local node=$2 file=$3
  load "$1"
  holder "$node" >/dev/null
  [ -f "$file" ] || die "$file: no such fault file"
  cp "$file" "$D/$node/run/gpufleet/fake-nvml.json.new"
  mv "$D/$node/run/gpufleet/fake-nvml.json.new" "$D/$node/run/gpufleet/fake-nvml.json"
}

cmd_clear() {
  load "$1"
  holder "$2" >/dev/null
  healthy_json > "$D/$2/run/gpufleet/fake-nvml.json.new"
  mv "$D/$2/run/gpufleet/fake-nvml.json.new" "$D/$2/run/gpufleet/fake-nvml.json"
}

cmd_reboot() {
  local node=$2
  load "$1"
  holder "$node" >/dev/null
  stop_pidfile "$node" gpufleet/agent.pid
  stop_pidfile "$node" slurm/slurmd.pid
  healthy_json > "$D/$node/run/gpufleet/fake-nvml.json"
  # Same file (the bind mount follows the inode): a new boot id, as a real reboot makes.
  cat /proc/sys/kernel/random/uuid > "$D/$node/boot_id"
  start_slurmd "$node"
  start_agent "$node"
}

cmd_tls() {
  local mode=$2 i
  load "$1"
  local p=$D/head/run/prometheus
  if [ "$mode" = on ]; then
    # A CA, and a certificate per node for its name and address, as a site's PKI would issue.
    [ -s "$D/etc/ca.pem" ] || openssl req -x509 -newkey rsa:2048 -nodes -keyout "$D/etc/ca.key" \
      -out "$D/etc/ca.pem" -days 2 -subj "/CN=box$ID CA" >/dev/null 2>&1
    cp "$D/etc/ca.pem" "$p/ca.pem"
    printf 's3cret' > "$p/agent.pw"
    for i in $NODES; do
      local c=$D/$i/run/gpufleet
      openssl req -newkey rsa:2048 -nodes -keyout "$c/key.pem" -out "$c/req.pem" \
        -subj "/CN=$i" >/dev/null 2>&1
      openssl x509 -req -in "$c/req.pem" -CA "$D/etc/ca.pem" -CAkey "$D/etc/ca.key" \
        -CAcreateserial -out "$c/cert.pem" -days 2 \
        -extfile <(printf 'subjectAltName=DNS:%s,IP:%s' "$i" "$(node_addr "$i")") >/dev/null 2>&1
      cat > "$c/web-config.yml" <<Y
tls_server_config:
  cert_file: /run/gpufleet/cert.pem
  key_file: /run/gpufleet/key.pem
basic_auth_users:
  prometheus: '$AUTH_HASH'
Y
      nsx "$i" sed -i 's|^GPUFLEET_AGENT_ARGS=.*|GPUFLEET_AGENT_ARGS="--web.config.file /run/gpufleet/web-config.yml"|' /etc/default/gpufleet
    done
  elif [ "$mode" = off ]; then
    for i in $NODES; do
      nsx "$i" sed -i 's|^GPUFLEET_AGENT_ARGS=.*|GPUFLEET_AGENT_ARGS=|' /etc/default/gpufleet
    done
  else
    die "tls: want on or off"
  fi
  for i in $NODES; do stop_pidfile "$i" gpufleet/agent.pid; start_agent "$i"; done
  write_scrape_config "$mode"
  nsx head curl -sf -X POST "http://localhost:$PROM_PORT/-/reload" >/dev/null \
    || die "Prometheus did not reload: $(tail -3 "$p/prometheus.log")"
}

cmd_status() {
  load "$1"
  echo "cluster $ID in $D: head ($HEAD_ADDR) + $N nodes"
  nsx head sinfo -N -p gpu -o "%N %T %E"
  for i in $NODES; do
    printf '%s %s agent=%s boot=%s\n' "$i" "$(node_addr "$i")" \
      "$(nsx "$i" curl -s -o /dev/null -w '%{http_code}' "http://localhost:$AGENT_PORT/healthz" 2>/dev/null || echo -)" \
      "$(cut -c1-8 "$D/$i/boot_id")"
  done
}

cmd_exec() {
  load "$1"
  local node=$2
  shift 2
  nsx "$node" "$@"
}

case "${1:-}" in
  up) [ $# -ge 2 ] || die "usage: cluster.sh up DIR [N]"; cmd_up "$2" "${3:-4}" ;;
  down) [ $# = 2 ] || die "usage: cluster.sh down DIR"; cmd_down "$2" ;;
  exec) [ $# -ge 4 ] || die "usage: cluster.sh exec DIR NODE CMD..."; shift; cmd_exec "$@" ;;
  fault) [ $# = 4 ] || die "usage: cluster.sh fault DIR NODE FILE"; cmd_fault "$2" "$3" "$4" ;;
  clear) [ $# = 3 ] || die "usage: cluster.sh clear DIR NODE"; cmd_clear "$2" "$3" ;;
  reboot) [ $# = 3 ] || die "usage: cluster.sh reboot DIR NODE"; cmd_reboot "$2" "$3" ;;
  tls) [ $# = 3 ] || die "usage: cluster.sh tls DIR on|off"; cmd_tls "$2" "$3" ;;
  status) [ $# = 2 ] || die "usage: cluster.sh status DIR"; cmd_status "$2" ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
esac
