#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mroce_smb.sh over rdma_rxe at 0 % loss: shows that the test and the SMB
# Direct module build are right (they pass on the reference) independently
# of mroce.
# vm-prepare: selftests/smb/build.sh
# vm-timeout: 360
DEV_TYPE=rxe exec bash "$(dirname "$0")/mroce_smb.sh"
