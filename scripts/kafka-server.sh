#!/usr/bin/env bash
# A real single-node Apache Kafka broker (KRaft, broker and controller in one
# JVM, no ZooKeeper) on loopback, for tests, benchmarks and trying rankwatch
# without a cluster.
#
#   scripts/kafka-server.sh start DIR [--partitions N] [--sasl]
#   scripts/kafka-server.sh stop DIR      # SIGTERM, SIGKILL after a bound
#   scripts/kafka-server.sh kill DIR      # SIGKILL at once (fault tests)
#   scripts/kafka-server.sh classpath     # java -cp for Kafka's own tools
#
# `start` resolves the broker's jars through Maven (tests/kafka/pom.xml; they
# are copied once into a cache, so later starts need no network), formats
# KRaft storage in DIR on its first start, starts the broker on free loopback
# ports and returns once it answers metadata requests, having written
#   DIR/bootstrap        host:port of the PLAINTEXT listener
#   DIR/bootstrap-sasl   with --sasl: host:port of a SASL_PLAINTEXT listener
#   DIR/credentials      with --sasl: librdkafka properties of a SCRAM-SHA-512
#                        user (security.protocol, sasl.*), e.g. for kcat -F
#   DIR/pid              the broker's process id
# and DIR/kafka.log (the broker's log). `start` on a DIR that holds a stopped
# broker restarts it with its data, on the same ports. N is the partition
# count of auto-created topics (default 1). The broker keeps records of any
# age (log.retention.ms=-1): test events are stamped in the past.
#
# Environment: KAFKA_HEAP_OPTS (default -Xms128m -Xmx512m),
# RANKWATCH_KAFKA_CACHE (where the jars go; default
# ~/.cache/rankwatch/kafka), KAFKA_START_TIMEOUT and KAFKA_STOP_TIMEOUT
# (seconds; 180 and 30).
#
# Exit codes: 0 ready (or stopped), 1 the broker failed to start or stop, 2
# bad usage.
set -euo pipefail

readonly repo=$(cd "$(dirname "$0")/.." && pwd)
readonly pom="$repo/tests/kafka/pom.xml"
readonly scram_user=rankwatch

die() {
  echo "kafka-server: $*" >&2
  exit 1
}
usage() {
  echo "kafka-server: $*" >&2
  echo "usage: kafka-server.sh start DIR [--partitions N] [--sasl] | stop DIR | kill DIR | classpath" >&2
  exit 2
}

# The jars of the version named in the pom, copied once into a cache keyed by
# the pom's hash. Prints the directory. Maven Central is tried three times,
# 10 and 30 s apart, each with Maven's own per-request retries, so that a
# network blip does not fail a CI run.
resolve_jars() {
  command -v java >/dev/null || die "java not found (scripts/install-deps.sh installs it)"
  local cache=${RANKWATCH_KAFKA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rankwatch/kafka}
  local key
  key=$(sha256sum "$pom" | cut -c1-16)
  local jars="$cache/$key"
  if [[ ! -f "$jars/.complete" ]]; then
    command -v mvn >/dev/null || die "mvn not found (scripts/install-deps.sh installs maven)"
    mkdir -p "$cache"
    local tmp
    tmp=$(mktemp -d "$cache/.partial-XXXXXX")
    local attempt
    for attempt in 1 2 3; do
      echo "kafka-server: resolving the broker's jars with Maven (attempt $attempt)" >&2
      if mvn -B -q -f "$pom" dependency:copy-dependencies \
        -Dmaven.wagon.http.retryHandler.count=3 \
        -Dmaven.wagon.httpconnectionManager.ttlSeconds=25 \
        -DoutputDirectory="$tmp" >"$tmp.mvn.log" 2>&1; then
        break
      fi
      if [[ $attempt -eq 3 ]]; then
        grep -E 'ERROR|Could not|refused|timed out' "$tmp.mvn.log" | tail -n 20 >&2 ||
          tail -n 20 "$tmp.mvn.log" >&2
        rm -rf "$tmp" "$tmp.mvn.log"
        die "mvn dependency:copy-dependencies failed three times (see above)"
      fi
      sleep $((attempt == 1 ? 10 : 30))
    done
    rm -f "$tmp.mvn.log"
    touch "$tmp/.complete"
    # Another start may have finished first: keep whichever is in place.
    mv -T "$tmp" "$jars" 2>/dev/null || rm -rf "$tmp"
  fi
  echo "$jars"
}

