#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The mroce CLI against the live module: a clear error while the module is
# not loaded; dev show and stats show agree with sysfs and rdma; the
# Prometheus export equals the counters; the BPF programs load and attach
# on this kernel (no module BTF). Then ib_write_bw runs twice (clean; every
# data packet CE-marked and 5 % lost) while path watch, telemetry
# stream, the textfile exporter and the documented bpftrace example
# (selftests/tools/bpf/mroce_events.bt) watch: per-path RTTs, packets,
# ECN marks and losses must be non-zero, plausible and bounded by the hw
# counters of the same run.
# vm-prepare: userspace/cli/vm-prepare.sh
# vm-timeout: 600
. "$(dirname "$0")/lib.sh"
require_root
require_cmd rdma ip tc ss python3 ib_write_bw

# The optimized build vm-prepare makes (an ASan binary starts in seconds
# under TCG); the sanitized one `make unit` builds, when there, runs the
# path telemetry under traffic.
MROCE_CLI=${MROCE_CLI:-$MROCE_REPO/build/cli-vm/cli/mroce}
MROCE_CLI_ASAN=${MROCE_CLI_ASAN:-$MROCE_REPO/build/userspace/cli/mroce}
[ -x "$MROCE_CLI" ] || MROCE_CLI=$MROCE_CLI_ASAN
[ -x "$MROCE_CLI" ] || skip_all "the CLI is not built (userspace/cli/vm-prepare.sh or make unit)"
[ -x "$MROCE_CLI_ASAN" ] || MROCE_CLI_ASAN=$MROCE_CLI
. "$(dirname "$0")/lib_traffic.sh"

cli() { "$MROCE_CLI" "$@"; }
out=$MROCE_TEST_OUT

# py SCRIPT ARGS...: a python3 check reading files given as arguments;
# prints why on failure.
py() { python3 -c "$@"; }

exit_is() { # exit_is CODE CMD...
	local want=$1 rc
	shift
	"$@" > /dev/null 2>&1
	rc=$?
	[ "$rc" -eq "$want" ] || { echo "exit $rc, want $want"; return 1; }
}

# --- without the module ------------------------------------------------------
if mroce_unload; then
	check "dev show without the module: exit 1, says modprobe mroce" \
		fails_with '^mroce: the mroce module is not loaded \(modprobe mroce\)$' cli dev show
	check "path show without the module: exit 1, says modprobe mroce" \
		fails_with 'module is not loaded \(modprobe mroce\)' cli path show -t 0
else
	ktap_skip "errors without the module" "mroce is in use and cannot be unloaded"
fi

mroce_pair_up

# --- devices -----------------------------------------------------------------
cli -j dev show > "$out/dev.json" 2> "$out/dev.err"
check_eq "dev show -j exits 0" 0 $?
rdma -j dev show > "$out/rdma-dev.json"
check "dev show -j: both devices, netdev, ACTIVE, MTU 1024, rdma's index, IPv4 GID" py '
import json, sys
devs = {d["ifname"]: d for d in json.load(open(sys.argv[1]))}
rdma = {d["ifname"]: d["ifindex"] for d in json.load(open(sys.argv[2]))}
assert sorted(devs) == ["mroce_a", "mroce_b"], sorted(devs)
for name, nd in (("mroce_a", "va"), ("mroce_b", "vb")):
    d = devs[name]
    assert d["netdev"] == nd and d["port"] == 1, d
    assert d["state"] == "ACTIVE" and d["physical_state"] == "LinkUp", d
    assert d["active_mtu"] == 1024 and d["max_mtu"] >= 1024, d
    assert d["ifindex"] == rdma[name], (d, rdma)
gids = [g["gid"] for g in devs["mroce_a"]["gids"] if g["type"] == "RoCE v2"]
assert "::ffff:10.0.0.1" in gids and "fd00::1" in gids, gids
' "$out/dev.json" "$out/rdma-dev.json"
check "dev show (text) gives netdev and state" \
	bash -c "'$MROCE_CLI' dev show mroce_b | grep -q '^[0-9]*: mroce_b: netdev vb port 1 state ACTIVE'"
check "dev show of a missing device exits 1" exit_is 1 cli dev show nodev
check "an unknown object exits 2" exit_is 2 cli frobnicate
check "help at every level exits 0" bash -c "for o in '' dev stats path telemetry; do \"$MROCE_CLI\" \$o help > /dev/null || exit 1; done"

