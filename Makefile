# SPDX-License-Identifier: GPL-2.0
#
# mroce developer interface. `make help` lists the targets.

TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))

# The kernel mroce is built for: the one the test VM boots (see scripts/kver.sh).
KVER ?= $(shell $(TOP)/scripts/kver.sh)
KDIR := /lib/modules/$(KVER)/build

.PHONY: help modules clean

help:
	@echo "mroce make targets:"
	@echo "  modules   build mroce.ko for KVER=$(KVER) (W=1, fails on any warning)"
	@echo "  clean     remove build products"

modules:
	@$(TOP)/scripts/build-module.sh $(KVER)

clean:
	-@[ ! -e $(KDIR)/Makefile ] || $(MAKE) -s -C $(KDIR) M=$(TOP) clean
	rm -rf $(TOP)/build
