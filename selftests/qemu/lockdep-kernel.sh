#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (or reuse) the lockdep test kernel: Debian's linux-source-6.1 with
# x86_64_defconfig + kvm_guest.config + selftests/qemu/lockdep.config
# (PROVE_LOCKING, DEBUG_ATOMIC_SLEEP, what the VM and the selftests need).
# Debian's own kernels lack CONFIG_PROVE_LOCKING: there mroce's
# lockdep_assert_held() compile to nothing and no lock-order inversion is
# reported. `make vmtest-lockdep` boots this kernel instead (docs/testing.md).
#
# The kernel lives in a cache outside the repository, shared by every
# clone and keyed on the source tarball and lockdep.config: a second run
# with neither changed only prints the paths. The first build takes
# 20-60 min on 2 cores (niced, and stopped while a `vmrun --perf` run, a
# timed benchmark, holds the host).
#
# Usage: lockdep-kernel.sh [--print]
#   --print   print the paths of a finished build, build nothing (exit 1
#             if there is none for the current lockdep.config)
# Output (stdout, last lines, shell syntax):
#   LOCKDEP_KVER=<release> LOCKDEP_IMAGE=<bzImage> LOCKDEP_MODROOT=<dir>
#   LOCKDEP_KDIR=<build tree for M= builds>
# Environment:
#   MROCE_LOCKDEP_CACHE  cache directory (default /var/cache/mroce-lockdep)
#   MROCE_LOCKDEP_SRC    linux-source tarball (default /usr/src/linux-source-6.1.tar.xz)
#   MROCE_LOCKDEP_JOBS   make -j (default 2)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${MROCE_LOCKDEP_CACHE:-/var/cache/mroce-lockdep}
tarball=${MROCE_LOCKDEP_SRC:-/usr/src/linux-source-6.1.tar.xz}
jobs=${MROCE_LOCKDEP_JOBS:-2}
frag=$here/lockdep.config
print_only=
[ "${1:-}" = --print ] && print_only=1

say() { echo "lockdep-kernel: $(date -u +%H:%M:%S) $*" >&2; }
die() { say "$*"; exit 1; }

[ -f "$tarball" ] || die "no $tarball (apt-get install linux-source-6.1)"
# The key: the source (name, size, mtime) and the config fragment.
key=$( (stat -c '%n %s %Y' "$tarball"; cat "$frag") | sha256sum | cut -c1-12)
obj=$cache/obj-$key
modroot=$cache/mods-$key
done_file=$obj/.mroce-done

report() {
	local kver
	kver=$(cat "$obj/include/config/kernel.release")
	echo "LOCKDEP_KVER=$kver"
	echo "LOCKDEP_IMAGE=$obj/arch/x86/boot/bzImage"
	echo "LOCKDEP_MODROOT=$modroot"
	echo "LOCKDEP_KDIR=$obj"
}

if [ -f "$done_file" ]; then
	report
	exit 0
fi
[ -z "$print_only" ] || die "no finished build for key $key in $cache"

# The packages a kernel build needs beyond the module build's.
missing=
for p in bc flex bison libelf-dev libssl-dev xz-utils; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	say "installing$missing"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing >&2 ||
		die "apt-get install$missing failed"
fi

mkdir -p "$cache"
# One build at a time per cache, whichever clone asks.
exec 8> "$cache/.lock"
if ! flock -n 8; then
	say "another build holds $cache/.lock; waiting"
	flock 8
fi
if [ -f "$done_file" ]; then
	report
	exit 0
fi

src=$cache/src/$(basename "$tarball" .tar.xz)
if [ ! -f "$src/.mroce-extracted" ] || [ "$tarball" -nt "$src/.mroce-extracted" ]; then
	say "extracting $tarball into $cache/src"
	rm -rf "$src"
	mkdir -p "$cache/src"
	tar -C "$cache/src" -xf "$tarball"
	touch "$src/.mroce-extracted"
fi

mkdir -p "$obj"
if [ ! -f "$obj/.mroce-config" ]; then
	say "configuring in $obj"
	make -s -C "$src" O="$obj" x86_64_defconfig >&2
	KCONFIG_CONFIG=$obj/.config "$src/scripts/kconfig/merge_config.sh" -m -O "$obj" \
		"$obj/.config" "$src/kernel/configs/kvm_guest.config" "$frag" >&2
	make -s -C "$src" O="$obj" olddefconfig >&2
	# Every setting of the fragment must have survived olddefconfig (a
	# dependency missing silently drops an option).
	bad=0
	while read -r line; do
		case $line in
		CONFIG_*=*) want=$line ;;
		"# CONFIG_"*" is not set") want=$line ;;
		*) continue ;;
		esac
		name=${want#\# }
		name=${name%%[= ]*}
		got=$(grep -E "^($name=|# $name is not set)" "$obj/.config" || true)
		# An option "not set" may also vanish with its menu.
		if [ "$got" != "$want" ] && ! { [ -z "$got" ] && [ "${want#\#}" != "$want" ]; }; then
			say "config: wanted '$want', got '${got:-nothing}'"
			bad=1
		fi
	done < "$frag"
	[ $bad -eq 0 ] || die "lockdep.config does not apply; fix it"
	touch "$obj/.mroce-config"
fi

# A timed benchmark (`vmrun --perf`: both VM slots) wants a quiet host:
# stop the whole build while one runs. /work/team/vmrun execs flock, so
# its command line is also recognised by the two slot locks it takes.
perf_running() {
	pgrep -f 'vmrun --perf|locks/slot1 flock [^ ]*locks/slot2' > /dev/null
}
watch_perf() {
	local pg=$1 stopped=0
	while kill -0 "$pg" 2> /dev/null; do
		if perf_running; then
			if [ $stopped -eq 0 ]; then
				say "a vmrun --perf run is active: build paused"
				kill -STOP -- "-$pg" 2> /dev/null || true
				stopped=1
			fi
		elif [ $stopped -eq 1 ]; then
			say "the vmrun --perf run ended: build resumed"
			kill -CONT -- "-$pg" 2> /dev/null || true
			stopped=0
		fi
		sleep 5
	done
}

say "building (nice 19, -j$jobs); log $obj/build.log"
t0=$(date +%s)
set -m
nice -n 19 make -C "$src" O="$obj" -j"$jobs" bzImage modules > "$obj/build.log" 2>&1 &
pg=$!
set +m
watch_perf "$pg" &
watcher=$!
trap 'kill -CONT -- "-$pg" 2> /dev/null; kill -- "-$pg" 2> /dev/null; kill "$watcher" 2> /dev/null' INT TERM
rc=0
wait "$pg" || rc=$?
kill "$watcher" 2> /dev/null || true
trap - INT TERM
if [ $rc -ne 0 ]; then
	tail -n 30 "$obj/build.log" >&2
	die "kernel build failed (rc $rc; log $obj/build.log)"
fi
say "built in $(( $(date +%s) - t0 )) s"

rm -rf "$modroot"
make -s -C "$src" O="$obj" INSTALL_MOD_PATH="$modroot" modules_install >&2
kver=$(cat "$obj/include/config/kernel.release")
# modules_install points build/ at the tree it ran from: keep it.
ln -sfn "$obj" "$modroot/lib/modules/$kver/build"
touch "$done_file"
say "done: $kver"
report