# --- counters ----------------------------------------------------------------
sysfs_json() { # every counter of DEV as JSON, straight from sysfs
	(cd "/sys/class/infiniband/$1/ports/1/hw_counters" && grep -H . -- *) | python3 -c '
import json, sys
print(json.dumps({k: int(v) for k, v in (l.strip().split(":", 1) for l in sys.stdin) if k != "lifespan"}))'
}
cli -j stats show mroce_a > "$out/stats.json"
sysfs_json mroce_a > "$out/sysfs.json"
check "stats show -j equals sysfs, every counter" py '
import json, sys
cli = json.load(open(sys.argv[1]))[0]
sysfs = json.load(open(sys.argv[2]))
assert cli.pop("ifname") == "mroce_a" and cli.pop("port") == 1
assert cli == sysfs, set(cli.items()) ^ set(sysfs.items())
assert len(sysfs) >= 40
' "$out/stats.json" "$out/sysfs.json"
check "stats show -d documents every counter" \
	bash -c "! \"$MROCE_CLI\" stats show -d | grep -q 'not documented'"
check "stats show -i 0.2 -n 2 runs two intervals" \
	bash -c "[ \$(\"$MROCE_CLI\" stats show mroce_a -i 0.2 -n 2 | grep -c '^mroce_a/1 over') -eq 2 ]"

cli telemetry export --no-bpf > "$out/export.prom"
check "export --no-bpf: mroce_port_*_total equal sysfs" py '
import json, re, sys
sysfs = json.load(open(sys.argv[2]))
got = {}
for l in open(sys.argv[1]):
    m = re.match(r"mroce_port_(\w+)_total\{device=\"mroce_a\",port=\"1\"\} (\d+)$", l)
    if m:
        got[m.group(1)] = int(m.group(2))
assert got == sysfs, set(got.items()) ^ set(sysfs.items())
' "$out/export.prom" "$out/sysfs.json"
cli telemetry export --no-bpf --textfile "$out/textfile.prom" -n 1
check "export --textfile writes the file atomically (no temporary left)" \
	bash -c "grep -q '^mroce_port_up{device=\"mroce_a\",port=\"1\"} 1$' $out/textfile.prom && ! ls $out/textfile.prom.tmp.* 2> /dev/null"

# --- BPF on this kernel, without traffic ------------------------------------
cli -j path show -t 0.5 > "$out/path-idle.json" 2> "$out/path-idle.err"
rc=$?
check_eq "path show attaches its BPF programs (raw_tp, no module BTF)" "0" "$rc"
[ "$rc" -eq 0 ] || sed 's/^/#   /' "$out/path-idle.err"
check_eq "no traffic, no paths" "[]" "$(cat "$out/path-idle.json")"
check "every mroce tracepoint the CLI reads exists" \
	bash -c "! grep -q 'lacks the tracepoints' $out/path-idle.err"
cli telemetry export > "$out/export-bpf.prom" 2> "$out/export-bpf.err"
check "export with BPF says mroce_exporter_bpf_up 1" grep -qx 'mroce_exporter_bpf_up 1' "$out/export-bpf.prom"

# --- with traffic ------------------------------------------------------------
finish_skip() {
	echo "# SKIP: $1"
	check "kernel log clean" dmesg_clean
	[ "$_ktap_fail" -eq 0 ] || ktap_finish
	exit "$KSFT_SKIP"
}
if ! why=$(transport_ready a mroce_a); then
	finish_skip "$why"
fi

# write_bw TAG ARGS...: ib_write_bw from mroce_a to mroce_b (logs in
# $out/TAG.bw.{client,server}); its output only if it fails.
write_bw() {
	local tag=$1 rc
	shift
	PERFTEST_LOG=$tag.bw mroce_pair_run ib_write_bw "$@" > "$out/$tag.bw.why"
	rc=$?
	[ $rc -eq 0 ] || cat "$out/$tag.bw.why"
	return $rc
}

# stop_bg SIG PID [SECS]: signal a background job, print its exit status
# (or "killed" if it did not stop within SECS, default 30).
stop_bg() {
	kill -"$1" "$2"
	if wait_for "${3:-30}" exited "$2"; then
		wait "$2"
		echo $?
	else
		kill -KILL "$2"
		wait "$2"
		echo killed
	fi
}

