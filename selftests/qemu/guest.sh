#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Stage 2 of the test VM: PID 1 in the (read-only) host root. Makes the
# system usable (pseudo filesystems, overlays over /lib/modules and /etc so
# the fresh mroce.ko can be installed like `make install` does), runs the
# selftests listed in $MROCE_OUT/plan one after another and powers off.
#
# Each test is framed in the kernel log by
#   mroce-selftests: begin <name> timeout=<s>
#   mroce-selftests: end <name> rc=<rc> secs=<s>
# which the host runner (vmrun.py) reads from the console to time tests out,
# attribute kernel-log problems to the test that caused them and carry on in
# a new boot after a crash.
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C LC_ALL=C TERM=dumb

kmsg() { echo "mroce-selftests: $*" > /dev/kmsg; }
die() {
	kmsg "fatal: $*"
	dmesg > "$MROCE_OUT/dmesg.txt" 2>/dev/null
	poweroff -f
}

mkdir -p /dev/pts /dev/shm
mount -t devpts -o newinstance,ptmxmode=0666 devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing
# Enabling or disabling any trace event would otherwise (un)register the
# scheduler's comm-recording probes, live-patching __schedule() while the
# other vCPU runs it; under TCG that patch once livelocked (RCU stall in
# text_poke_bp, CI of e37cfb6). No test reads recorded comms.
echo 0 > /sys/kernel/tracing/options/record-cmd
mount -t bpf bpf /sys/fs/bpf
mount -t cgroup2 cgroup2 /sys/fs/cgroup
hostname mroce-vm
ip link set lo up

# Writable views of read-only host directories: the lower layer is the
# host's copy, changes go to tmpfs and vanish at power-off.
modprobe ${MROCE_MODROOT:+-d "$MROCE_MODROOT"} overlay || die "modprobe overlay failed"
for dir in /lib/modules /etc; do
	ovl=/run/ovl$dir
	mkdir -p "$ovl/upper" "$ovl/work"
	mount -t overlay overlay \
		-o "lowerdir=$dir,upperdir=$ovl/upper,workdir=$ovl/work" "$dir" ||
		die "overlay on $dir failed"
done

kver=$(uname -r)
export MROCE_KVER=$kver
# A kernel of our own (vmrun.py --modroot: the lockdep kernel) keeps its
# modules outside /lib/modules: give them the same writable view there.
if [ -n "${MROCE_MODROOT:-}" ]; then
	ovl=/run/ovl/modroot
	mkdir -p "$ovl/upper" "$ovl/work" "/lib/modules/$kver"
	mount -t overlay overlay \
		-o "lowerdir=$MROCE_MODROOT/lib/modules/$kver,upperdir=$ovl/upper,workdir=$ovl/work" \
		"/lib/modules/$kver" || die "overlay of $MROCE_MODROOT on /lib/modules/$kver failed"
fi
modprobe -q configfs && mount -t configfs configfs /sys/kernel/config
# The module under test: vmrun.py passes its path (--ko) on the command line.
export MROCE_KO=${MROCE_KO:-$MROCE_REPO/drivers/infiniband/sw/mroce/mroce.ko}
# The host ran scripts/install-module.sh into this staging root (depmod
# reads every module, far too slow through 9p); install its result.
# A compressed module (--ko of a DKMS install, mroce.ko.xz) keeps its suffix.
stage=$MROCE_REPO/build/vm/install-$kver
staged=mroce.ko${MROCE_KO##*.ko}
[ -f "$stage/lib/modules/$kver/updates/$staged" ] || die "no staged install in $stage"
cp -r "$stage/lib/modules/$kver/updates" "/lib/modules/$kver/" &&
	cp "$stage/lib/modules/$kver"/modules.* "/lib/modules/$kver/" &&
	cp -r "$stage/etc/modprobe.d" /etc/ || die "installing $staged failed"
cmp -s "$stage/lib/modules/$kver/updates/$staged" "$MROCE_KO" ||
	die "staged $staged differs from $MROCE_KO"

# Undo whatever a test left behind so the next one starts clean. The VM has
# no NIC, so every net device other than lo was made by a test.
reset_system() {
	local dev

	for dev in /sys/class/infiniband/*; do
		[ -e "$dev" ] && rdma link delete "${dev##*/}" 2>/dev/null
	done
	ip -all netns delete 2>/dev/null
	for dev in $(ip -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }'); do
		[ "$dev" = lo ] || ip link delete "$dev" 2>/dev/null
	done
	rmmod mroce 2>/dev/null
	rmmod rdma_rxe 2>/dev/null
}

if [ -n "${MROCE_SHELL:-}" ]; then
	echo "mroce VM: mroce.ko is installed (modprobe mroce); exit the shell to power off"
	setsid -c bash -l < /dev/ttyS0 > /dev/ttyS0 2>&1
	poweroff -f
fi

# BENCH_* variables of the host's environment (vmrun.py writes them).
[ -f "$MROCE_OUT/env" ] && . "$MROCE_OUT/env"

# The clocksource the tests run on (vmrun.py --clock): the kernel's choice
# at boot, which make bench's headline names.
clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)
echo "$clocksource" > "$MROCE_OUT/clocksource"
# User-space address randomisation (vmrun.py --aslr): 0 off, 2 on.
aslr=$(cat /proc/sys/kernel/randomize_va_space)
echo "$aslr" > "$MROCE_OUT/randomize_va_space"
kmsg "start kver=$kver clocksource=$clocksource randomize_va_space=$aslr"
# Plan lines: <name> <timeout> <script path relative to the repository>
while read -r name timeout script; do
	[ -n "$name" ] || continue
	log=$MROCE_OUT/$name.log
	mkdir -p "$MROCE_OUT/$name"
	kmsg "begin $name timeout=$timeout"
	start=$(date +%s)
	(
		cd "$(dirname "$MROCE_REPO/$script")" &&
		MROCE_TEST_OUT=$MROCE_OUT/$name \
		timeout -k 5 "$timeout" bash "$MROCE_REPO/$script"
	) > "$log" 2>&1 < /dev/null
	rc=$?
	# Killed at its timeout: the stacks of the tasks still blocked say
	# where it hung (vmrun.py shows them with the test's result).
	[ $rc -eq 124 ] && echo w > /proc/sysrq-trigger
	reset_system
	kmsg "end $name rc=$rc secs=$(( $(date +%s) - start ))"
done < "$MROCE_OUT/plan"
kmsg "done"

dmesg > "$MROCE_OUT/dmesg.txt"
sync
poweroff -f
