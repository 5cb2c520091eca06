#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the insnprof QEMU plugin (scripts/insnprof/insnprof.c) into
# build/insnprof/insnprof.so. QEMU's plugin API header (qemu-plugin.h) is
# not in any Debian binary package: it is taken from the source package of
# the installed qemu-system-x86 (apt-get source --download-only, with a
# deb-src entry for Debian's archive added to /etc/apt/sources.list.d/ if
# apt has none) and only that header is extracted into build/insnprof/,
# once per QEMU version. Prints the plugin's path.
# Usage: build.sh
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/insnprof
src=$top/scripts/insnprof/insnprof.c
so=$out/insnprof.so
mkdir -p "$out"
log() { echo "insnprof-build: $*" >&2; }

ver=$(dpkg-query -W -f '${source:Version}' qemu-system-x86 2> /dev/null) || {
	log "qemu-system-x86 is not installed (make deps)"
	exit 1
}
inc=$out/include-${ver//[:+~]/_}
hdr=$inc/qemu-plugin.h
if [ ! -r "$hdr" ]; then
	log "QEMU $ver: fetching its plugin API header from Debian's source package (once)"
	dl=$out/src
	mkdir -p "$dl"
	if ! (cd "$dl" && apt-get source -q --download-only "qemu=$ver") > "$out/apt-source.log" 2>&1; then
		# no deb-src entry yet: add Debian's (the archive the binary came from)
		f=/etc/apt/sources.list.d/mroce-debian-src.sources
		[ "$(id -u)" -eq 0 ] || { log "not root: cannot add a deb-src entry ($out/apt-source.log)"; exit 1; }
		codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
		cat > "$f" <<-SRC
			Types: deb-src
			URIs: http://deb.debian.org/debian
			Suites: $codename $codename-updates
			Components: main
			Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

			Types: deb-src
			URIs: http://deb.debian.org/debian-security
			Suites: $codename-security
			Components: main
			Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
		SRC
		log "added $f; apt-get update"
		apt-get update -q > "$out/apt-update.log" 2>&1 || { log "apt-get update failed ($out/apt-update.log)"; exit 1; }
		(cd "$dl" && apt-get source -q --download-only "qemu=$ver") > "$out/apt-source.log" 2>&1 || {
			log "apt-get source qemu=$ver failed ($out/apt-source.log)"
			exit 1
		}
	fi
	orig=
	for f in "$dl"/qemu_*.orig.tar.*; do [ -f "$f" ] && orig=$f; done
	[ -n "$orig" ] || { log "no orig tarball in $dl ($out/apt-source.log)"; exit 1; }
	member=$(tar -tf "$orig" | grep '/include/qemu/qemu-plugin\.h$' | head -n1)
	[ -n "$member" ] || {
		log "no include/qemu/qemu-plugin.h in $orig"
		exit 1
	}
	mkdir -p "$inc"
	tar -xOf "$orig" "$member" > "$hdr.tmp" && mv "$hdr.tmp" "$hdr"
	rm -rf "$dl"
fi
if [ ! -e "$so" ] || [ "$src" -nt "$so" ] || [ "$hdr" -nt "$so" ]; then
	cc -O2 -g -fPIC -shared -Wall -Wextra -Werror -Wno-unused-parameter -I"$inc" -o "$so.tmp" "$src" -lpthread
	mv "$so.tmp" "$so"
	log "built $so (QEMU $ver)"
fi
echo "$so"
