#!/usr/bin/env bash
# Runs every benchmark comparison side by side and writes benchmarks/results/latest.md.
#
#   benchmarks/run.sh [--quick]
#
# Needs: Java 17+, redis-server on the PATH, and the build (`mvn -DskipTests install` or
# `mvn -DskipTests package`; this script builds what is missing). Starts its own redis-server,
# the sample apps and benchmarks/http-app on free ports and stops them when it ends, however it ends.
#
# Every comparison runs in paired rounds, one trial per side, the order alternating (A B, B A, ...).
# Prints per comparison (higher is better):
#   RATIO <comparison> <median of the per-round ratios ours/theirs> range <min>-<max> pairs <n> other-cpu <cores>
# (`pairs <n> of <rounds>` when rounds in which processes outside the benchmark kept more than
# --busy-cores (default 0.2) busy were left out), or, when that was at least half the rounds of a
# variant, a line that is not a result:
#   RATIO <comparison> <value> INVALID busy (...) range <min>-<max> pairs <n> other-cpu <cores>
# then `P99_ADDED_MS <comparison>-<variant>[-<peer>] <ms>` (p99 latency a limiter adds over the
# unlimited app) and `BYTES` for Redis memory per key.
#
# Takes about 33 minutes on 2 cores; --quick about 25 minutes (shorter trials, fewer rounds; aimed
# at two quick runs on a quiet machine agreeing within 15% on every headline ratio).
#
#   --busy-cores=C   other processes' CPU (cores) above which a round counts as busy (left out)
set -euo pipefail
cd "$(dirname "$0")/.."

quick=false
busy_cores=0.2
for arg in "$@"; do
  case "$arg" in
    --quick) quick=true ;;
    --busy-cores=*) busy_cores=${arg#--busy-cores=} ;;
    *) echo "Usage: benchmarks/run.sh [--quick] [--busy-cores=C]" >&2; exit 2 ;;
  esac
done

results=benchmarks/results
csv=$results/latest.csv
app_jar=sample-app/target/sample-app-0.1.0-SNAPSHOT.jar
http_app_jar=benchmarks/http-app/target/benchmarks-http-app-0.1.0-SNAPSHOT.jar
mkdir -p "$results"
rm -f "$csv" "$results"/*.log "$results"/jmh.log.*

command -v redis-server >/dev/null || { echo "redis-server is not on the PATH (Debian: apt-get install redis-server)" >&2; exit 1; }
if [[ ! -f benchmarks/target/classpath.txt || ! -d benchmarks/target/classes || ! -f "$app_jar" || ! -f "$http_app_jar" ]]; then
  echo "Building the benchmarks and the apps (mvn -DskipTests package)..."
  mvn -q -DskipTests -pl benchmarks,sample-app,benchmarks/http-app -am package
fi
cp="benchmarks/target/classes:$(cat benchmarks/target/classpath.txt)"

pids=()
cleanup() {
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Sets the variable named $1 to a port nothing listens on, not handed out before, and below the
# kernel's ephemeral range (32768 and up) where servers started on port 0 by other programs (tests
# running beside us) land; never 6379 or 8080.
taken=()
free_port() {
  local port
  for _ in $(seq 100); do
    port=$((15000 + RANDOM % 17000))
    if [[ " ${taken[*]} " != *" $port "* ]] && ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      taken+=("$port")
      printf -v "$1" '%s' "$port"
      return
    fi
  done
  echo "no free port found" >&2
  exit 1
}

# Waits until the process $1 listens on port $2; fails at once, with its log $3, if it died.
await_listen() {
  for _ in $(seq 1800); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null; then
      return
    fi
    if ! kill -0 "$1" 2>/dev/null; then
      echo "process $1 exited before listening on port $2; the end of $3:" >&2
      tail -n 20 "$3" >&2
      exit 1
    fi
    sleep 0.1
  done
  echo "nothing listens on port $2 after 180s (log: $3)" >&2
  exit 1
}

# --trials: rounds (pairs); a ratio is the median of the rounds' ratios. Quick Redis runs take 21:
# their 1 s trials on 100,000 keys, where Redis and the client share two cores, vary the most, and a
# stretch of slow rounds on one side (6 of 15 in one run, the flood sent to Redis at 0.5M/s against
# 0.7-0.85M in the rest) moves the median less when it is a smaller share of them.
if $quick; then
  redis_trials=(--trial=1s --trials=21 --warmup=2s --count=1s)
  http_trials=(--trial=1s --trials=11 --warmup=10s)
else
  redis_trials=(--trial=2s --trials=11 --warmup=5s --count=2s)
  http_trials=(--trial=2s --trials=11 --warmup=15s)
fi

# --own-root: this script's process tree (the benchmark JVMs, JMH's forks, redis-server, the apps)
# is the benchmark's own; CPU used by any other process counts as machine load.
bench() {
  java -Xms1g -Xmx1g -cp "$cp" io.github.ratelimit.benchmarks.Main "$@" --quick=$quick --csv="$csv" --own-root=$$ \
    --busy-cores="$busy_cores"
}

# Sets the variable named $1 to the port of a new redis-server logging to $results/$2.log.
start_redis() {
  local redis_server_port
  free_port redis_server_port
  redis-server --port "$redis_server_port" --bind 127.0.0.1 --save '' --appendonly no --logfile "$PWD/$results/$2.log" &
  pids+=($!)
  await_listen $! "$redis_server_port" "$results/$2.log"
  printf -v "$1" '%s' "$redis_server_port"
}

start_redis redis_port redis
redis_version=$(redis-server --version | sed -E 's/.* v=([^ ]+).*malloc=([^ ]+).*/\1 (\2)/')