lines() { [ -s "$1" ] && wc -l < "$1" || echo 0; }
grew() { [ "$(lines "$1")" -gt "$2" ]; }	# grew FILE LINES
rewritten() { [ "$(stat -c %i "$1" 2> /dev/null)" != "$2" ]; }	# rewritten FILE INODE

# tracefs counts mroce_path_sample events independently of the CLI, to
# tell "the transport emits none" from "the CLI lost them".
tracefs_samples_begin() { mroce_trace_on mroce_path_sample; }
tracefs_samples_end() {
	mroce_trace_off mroce_path_sample
	grep -c 'mroce_path_sample:' "$MROCE_TRACING/trace"
}

# ctr_json DEV: sysfs_json's output from the CLI (checked equal above), which
# starts in a fraction of the time python does under TCG.
ctr_json() { cli -j stats show "$1" | sed 's/^\[{"ifname":"[^"]*","port":[0-9]*,/{/; s/}\]$/}/'; }

# traffic TAG ARGS...: ib_write_bw ARGS while path watch -j (sanitized
# CLI), telemetry stream, the textfile exporter and (clean run) the
# bpftrace example run; all are attached before the traffic starts and
# see one more interval after it. Leaves $out/TAG.{watch,jsonl,prom,bt,
# rc,tracefs} and the counters before and after in TAG-{before,after}.json.
traffic() {
	local tag=$1 wpid spid epid bpid=
	shift
	ctr_json mroce_a > "$out/$tag-before.json"
	ctr_json mroce_b > "$out/$tag-before-b.json"
	tracefs_samples_begin
	"$MROCE_CLI_ASAN" -j path watch dev mroce_a -i 1 > "$out/$tag.watch" 2> "$out/$tag.watch.err" &
	wpid=$!
	# not through cli(): a backgrounded function is a subshell, and the
	# signal would stop the subshell instead of mroce
	"$MROCE_CLI" telemetry stream mroce_a -i 1 > "$out/$tag.jsonl" 2> "$out/$tag.jsonl.err" &
	spid=$!
	"$MROCE_CLI" telemetry export --textfile "$out/$tag.prom" -i 0.5 -t 0 \
		2> "$out/$tag.prom.err" &
	epid=$!
	if [ "$tag" = clean ] && command -v bpftrace > /dev/null; then
		bpftrace "$MROCE_SELFTESTS_DIR/tools/bpf/mroce_events.bt" 300 > "$out/$tag.bt" 2>&1 &
		bpid=$!
		wait_for 60 grep -q 'tracing mroce' "$out/$tag.bt"
	fi
	wait_for 60 test -s "$out/$tag.watch"
	wait_for 60 test -s "$out/$tag.jsonl"
	wait_for 60 test -s "$out/$tag.prom"
	write_bw "$tag" "$@"
	echo $? > "$out/$tag.rc"
	# one more interval each, so the last line has the final values
	local w s
	w=$(lines "$out/$tag.watch") s=$(lines "$out/$tag.jsonl")
	wait_for 30 grew "$out/$tag.watch" "$w"
	wait_for 30 grew "$out/$tag.jsonl" "$s"
	sleep 1		# the exporter writes the final values once more
	stop_bg INT "$wpid" > "$out/$tag.watch.rc"
	stop_bg INT "$spid" > "$out/$tag.jsonl.rc"
	# The exporter's final write falls between these two reads: the
	# connection's linger close (5 s after the last QP) can still move
	# the counters while it runs. It stops without a last write, so wait
	# for two more rewrites (each a new file, renamed over the old one):
	# the second one's read of sysfs began after the first read here.
	ctr_json mroce_a > "$out/$tag-stop.json"
	local ino
	ino=$(stat -c %i "$out/$tag.prom")
	wait_for 10 rewritten "$out/$tag.prom" "$ino"
	ino=$(stat -c %i "$out/$tag.prom")
	wait_for 10 rewritten "$out/$tag.prom" "$ino"
	stop_bg TERM "$epid" > "$out/$tag.prom.rc"
	# bpftrace prints its maps only after SIGINT, and on a loaded host
	# (TCG guest, other VMs) that can take longer than the others' stop
	[ -z "$bpid" ] || stop_bg INT "$bpid" 120 > "$out/$tag.bt.rc"
	tracefs_samples_end > "$out/$tag.tracefs"
	ctr_json mroce_a > "$out/$tag-after.json"
	ctr_json mroce_b > "$out/$tag-after-b.json"
}

