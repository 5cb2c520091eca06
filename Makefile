# SPDX-License-Identifier: GPL-2.0
#
# mroce developer interface. `make help` lists the targets.

TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))

# The kernel mroce is built for: the one the test VM boots (see scripts/kver.sh).
KVER ?= $(shell $(TOP)/scripts/kver.sh)
KDIR := /lib/modules/$(KVER)/build

# `make vmtest T=mroce_link` runs one selftest; VMARGS passes runner options.
T ?=
VMARGS ?=

.PHONY: help modules clean vmtest vmshell

help:
	@echo "mroce make targets:"
	@echo "  modules   build mroce.ko for KVER=$(KVER) (W=1, fails on any warning)"
	@echo "  vmtest    run the VM selftests (T=<name> for one; logs in build/vm/latest)"
	@echo "  vmshell   boot the test VM with mroce installed and open a shell"
	@echo "  clean     remove build products"

modules:
	@$(TOP)/scripts/build-module.sh $(KVER)

clean:
	-@[ ! -e $(KDIR)/Makefile ] || $(MAKE) -s -C $(KDIR) M=$(TOP) clean
	rm -rf $(TOP)/build

vmtest: modules
	@python3 $(TOP)/selftests/qemu/vmrun.py --kver $(KVER) $(VMARGS) $(T)

vmshell: modules
	@python3 $(TOP)/selftests/qemu/vmrun.py --kver $(KVER) --shell