# Local TCP ports in use (any state), from /proc: IPv4 and IPv6.
ports_in_use() {
  local f line
  for f in /proc/net/tcp /proc/net/tcp6; do
    [[ -r $f ]] || continue
    while read -r _ line _; do
      [[ $line == *:* ]] && echo $((16#${line##*:}))
    done <"$f"
  done
}

# Prints $1 distinct free loopback ports. They are drawn from 20000-32767,
# below Linux's ephemeral range (32768-60999), so that servers bound to port
# 0 (every other test) never take them between this choice and the bind;
# the caller retries with new ports if a bind fails anyway.
free_ports() {
  local -A used=()
  local p
  for p in $(ports_in_use); do used[$p]=1; done
  local n=0
  while [[ $n -lt $1 ]]; do
    p=$((20000 + RANDOM % 12768))
    [[ -n ${used[$p]:-} ]] && continue
    used[$p]=1
    echo "$p"
    n=$((n + 1))
  done
}

# Whether the broker on 127.0.0.1:$1 answers a Metadata request (v4, all
# topics) listing at least one broker: a registered, unfenced broker that
# can create topics. Plain bash: a JVM client would take seconds per try.
metadata_ok() {
  local hex
  exec 3<>"/dev/tcp/127.0.0.1/$1" || return 1
  # size 17 | api key 3 | version 4 | correlation id 7 | client id "rw" |
  # topics: null (all) | allow_auto_topic_creation: false
  printf '\x00\x00\x00\x11\x00\x03\x00\x04\x00\x00\x00\x07\x00\x02rw\xff\xff\xff\xff\x00' >&3
  # size | correlation id | throttle ms | broker count
  hex=$(timeout 3 head -c 16 <&3 | od -An -tx1 | tr -d ' \n') || true
  exec 3<&- 3>&-
  [[ ${#hex} -eq 32 && ${hex:8:8} == 00000007 && $((16#${hex:24:8})) -ge 1 ]]
}

# The broker's pid from DIR/pid if that process is alive and is this DIR's
# broker (not a recycled pid); empty otherwise.
running_pid() {
  local dir=$1 pid
  [[ -f "$dir/pid" ]] || return 0
  pid=$(<"$dir/pid")
  [[ $pid =~ ^[0-9]+$ ]] || return 0
  if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$dir/server.properties"; then
    echo "$pid"
  fi
}

# Whether process $1 exists and has not exited (kill -0 alone would see a
# broker that died as alive: it stays this shell's zombie until reaped).
alive() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [[ ${stat:0:1} != Z ]]
}

write_properties() {
  local dir=$1 partitions=$2 sasl=$3 plain=$4 controller=$5 sasl_port=$6
  local listeners="PLAINTEXT://127.0.0.1:$plain,CONTROLLER://127.0.0.1:$controller"
  local advertised="PLAINTEXT://127.0.0.1:$plain"
  if [[ $sasl == 1 ]]; then
    listeners+=",SASL_PLAINTEXT://127.0.0.1:$sasl_port"
    advertised+=",SASL_PLAINTEXT://127.0.0.1:$sasl_port"
  fi
  cat >"$dir/server.properties" <<EOF
# Written by scripts/kafka-server.sh: a single-node KRaft test broker.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$controller
controller.listener.names=CONTROLLER
listeners=$listeners
advertised.listeners=$advertised
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT
sasl.enabled.mechanisms=SCRAM-SHA-512
listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
log.dirs=$dir/data
num.partitions=$partitions
auto.create.topics.enable=true
default.replication.factor=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=5
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
# Tests join groups often: no initial delay (the default waits 3 s).
group.initial.rebalance.delay.ms=0
# Compaction tests: the cleaner looks every second.
log.cleaner.backoff.ms=1000
# Records of any age are kept: the tests' events are stamped in the past
# (November 2025), and with Kafka's default retention (7 days, by the
# newest timestamp of a segment) the broker's first retention check, 30 s
# after its start, deleted them, unread ones included: a daemon restarted
# just after it found its committed offsets below the log start and
# re-read nothing (RealKafkaE2eTest.KillNineAndRestartLosesNothing).
log.retention.ms=-1
EOF
  # Kafka 3.9 logs through SLF4J to reload4j (log4j 1.2's maintained fork).
  cat >"$dir/log4j.properties" <<'EOF'
# The broker's log: one file (stdout, redirected to DIR/kafka.log).
log4j.rootLogger=INFO, out
log4j.appender.out=org.apache.log4j.ConsoleAppender
log4j.appender.out.layout=org.apache.log4j.PatternLayout
log4j.appender.out.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.state.change.logger=WARN
log4j.logger.kafka.log.LogCleaner=INFO
EOF
}

java_opts() {
  local dir=$1
  # Small heap and one GC thread: kind to a 2-core machine running tests
  # beside the broker.
  # shellcheck disable=SC2086
  echo ${KAFKA_HEAP_OPTS:--Xms128m -Xmx512m} -XX:+UseSerialGC \
    -XX:TieredStopAtLevel=1 -XX:-UsePerfData -Djava.awt.headless=true \
    "-Dlog4j.configuration=file:$dir/log4j.properties"
}

format_storage() {
  local dir=$1 jars=$2 sasl=$3
  local id
  # A random cluster id: 16 bytes, base64url without padding (Kafka's Uuid).
  # One starting with '-' (1 in 64) would read as an option to the storage
  # tool ("argument --cluster-id/-t: expected one argument"): draw again.
  id=-
  while [[ $id == -* ]]; do
    id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
  done
  local args=(format -t "$id" -c "$dir/server.properties")
  if [[ $sasl == 1 ]]; then
    local password
    password=$(head -c 18 /dev/urandom | base64 | tr '+/' 'xy')
    args+=(--add-scram "SCRAM-SHA-512=[name=\"$scram_user\",password=\"$password\"]")
    umask 077
    cat >"$dir/credentials" <<EOF
security.protocol=SASL_PLAINTEXT
sasl.mechanism=SCRAM-SHA-512
sasl.username=$scram_user
sasl.password=$password
EOF
    umask 022
  fi
  # shellcheck disable=SC2046
  if ! java $(java_opts "$dir") -cp "$jars/*" kafka.tools.StorageTool "${args[@]}" \
    >>"$dir/kafka.log" 2>&1; then
    tail -n 20 "$dir/kafka.log" >&2
    die "formatting KRaft storage in $dir/data failed (log: $dir/kafka.log)"
  fi
}

# Starts the JVM and waits for metadata. Returns 0 when ready, 3 when a port
# was taken (the caller may retry with others), 1 on any other failure.
launch() {
  local dir=$1 jars=$2 plain=$3
  local timeout=${KAFKA_START_TIMEOUT:-180}
  # Someone else's server on the port would pass for this broker.
  if metadata_ok "$plain" 2>/dev/null; then
    echo "kafka-server: another Kafka broker already answers on 127.0.0.1:$plain" >&2
    return 3
  fi
  local mark
  mark=$(wc -l <"$dir/kafka.log" 2>/dev/null || echo 0)
  # shellcheck disable=SC2046
  setsid java $(java_opts "$dir") -cp "$jars/*" kafka.Kafka "$dir/server.properties" \
    </dev/null >>"$dir/kafka.log" 2>&1 &
  local pid=$!
  echo "$pid" >"$dir/pid"
  local deadline=$((SECONDS + timeout))
  while ((SECONDS < deadline)); do
    if ! alive "$pid"; then
      rm -f "$dir/pid"
      if tail -n "+$((mark + 1))" "$dir/kafka.log" | grep -q 'Address already in use'; then
        return 3
      fi
      tail -n 20 "$dir/kafka.log" >&2
      echo "kafka-server: the broker exited during startup (log: $dir/kafka.log)" >&2
      return 1
    fi
    if metadata_ok "$plain" 2>/dev/null; then return 0; fi
    sleep 0.2
  done
  tail -n 20 "$dir/kafka.log" >&2
  echo "kafka-server: the broker did not answer metadata requests on 127.0.0.1:$plain within ${timeout}s (log: $dir/kafka.log); killed" >&2
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$dir/pid"
  return 1
}

cmd_start() {
  local dir="" partitions=1 sasl=0
  while [[ $# -gt 0 ]]; do
    case $1 in
      --partitions)
        [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] || usage "--partitions needs a positive integer"
        partitions=$2
        shift 2
        ;;
      --sasl)
        sasl=1
        shift
        ;;
      -*) usage "unknown option $1" ;;
      *)
        [[ -z $dir ]] || usage "one DIR only"
        dir=$1
        shift
        ;;
    esac
  done
  [[ -n $dir ]] || usage "start needs a DIR"
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  [[ -z $(running_pid "$dir") ]] || die "a broker is already running in $dir (pid $(<"$dir/pid"))"
  local jars
  jars=$(resolve_jars)
  local start=$SECONDS
  if [[ -f "$dir/data/meta.properties" ]]; then
    # A restart: the same ports and options, with its data.
    [[ -f "$dir/ports" ]] || die "$dir/data is formatted but $dir/ports is missing; use a new DIR"
    local was
    was=$(<"$dir/options")
    [[ $was == "partitions=$partitions sasl=$sasl" ]] ||
      die "$dir was started with $was; start it with the same options, or use a new DIR"
    local ports
    read -r -a ports <"$dir/ports"
    local rc=0
    launch "$dir" "$jars" "${ports[0]}" || rc=$?
    [[ $rc -eq 3 ]] && die "a port of $dir (${ports[*]}) is taken by another process (log: $dir/kafka.log)"
    [[ $rc -eq 0 ]] || exit 1
  else
    rm -rf "$dir/data"
    local attempt rc ports
    for attempt in 1 2 3; do
      read -r -a ports <<<"$(free_ports 3 | tr '\n' ' ')"
      write_properties "$dir" "$partitions" "$sasl" "${ports[@]}"
      if [[ $attempt -eq 1 ]]; then format_storage "$dir" "$jars" "$sasl"; fi
      rc=0
      launch "$dir" "$jars" "${ports[0]}" || rc=$?
      [[ $rc -eq 3 ]] || break
      echo "kafka-server: a chosen port was taken; retrying with others" >&2
    done
    [[ $rc -eq 0 ]] || exit 1
    echo "${ports[*]}" >"$dir/ports"
    echo "partitions=$partitions sasl=$sasl" >"$dir/options"
  fi
  read -r -a ports <"$dir/ports"
  echo "127.0.0.1:${ports[0]}" >"$dir/bootstrap.tmp" && mv "$dir/bootstrap.tmp" "$dir/bootstrap"
  if [[ $sasl == 1 ]]; then
    echo "127.0.0.1:${ports[2]}" >"$dir/bootstrap-sasl.tmp" && mv "$dir/bootstrap-sasl.tmp" "$dir/bootstrap-sasl"
  fi
  echo "kafka-server: broker ready on $(<"$dir/bootstrap")$([[ $sasl == 1 ]] && echo " (SASL/SCRAM-SHA-512: $(<"$dir/bootstrap-sasl"), $dir/credentials)") in $((SECONDS - start)) s, pid $(<"$dir/pid"); log: $dir/kafka.log" >&2
}

# Signals the broker and waits up to $3 seconds for it to exit; then SIGKILL.
cmd_signal() {
  local signal=$1 dir=$2 bound=$3
  [[ -d $dir ]] || usage "no such directory: $dir"
  dir=$(cd "$dir" && pwd)
  local pid
  pid=$(running_pid "$dir")
  if [[ -z $pid ]]; then
    rm -f "$dir/pid"
    echo "kafka-server: no broker running in $dir" >&2
    return 0
  fi
  kill "-$signal" "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + bound))
  while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "kafka-server: broker $pid still running ${bound}s after SIG$signal; SIGKILL" >&2
    kill -KILL "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  fi
  rm -f "$dir/pid"
}

[[ $# -ge 1 ]] || usage "missing command"
command=$1
shift
case $command in
  start) cmd_start "$@" ;;
  stop)
    [[ $# -eq 1 ]] || usage "stop needs one DIR"
    cmd_signal TERM "$1" "${KAFKA_STOP_TIMEOUT:-30}"
    ;;
  classpath)
    # The broker's jars as a java -cp value, for Kafka's own tools
    # (kafka.tools.ConsoleProducer...): resolved as `start` does.
    [[ $# -eq 0 ]] || usage "classpath takes no argument"
    echo "$(resolve_jars)/*"
    ;;
  kill)
    [[ $# -eq 1 ]] || usage "kill needs one DIR"
    cmd_signal KILL "$1" 10
    ;;
  *) usage "unknown command $command" ;;
esac