echo "== in-memory store vs Bucket4j local and Resilience4j (JMH, alternating single-fork runs)"
bench memory

echo "== Redis store vs plain Lettuce EVALSHA and Bucket4j Lettuce (Redis $redis_version on port $redis_port)"
bench redis --redis-port="$redis_port" "${redis_trials[@]}"

echo "== Redis memory per key"
bench redis-memory --redis-port="$redis_port"

echo "== HTTP: sample app limited vs unlimited"
# A limit never reached (every request is decided, none rejected); keep-alive connections;
# a Redis timeout that a loaded two-core machine does not hit (the default 100ms can be, and
# then the failure mode's in-memory fallback would be measured instead of Redis).
app_args=(--server.tomcat.max-keep-alive-requests=-1 --logging.level.root=WARN
  --ratelimit.buckets.api.limit=1000000000 --ratelimit.buckets.api.window=1h --ratelimit.redis.timeout=1s)
app_pids=()
# Stops the apps started so far, so that the next phase has the machine to itself.
stop_apps() {
  for pid in "${app_pids[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  app_pids=()
}
start_app() {
  local port=$1 name=$2
  shift 2
  java -Xms512m -Xmx512m -jar "$app_jar" --server.port="$port" "${app_args[@]}" "$@" >"$results/app-$name.log" 2>&1 &
  pids+=($!)
  app_pids+=($!)
}
free_port unlimited_port; start_app "$unlimited_port" unlimited --ratelimit.enabled=false
free_port memory_port; start_app "$memory_port" memory
free_port redis_app_port; start_app "$redis_app_port" redis --spring.profiles.active=redis \
  --spring.data.redis.host=127.0.0.1 --spring.data.redis.port="$redis_port"
await_listen "${app_pids[0]}" "$unlimited_port" "$results/app-unlimited.log"
await_listen "${app_pids[1]}" "$memory_port" "$results/app-memory.log"
await_listen "${app_pids[2]}" "$redis_app_port" "$results/app-redis.log"
bench http "${http_trials[@]}" \
  --unlimited="http://127.0.0.1:$unlimited_port/api/greeting" \
  --limited-memory="http://127.0.0.1:$memory_port/api/greeting" \
  --limited-redis="http://127.0.0.1:$redis_app_port/api/greeting"
stop_apps

echo "== HTTP: our starter vs bucket4j-spring-boot-starter (benchmarks/http-app, per X-Api-Key, Redis)"
# Each app on its own redis-server, as a user would run it; the limiters' keys never meet.
start_http_app() {
  local port=$1 name=$2 redis=$3
  java -Xms512m -Xmx512m -jar "$http_app_jar" --server.port="$port" --spring.profiles.active="$name" \
    --spring.data.redis.port="$redis" >"$results/http-app-$name.log" 2>&1 &
  pids+=($!)
  app_pids+=($!)
}
start_redis ours_redis_port redis-ours
start_redis starter_redis_port redis-bucket4j
free_port ours_port; start_http_app "$ours_port" ours "$ours_redis_port"
free_port starter_port; start_http_app "$starter_port" bucket4j "$starter_redis_port"
free_port plain_port; start_http_app "$plain_port" unlimited "$redis_port"
await_listen "${app_pids[0]}" "$ours_port" "$results/http-app-ours.log"
await_listen "${app_pids[1]}" "$starter_port" "$results/http-app-bucket4j.log"
await_listen "${app_pids[2]}" "$plain_port" "$results/http-app-unlimited.log"
bench http-starter "${http_trials[@]}" \
  --ours="http://127.0.0.1:$ours_port/api/hello" \
  --bucket4j-starter="http://127.0.0.1:$starter_port/api/hello" \
  --unlimited="http://127.0.0.1:$plain_port/api/hello"
stop_apps

echo "== Pictures and report"
bench pictures --svg=docs/algorithms.svg
bench report --redis-version="$redis_version" --svg=docs/throughput.svg
echo "Wrote $results/latest.md, $csv, docs/algorithms.svg, docs/throughput.svg"
