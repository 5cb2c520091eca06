# SPDX-License-Identifier: GPL-2.0
#
# mroce developer interface. `make help` lists the targets.

TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))

# The kernel mroce is built for: the one the test VM boots (scripts/kver.sh).
# `make install` builds for the running kernel instead when its headers exist.
KVER ?= $(shell $(TOP)/scripts/kver.sh)
INSTALL_KVER ?= $(shell $(TOP)/scripts/kver.sh --host)
KDIR := /lib/modules/$(KVER)/build
KO := $(TOP)/drivers/infiniband/sw/mroce/mroce.ko

# `make vmtest T=mroce_link` runs one selftest; VMARGS passes runner options.
# The guest runs on the emulated HPET, the kernel's own choice under TCG and
# a clock a host snapshot cannot jump; make bench and make demo boot it on
# the TSC (tsc=reliable), the cheap clock real hosts have. MROCE_VM_CLOCK
# (hpet or tsc) overrides either (docs/testing.md).
T ?=
VMARGS ?=
FUZZ_SECONDS ?= 30
DESTDIR ?=

VMRUN := python3 $(TOP)/selftests/qemu/vmrun.py --kver $(KVER)

.PHONY: help deps modules clean install dkms-install unit fuzz style vmtest \
	vmtest-lockdep vmshell check demo bench bench-sim corebench insnprof qemuprof

help:
	@echo "mroce make targets (KVER=$(KVER)):"
	@echo "  deps          install missing Debian packages; check VM kernel == headers"
	@echo "  modules       build mroce.ko (W=1, fails on any warning)"
	@echo "  style         checkpatch.pl --no-tree on every kernel C/H file"
	@echo "  unit          user space with ASan/UBSan, GoogleTest via ctest"
	@echo "  fuzz          fuzzers for FUZZ_SECONDS=$(FUZZ_SECONDS) (userspace/fuzz/run.sh)"
	@echo "  vmtest        VM selftests (T=<name> for one; logs in build/vm/latest;"
	@echo "                MROCE_VM_CLOCK=tsc: guest on the TSC instead of the HPET;"
	@echo "                MROCE_VM_ASLR=on: guest user-space ASLR on, default off)"
	@echo "  vmtest-lockdep  VM selftests (T=...) on a PROVE_LOCKING build of Debian's 6.1 source"
	@echo "                (built once into /var/cache/mroce-lockdep, 20-60 min; not in check)"
	@echo "  vmshell       boot the test VM with mroce installed and open a shell"
	@echo "  check         deps, modules, style, unit, fuzz smoke, vmtest, then 6.12: build + VM smoke"
	@echo "                (MROCE_CHECK_KERNELS=\"\" skips it); 'N passed, N failed'"
	@echo "  demo          boot the VM: two endpoints, an mroce device on each"
	@echo "  bench         VM benchmarks (selftests/bench/*.sh, or BENCH=rdma_bench; BENCH_ROWS, BENCH_ROUNDS,"
	@echo "                BENCH_DRIVERS, BENCH_MROCE_PARAMS, BENCH_LAT_ITERS, BENCH_NVMEOF=0: docs/testing.md); build/bench/"
	@echo "  insnprof      guest kernel instructions per 64 B ib_write_lat round trip by function, rxe vs mroce"
	@echo "                (QEMU plugin, single-threaded TCG; BENCH_MROCE_PARAMS=\"ko=A | ko=B\": two builds;"
	@echo "                docs/testing.md); build/bench/insn_profile.md"
	@echo "  qemuprof      host perf profile of QEMU per 64 B ib_write_lat round trip by category, rxe vs mroce (vmrun --perf)"
	@echo "  bench-sim     simulator benchmarks (userspace/sim/bench.sh)"
	@echo "  corebench     instructions per packet of the core (callgrind; userspace/bench/corebench.sh)"
	@echo "  install       build for $(INSTALL_KVER), install + depmod + modprobe.d (DESTDIR=)"
	@echo "  dkms-install  register the source with DKMS, build and install for KVER"
	@echo "  clean         remove build products"

deps:
	@$(TOP)/scripts/deps.sh

modules:
	@$(TOP)/scripts/build-module.sh $(KVER)

style:
	@$(TOP)/scripts/style.sh

unit:
	@$(TOP)/scripts/unit.sh

fuzz:
	@if [ -x $(TOP)/userspace/fuzz/run.sh ]; then \
		$(TOP)/userspace/fuzz/run.sh $(FUZZ_SECONDS); \
	else \
		echo "fuzz: no fuzzers yet (userspace/fuzz/run.sh)"; \
	fi

vmtest: modules
	@$(VMRUN) $(VMARGS) $(T)

vmtest-lockdep:
	@$(TOP)/scripts/vmtest-lockdep.sh $(VMARGS) $(T)

vmshell: modules
	@$(VMRUN) --shell

check:
	@KVER=$(KVER) FUZZ_SECONDS=$(FUZZ_SECONDS) $(TOP)/scripts/check.sh

demo: deps modules
	@$(VMRUN) --plain --clock $(or $(MROCE_VM_CLOCK),tsc) $(VMARGS) scripts/demo.sh

bench: deps
	@$(TOP)/scripts/bench.sh $(KVER) $(VMARGS)

insnprof: deps
	@$(TOP)/scripts/insnprof/run.sh $(KVER) $(VMARGS)

qemuprof: deps
	@$(TOP)/scripts/qemuprof/run.sh $(KVER) $(VMARGS)

bench-sim:
	@if [ -x $(TOP)/userspace/sim/bench.sh ]; then \
		$(TOP)/userspace/sim/bench.sh; \
	else \
		echo "bench-sim: no simulator yet (userspace/sim/bench.sh)"; \
	fi

corebench:
	@$(TOP)/userspace/bench/corebench.sh

install:
	@$(TOP)/scripts/build-module.sh $(INSTALL_KVER)
	@$(TOP)/scripts/install-module.sh --ko $(KO) --kver $(INSTALL_KVER) \
		$(if $(DESTDIR),--root $(DESTDIR))

dkms-install:
	@$(TOP)/scripts/deps.sh dkms
	@$(TOP)/scripts/dkms-install.sh $(KVER)

clean:
	-@[ ! -e $(KDIR)/Makefile ] || $(MAKE) -s -C $(KDIR) M=$(TOP) clean
	rm -rf $(TOP)/build
