#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side build of the mroce CLI for the VM selftests (selftests/
# mroce_cli.sh declares it with "# vm-prepare:"; vmrun.py runs it before
# booting, because compiling under TCG takes minutes).
#
# An optimized build without sanitizers, of the CLI and its telemetry
# library only, in build/cli-vm: under TCG the ASan binary `make unit`
# builds takes seconds per start, and the selftest runs the CLI a few
# dozen times. (The selftest still runs the sanitized build against live
# traffic once, when `make unit` has built it.) Prints the binary's path.
# Usage: vm-prepare.sh [--kver KVER]   (the kernel version is not needed)
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=$top/build/cli-vm
log=$top/build/cli-prepare.log
mkdir -p "$top/build"

# Configuring again is quick and is a no-op when nothing changed.
cmake -S "$top/userspace" -B "$build" -DCMAKE_BUILD_TYPE=Release \
	-DMROCE_PARTS="cli;telemetry" > "$log" 2>&1 || { cat "$log"; exit 1; }
cmake --build "$build" --target mroce -j "$(nproc)" >> "$log" 2>&1 || { tail -n 40 "$log"; exit 1; }
echo "$build/cli/mroce"
