# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The start the host-side profile runners share (scripts/insnprof/run.sh,
# scripts/qemuprof/run.sh; make bench's ko= check); source it after setting top (the repository).
#
#   prof_start NAME KVER   sets commit (git describe of the tree), dest
#                          (build/bench, made), t0 (now, epoch s) and run
#                          (build/NAME/run-DATE, made; build/NAME/latest
#                          points at it); builds mroce.ko for KVER
#                          (build/modules.log). Fails, saying so, if the
#                          module did not build.
#   prof_check_kos NAME    every ko=PATH word of BENCH_MROCE_PARAMS names a
#                          readable module file (relative: to the tree) the
#                          VM can see: it shares the host's root, but has
#                          its own /tmp, /run, /root and the like.

# shellcheck disable=SC2154,SC2034 # top: the caller's; commit dest t0 run: for it
prof_start() {
	local name=$1 kver=$2
	commit=$(git -C "$top" describe --always --dirty --abbrev=12 2> /dev/null || echo unknown)
	dest=$top/build/bench
	echo "$name: commit $commit; building mroce.ko for $kver (build/modules.log)"
	"$top/scripts/build-module.sh" "$kver" > /dev/null || {
		echo "$name: the module did not build (build/modules.log)" >&2
		return 1
	}
	run=$top/build/$name/run-$(date +%Y%m%d-%H%M%S)
	mkdir -p "$run" "$dest" || return 1
	ln -sfn "${run##*/}" "$top/build/$name/latest"
	t0=$(date +%s)
}

# shellcheck disable=SC2154 # top: the caller's
prof_check_kos() {
	local w ko
	for w in ${BENCH_MROCE_PARAMS:-}; do
		[[ $w == ko=* ]] || continue
		ko=${w#ko=}
		[[ $ko == /* ]] || ko=$top/$ko
		[ -r "$ko" ] || { echo "$1: $w: no such module file" >&2; return 1; }
		case $ko in
		"$top"/*) ;;
		/tmp/* | /run/* | /var/tmp/* | /root/* | /mnt/* | /media/*)
			echo "$1: $w: the VM cannot see $ko (its own tmpfs there); copy it into the tree, e.g. build/A.ko" >&2
			return 1 ;;
		esac
	done
}