# Per path of the last watch interval: RTTs non-zero and below a second,
# min <= smoothed (+4 rttvar), a window; packets and bytes on the paths at
# least what ib_write_bw moved and at most what the device sent.
plausible='
import json, sys
last = json.loads(open(sys.argv[1]).read().splitlines()[-1])
before, after = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
payload = int(sys.argv[4])
conns = [c for c in last["connections"] if c["ifname"] == "mroce_a"]
paths = [p for c in conns for p in c["paths"]]
sampled = [p for p in paths if p["samples"] > 0]
assert sampled, "no path was sampled: %s" % conns
for p in sampled:
    assert 0 < p["srtt_ns"] < 1e9 and 0 < p["min_rtt_ns"] < 1e9, p
    assert p["min_rtt_ns"] <= p["srtt_ns"] + 4 * p["rttvar_ns"] + 1000, p
    assert p["window_bytes"] > 0 and p["inflight_bytes"] >= 0, p
    assert 1024 <= p["sport"] <= 65535 and p["state"] in ("ACTIVE", "SUSPECT", "PROBING", "FAILED"), p
tx = sum(p["tx_pkts"] for p in sampled)
txb = sum(p["tx_bytes"] for p in sampled)
sent = after["sent_pkts"] - before["sent_pkts"]
assert txb >= payload, ("bytes on the paths", txb, "< payload", payload)
assert tx * 1500 >= txb, ("packets", tx, "bytes", txb, "but the netdev MTU is 1500")
assert tx <= sent, ("packets on the paths", tx, "> sent_pkts delta", sent)
print("%d paths carried data; srtt %s us; %d pkts / %d bytes on the paths; sent_pkts +%d" % (
    len([p for p in sampled if p["tx_pkts"]]), sorted(round(p["srtt_ns"] / 1000) for p in sampled), tx, txb, sent))
'

# clean: 50 x 64 KiB (3.3 MB)
traffic clean -s 65536 -n 50
check_eq "ib_write_bw 50 x 64 KiB passes" 0 "$(cat "$out/clean.rc")"
ktap_info "tracefs saw $(cat "$out/clean.tracefs") mroce_path_sample events"
if [ "$(cat "$out/clean.rc")" -ne 0 ]; then
	finish_skip "ib_write_bw does not complete over mroce"
fi
if [ "$(cat "$out/clean.tracefs")" -eq 0 ]; then
	finish_skip "the transport carries traffic but emits no mroce_path_sample"
fi
check_eq "path watch during traffic stops cleanly on SIGINT" 0 "$(cat "$out/clean.watch.rc")"
check_eq "telemetry stream stops cleanly on SIGINT" 0 "$(cat "$out/clean.jsonl.rc")"
check_eq "the exporter stops cleanly on SIGTERM" 0 "$(cat "$out/clean.prom.rc")"
check "path watch: per-path RTT and packets non-zero, plausible, within the hw counters" \
	py "$plausible" "$out/clean.watch" "$out/clean-before.json" "$out/clean-after.json" 3276800
ktap_info "$(py "$plausible" "$out/clean.watch" "$out/clean-before.json" "$out/clean-after.json" 3276800 2>&1 | tail -n 1)"
# (a connection lives as long as QPs use it: each ib_write_bw opens one)
check "path watch: a connection to 10.0.0.2 opened during the run, ESTABLISHED" py '
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1])]
est = [c for d in docs for c in d["connections"]
       if c["peer"] == "10.0.0.2" and c["state"] == "ESTABLISHED" and c["n_paths"] >= 1]
