# SPDX-License-Identifier: GPL-2.0
"""The CM MAD header as mroce_cm.sh's tools build and read it (ib_mad_hdr:
base_version, mgmt_class, class_version, method, status, class_specific,
tid, attr_id, resv, attr_mod)."""
import struct

MAD_LEN = 256
CM_CLASS = 0x07
METHOD_SEND = 0x03
ATTR_DREQ = 0x0015
_HDR = '>BBBBHH8sHHI'
HDR_LEN = struct.calcsize(_HDR)


def dreq_header(tid):
    """A CM DREQ's MAD header with transaction ID @tid (8 bytes)."""
    return struct.pack(_HDR, 1, CM_CLASS, 2, METHOD_SEND, 0, 0, tid,
                       ATTR_DREQ, 0, 0)


def dreq_tid(mad):
    """The transaction ID of a CM DREQ's MAD, or None if @mad is not one."""
    if len(mad) < HDR_LEN:
        return None
    _, cls, _, method, _, _, tid, attr, _, _ = struct.unpack_from(_HDR, mad)
    if cls != CM_CLASS or method != METHOD_SEND or attr != ATTR_DREQ:
        return None
    return tid
