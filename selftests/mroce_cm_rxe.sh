#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mroce_cm.sh over rdma_rxe at 0 % loss: shows that the test itself is right
# (it passes on the reference) independently of mroce.
# vm-timeout: 300
DEV_TYPE=rxe exec bash "$(dirname "$0")/mroce_cm.sh"
