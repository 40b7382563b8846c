#!/usr/bin/env bash
# lexrun's engine overhead on the real model: `lexrun workflows/live.lex` (every stage asked of
# the model: --no-cache) against a raw HTTP loop sending the same requests to the same server
# (benches/raw_http_loop.py replay; an answer lexrun cut is read only as far as lexrun read it),
# taking turns, same run. Target: lexrun ≤ 1.02 × the loop.
#   benches/live_overhead.sh [RUNS]      (default 3 pairs)
# The requests are those lexrun sent on a first run, recorded by the loop's pass-through proxy;
# SmolLM2 decodes greedily, so every later run asks the same questions and gets the same
# answers. Prints each pair's wall times and the median ratio.
# Needs what scripts/live needs (it builds lexrun and the server, and fetches the model, once).
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"
say() { echo "overhead: $*" >&2; }

scripts/install-tools
cargo build --release --locked --quiet
lexrun="${CARGO_TARGET_DIR:-target}/release/lexrun"
scripts/llama-server >/dev/null
scripts/small-model >/dev/null

free() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free)
proxy_port=$(free)
work=$(mktemp -d)
scripts/serve-small "$port" >"$work/server.log" 2>&1 &
server=$!
proxy=
stop() {
  [ -n "$proxy" ] && kill "$proxy" 2>/dev/null || true
  kill "$server" 2>/dev/null && wait "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap stop EXIT
url="http://127.0.0.1:$port"
for _ in $(seq 1 240); do
  curl -fs "$url/health" >/dev/null 2>&1 && break
  kill -0 "$server" 2>/dev/null || { cat "$work/server.log" >&2; exit 2; }
  sleep 0.5
done

run_lexrun() { # ENDPOINT OUT
  "$lexrun" run workflows/live.lex --no-cache --endpoint "*=$1" --out "$2" \
    --store "$work/store" >/dev/null 2>&1 || [ $? -le 1 ]
}

say "recording the requests of one run through the pass-through proxy"
python3 benches/raw_http_loop.py record "$proxy_port" "$url" "$work/calls.jsonl" &
proxy=$!
for _ in $(seq 1 50); do
  curl -fs "http://127.0.0.1:$proxy_port/health" >/dev/null 2>&1 && break
  sleep 0.1
done
run_lexrun "http://127.0.0.1:$proxy_port" "$work/recorded"
kill "$proxy" && wait "$proxy" 2>/dev/null || true
proxy=
say "$(wc -l <"$work/calls.jsonl") requests recorded; $runs pairs follow"

now() { date +%s.%N; }
secs() { python3 -c "print(f'{$2 - $1:.2f}')"; }
ratios=()
for i in $(seq 1 "$runs"); do
  # Taking turns at going first, so neither always meets the other's prompt cache.
  if [ $((i % 2)) -eq 0 ]; then
    t0=$(now); python3 benches/raw_http_loop.py replay "$work/calls.jsonl" "$url"; t1=$(now)
    raw=$(secs "$t0" "$t1")
  fi
  t0=$(now); run_lexrun "$url" "$work/out-$i"; t1=$(now)
  engine=$(secs "$t0" "$t1")
  if [ $((i % 2)) -eq 1 ]; then
    t0=$(now); python3 benches/raw_http_loop.py replay "$work/calls.jsonl" "$url"; t1=$(now)
    raw=$(secs "$t0" "$t1")
  fi
  r=$(python3 -c "print(f'{$engine / $raw:.4f}')")
  ratios+=("$r")
  echo "pair $i: lexrun $engine s, raw loop $raw s = $r×"
done
median=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{a[NR]=$1} END {m=int((NR+1)/2); printf "%.4f", (NR%2 ? a[m] : (a[m]+a[m+1])/2)}')
echo "engine overhead: lexrun / raw HTTP loop = ${median}× median of $runs pairs (target ≤ 1.02)"