assert est, docs[-1]["connections"]
ev = [e["text"] for d in docs for e in d["events"]]
assert any("ESTABLISHED" in t for t in ev), ev
' "$out/clean.watch"
check "telemetry stream: device rates and per-path rates while the data moved" py '
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1])]
assert all(d["bpf"] and d["module_loaded"] and d["time"].endswith("Z") for d in docs), docs[0]
busy = [d for d in docs if d["devices"][0]["rates"]["sent_pkts"] > 0]
assert busy, [d["devices"] for d in docs]
moved = sum(p["rates"]["tx_pkts"] * d["interval"] for d in docs for c in d["connections"] for p in c["paths"])
assert moved >= 3276800 / 1500, moved
' "$out/clean.jsonl"
# Every counter is a running total: the exporter's final value lies between
# sysfs just before it was stopped and just after (equal when nothing moved).
check "export during traffic: port counters equal sysfs afterwards" py '
import json, re, sys
pre, post = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
got = {m.group(1): int(m.group(2)) for m in re.finditer(
    r"^mroce_port_(\w+)_total\{device=\"mroce_a\",port=\"1\"\} (\d+)$", open(sys.argv[1]).read(), re.M)}
bad = {k: (pre[k], got.get(k), post[k]) for k in post
       if got.get(k) is None or not pre[k] <= got[k] <= post[k]}
assert not bad, bad
' "$out/clean.prom" "$out/clean-stop.json" "$out/clean-after.json"
check "export during traffic: per-path srtt and packets of mroce_a" py '
import re, sys
t = open(sys.argv[1]).read()
srtt = [float(v) for v in re.findall(r"^mroce_path_srtt_seconds\{device=\"mroce_a\",[^}]*\} (\S+)$", t, re.M)]
pk = [int(v) for v in re.findall(r"^mroce_path_sent_packets_total\{device=\"mroce_a\",[^}]*\} (\d+)$", t, re.M)]
assert srtt and all(0 < s < 1 for s in srtt), srtt
assert pk and sum(pk) >= 3276800 / 1500, pk
' "$out/clean.prom"
if [ -s "$out/clean.bt" ]; then
	check "bpftrace example: the connection became ESTABLISHED (2), sRTT histograms per path, a grant" py '
import re, sys
t = open(sys.argv[1]).read()
rc = open(sys.argv[1] + ".rc").read().strip()
assert rc == "0", "bpftrace exit status after SIGINT: %s (\"killed\": no exit within 120 s, so no maps printed)\n%s" % (rc, t)
assert re.search(r"^dev \d+ conn \d+ \(peer conn \d+\): \d -> 2, \d+ paths$", t, re.M), t
assert re.search(r"^@srtt_us\[\d+, \d+, \d+\]:", t, re.M), t
assert sys.argv[2] == "0" or re.search(r"^@grant_mbps\[\d+, \d+\]: [1-9]\d*$", t, re.M), t
' "$out/clean.bt" "$(cat /sys/module/mroce/parameters/rx_mbps 2> /dev/null || echo 0)"
fi

# Impaired: the egress of va marks every mroce data packet Congestion
# Experienced (pedit on the IP ECN bits, then the IP checksum again, in
# clsact) and netem drops 5 % of them. One run for both keeps the test short.
ce_set() {
	nsexec a tc qdisc add dev va clsact &&
	nsexec a tc filter add dev va egress protocol ip u32 \
		match ip protocol 17 0xff match ip dport 61791 0xffff \
		action pedit ex munge ip tos set 3 retain 3 pipe action csum ip
}
ce=1
ce_set 2> "$out/ce.err" || ce=0
netem_set a va loss 5%
traffic impaired -s 65536 -n 30
netem_clear a va
[ $ce -eq 0 ] || nsexec a tc qdisc del dev va clsact
check_eq "ib_write_bw with every packet CE-marked and 5 % lost passes" 0 "$(cat "$out/impaired.rc")"
if [ $ce -eq 1 ]; then
	check "path watch: ECN marks on every path that carried data, within ecn_ce_rcvd" py '
import json, sys
last = json.loads(open(sys.argv[1]).read().splitlines()[-1])
b, a = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
paths = [p for c in last["connections"] if c["ifname"] == "mroce_a" for p in c["paths"] if p["tx_pkts"]]
assert paths, last
assert all(p["ecn_marks"] > 0 for p in paths), [(p["path"], p["ecn_marks"]) for p in paths]
ce = sum(p["ecn_marks"] for p in paths)
rcvd = a["ecn_ce_rcvd"] - b["ecn_ce_rcvd"]
assert 0 < rcvd and ce <= a["ecn_ce_rcvd"], (ce, rcvd)
print("ECN marks per path %s; mroce_b ecn_ce_rcvd +%d" % ([p["ecn_marks"] for p in paths], rcvd))
' "$out/impaired.watch" "$out/impaired-before-b.json" "$out/impaired-after-b.json"
else
	ktap_skip "ECN marks per path" "no tc pedit/csum here: $(head -n 1 "$out/ce.err")"
