#!/usr/bin/env bash
# Runs every benchmark comparison side by side and writes benchmarks/results/latest.md.
#
#   benchmarks/run.sh [--quick]
#
# Needs: Java 17+, redis-server on the PATH, and the build (`mvn -DskipTests install` or
# `mvn -DskipTests package`; this script builds what is missing). Starts its own redis-server
# and sample apps on free ports and stops them when it ends, however it ends.
# Prints one `RATIO <comparison> <ours/theirs>` line per comparison (higher is better),
# `P99_ADDED_MS <comparison>-c<connections>` (ms of p99 latency limiting adds) and `BYTES` for Redis memory per key.
# --quick: short trials, under 5 minutes; figures are noisier.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=false
case "${1:-}" in
  --quick) quick=true ;;
  "") ;;
  *) echo "Usage: benchmarks/run.sh [--quick]" >&2; exit 2 ;;
esac

results=benchmarks/results
csv=$results/latest.csv
app_jar=sample-app/target/sample-app-0.1.0-SNAPSHOT.jar
mkdir -p "$results"
rm -f "$csv" "$results"/*.log "$results"/jmh.log.*

command -v redis-server >/dev/null || { echo "redis-server is not on the PATH (Debian: apt-get install redis-server)" >&2; exit 1; }
if [[ ! -f benchmarks/target/classpath.txt || ! -d benchmarks/target/classes || ! -f "$app_jar" ]]; then
  echo "Building the benchmarks and the sample app (mvn -DskipTests package)..."
  mvn -q -DskipTests -pl benchmarks,sample-app -am package
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

if $quick; then
  redis_trials=(--trial=1s --trials=3 --warmup=2s --count=1s)
  http_trials=(--trial=1s --trials=3 --warmup=10s)
else
  redis_trials=(--trial=3s --trials=7 --warmup=5s --count=3s)
  http_trials=(--trial=3s --trials=7 --warmup=10s)
fi

bench() {
  java -Xms1g -Xmx1g -cp "$cp" io.github.ratelimit.benchmarks.Main "$@" --quick=$quick --csv="$csv"
}

free_port redis_port
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --logfile "$PWD/$results/redis.log" &
pids+=($!)
await_listen $! "$redis_port" "$results/redis.log"
redis_version=$(redis-server --version | sed -E 's/.* v=([^ ]+).*malloc=([^ ]+).*/\1 (\2)/')

echo "== in-memory store vs Bucket4j local and Resilience4j (JMH; log in $results/jmh.log.t*)"
bench memory --jmh-log="$results/jmh.log"

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

echo "== Pictures and report"
bench pictures --svg=docs/algorithms.svg
bench report --redis-version="$redis_version" --svg=docs/throughput.svg
echo "Wrote $results/latest.md, $csv, docs/algorithms.svg, docs/throughput.svg"