fi
check "path watch under 5 % loss: losses and retransmissions per path, within retrans_pkts" py '
import json, sys
last = json.loads(open(sys.argv[1]).read().splitlines()[-1])
paths = [p for c in last["connections"] if c["ifname"] == "mroce_a" for p in c["paths"]]
before, after = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
lost = sum(p["lost_pkts"] or 0 for p in paths)
retx = sum(sum(p["retransmits"].values()) for p in paths)
sent = sum(p["retransmits_sent"] for p in paths)
d = after["retrans_pkts"] - before["retrans_pkts"]
# The kernel names the path and reason of every loss it resends.
assert lost > 0 and retx > 0, paths
assert 0 < sent <= d, (sent, d)
print("lost %d on %d paths, resent %d (hw retrans_pkts +%d)" % (
    lost, len([p for p in paths if p["lost_pkts"]]), sent, d))
' "$out/impaired.watch" "$out/impaired-before.json" "$out/impaired-after.json"

# --- two-sender incast: the receiver's rate grant ----------------------------
# mroce_a writes to mroce_b over IPv4 and over IPv6 at once: two connections
# into one receiver, which shares its capacity (module parameter rx_mbps)
# between them and puts each one's grant in every ACK (docs/protocol.md
# §6.4); the senders report it in mroce_cc_update. The out-of-band TCP of
# both runs goes to 10.0.0.2 (one port each); the GID family picks the
# connection. Logs $out/TAG.{client,server}.
incast_bw() { # incast_bw PORT 4|6 TAG
	PERFTEST_PORT=$1 PERFTEST_GID_FAMILY=$2 PERFTEST_LOG=$3 PERFTEST_TIMEOUT=120 \
		mroce_pair_run ib_write_bw -D 5 -s 65536
}
rx_mbps=$(cat /sys/module/mroce/parameters/rx_mbps 2> /dev/null || echo 0)
if [ "$rx_mbps" -gt 0 ]; then
	hints=$(hw_counter mroce_a rate_hints_rcvd)
	# Only grant changes: window updates on every ACK would overrun the buffer.
	mroce_trace_on -f "event == 4" mroce_cc_update
	incast_bw 18530 4 incast4 &
	ipid=$!
	incast_bw 18531 6 incast6
	rc6=$?
	wait $ipid
	rc4=$?
	mroce_trace_off mroce_cc_update
	grep 'mroce_cc_update:' "$MROCE_TRACING/trace" > "$out/incast.cc"
	check_eq "incast: ib_write_bw over IPv4 and IPv6 at once pass" "0 0" "$rc4 $rc6"
	check "incast: ACKs carried a grant (rate_hints_rcvd)" \
		test "$(hw_counter mroce_a rate_hints_rcvd)" -gt "$hints"
	check "incast: both connections granted a share of rx_mbps, at most half of it at a time" py '
import re, sys
dev, cap = sys.argv[2], int(sys.argv[3]) * 972 // 1024  # x util 0.95 (Q10)
grants = {}
for l in open(sys.argv[1]):
    m = re.search(r"dev=(\d+) conn=(\d+) .* hint=(\d+) .* event=hint", l)
    if m and m.group(1) == dev:
        grants.setdefault(m.group(2), []).append(int(m.group(3)))
assert len(grants) >= 2, grants
for c, g in grants.items():
    assert all(0 < h <= cap for h in g), (c, cap, g)
# Each was at or below half while the other was served too (the
# newcomer grant, the water-fill while both sent).
assert all(min(g) <= cap // 2 + 1 for g in grants.values()), (cap, grants)
print("grants (Mbit/s, capacity %d): %s" % (cap, {c: (min(g), max(g), len(g)) for c, g in grants.items()}))
' "$out/incast.cc" "$(rdma dev show mroce_a | sed -n 's/^\([0-9]*\): mroce_a:.*/\1/p')" "$rx_mbps"
else
	ktap_skip "two-sender incast grants" "rate hints are off (rx_mbps=$rx_mbps)"
fi

check "kernel log clean" dmesg_clean
ktap_finish
