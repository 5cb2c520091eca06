#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Generate drivers/infiniband/sw/mroce/core/vectors/wire_vectors.h.

This script encodes the byte layouts of docs/protocol.md ("Wire format")
independently of the C codec, so the vectors cross-check codec and spec.
Positive vectors carry the expected decoded field values; negative vectors
are mutations of positive ones with the error the decoder must return.
Run it after changing the spec and commit the regenerated header;
`--check` (a ctest) fails while the committed header differs from it.
"""
import argparse
import os
import struct
import sys

VERSION = 1  # docs/protocol.md, "wire v1"

OP = dict(SEND=0x01, SEND_IMM=0x02, SEND_INV=0x03, WRITE=0x04, WRITE_IMM=0x05,
          READ_REQ=0x06, READ_RESP=0x07, ATOMIC_REQ=0x08, ATOMIC_RESP=0x09,
          ACK=0x10, NAK=0x11, PROBE=0x12, CONN_REQ=0x20, CONN_REP=0x21,
          CONN_CLOSE=0x22, UD_SEND=0x30, UD_SEND_IMM=0x31, MAD=0x32)
AR, RETX, SOM, EOM, SE = 0x1, 0x2, 0x4, 0x8, 0x10


def common(op, flags=0, conn=0, pid=0, gen=0, floor=0, psn=0):
    return struct.pack(">BBHIBBBBI", VERSION << 4, OP[op], flags, conn, pid, gen,
                       floor, 0, psn)


def data_hdr(sid, spsn, ssn, off, ts, backlog):
    return struct.pack(">IIIIIHH", sid, spsn, ssn, off, ts, backlog, 0)


def ack_block(pid, gen, cum, sack, echo, delay, ce, rx):
    b = struct.pack(">BBBBI", pid, gen, 0, 0, cum)
    for w in sack:
        b += struct.pack(">Q", w)
    return b + struct.pack(">IIHH", echo, delay, ce, rx)


# Field ids shared with the C header (enum mroce_vf).
FIELDS = ["OPCODE", "FLAGS", "DST_CONN", "PATH_ID", "PATH_GEN", "FLOOR",
          "PATH_PSN", "STREAM_ID", "STREAM_PSN", "SSN", "OFFSET", "TX_TS",
          "BACKLOG", "MSN", "IMM", "VA", "RKEY", "LENGTH", "SWAP", "COMPARE",
          "ORIG", "AOP", "PAYLOAD_LEN", "ACK_HINT", "ACK_CE", "ACK_NBLK",
          "BLK0_PATH", "BLK0_GEN", "BLK0_CUM", "BLK0_SACK0", "BLK0_SACK3",
          "BLK0_ECHO", "BLK0_DELAY", "BLK0_CE", "BLK0_RX", "NAK_CODE",
          "NAK_PATH", "NAK_GEN", "NAK_PSN", "NAK_SID", "NAK_SPSN", "NAK_SSN",
          "NAK_ARG", "HS_SRC", "HS_NONCE", "HS_ECHO", "HS_MTU", "HS_PATHS",
          "HS_CAPS", "HS_RATE", "HS_REASON", "UD_DQPN", "UD_SQPN", "UD_QKEY",
          "UD_PKEY", "UD_IMM", "PROBE_TS", "PROBE_BACKLOG"]


# How each field id is read from a decoded struct mroce_pkt.
ACCESS = {
    "OPCODE": "pkt->c.opcode", "FLAGS": "pkt->c.flags",
    "DST_CONN": "pkt->c.dst_conn", "PATH_ID": "pkt->c.path_id",
    "PATH_GEN": "pkt->c.path_gen", "FLOOR": "pkt->c.floor_delta",
    "PATH_PSN": "pkt->c.path_psn", "STREAM_ID": "pkt->u.d.stream_id",
    "STREAM_PSN": "pkt->u.d.stream_psn", "SSN": "pkt->u.d.ssn",
    "OFFSET": "pkt->u.d.msg_offset", "TX_TS": "pkt->u.d.tx_ts",
    "BACKLOG": "pkt->u.d.backlog", "MSN": "pkt->u.d.msn",
    "IMM": "pkt->u.d.imm", "VA": "pkt->u.d.va", "RKEY": "pkt->u.d.rkey",
    "LENGTH": "pkt->u.d.length", "SWAP": "pkt->u.d.swap_add",
    "COMPARE": "pkt->u.d.compare", "ORIG": "pkt->u.d.orig",
    "AOP": "pkt->u.d.atomic_op", "PAYLOAD_LEN": "pkt->payload_len",
    "ACK_HINT": "pkt->u.ack.rate_hint", "ACK_CE": "pkt->u.ack.conn_ce",
    "ACK_NBLK": "pkt->u.ack.n_blocks", "BLK0_PATH": "blk.path_id",
    "BLK0_GEN": "blk.path_gen", "BLK0_CUM": "blk.cum_psn",
    "BLK0_SACK0": "blk.sack[0]", "BLK0_SACK3": "blk.sack[3]",
    "BLK0_ECHO": "blk.echo_ts", "BLK0_DELAY": "blk.ack_delay",
    "BLK0_CE": "blk.ce_cnt", "BLK0_RX": "blk.rx_cnt",
    "NAK_CODE": "pkt->u.nak.code", "NAK_PATH": "pkt->u.nak.path_id",
    "NAK_GEN": "pkt->u.nak.path_gen", "NAK_PSN": "pkt->u.nak.path_psn",
    "NAK_SID": "pkt->u.nak.stream_id", "NAK_SPSN": "pkt->u.nak.stream_psn",
    "NAK_SSN": "pkt->u.nak.ssn", "NAK_ARG": "pkt->u.nak.arg",
    "HS_SRC": "pkt->u.hs.src_conn", "HS_NONCE": "pkt->u.hs.nonce",
    "HS_ECHO": "pkt->u.hs.echo_nonce", "HS_MTU": "pkt->u.hs.mtu",
    "HS_PATHS": "pkt->u.hs.n_paths", "HS_CAPS": "pkt->u.hs.caps",
    "HS_RATE": "pkt->u.hs.init_rate", "HS_REASON": "pkt->u.hs.reason",
    "UD_DQPN": "pkt->u.ud.dst_qpn", "UD_SQPN": "pkt->u.ud.src_qpn",
    "UD_QKEY": "pkt->u.ud.qkey", "UD_PKEY": "pkt->u.ud.pkey",
    "UD_IMM": "pkt->u.ud.imm", "PROBE_TS": "pkt->u.probe.tx_ts",
    "PROBE_BACKLOG": "pkt->u.probe.backlog",
}


def accessor():
    o = ["/* Value of field @id in a packet (decoded or to encode). */",
         "static inline u64 mroce_wire_vec_get(const struct mroce_pkt *pkt, u8 id)",
         "{",
         "\tstruct mroce_ack_block blk;",
         "",
         "\tmemset(&blk, 0, sizeof(blk));",
         "\tif (pkt->c.opcode == MROCE_OP_ACK && pkt->u.ack.n_blocks) {",
         "\t\tif (pkt->u.ack.raw_blocks)",
         "\t\t\tmroce_ack_block_get(pkt, 0, &blk);",
         "\t\telse if (pkt->u.ack.blocks)",
         "\t\t\tblk = pkt->u.ack.blocks[0];",
         "\t}",
         "\tswitch (id) {"]
    for f in FIELDS:
        o.append("\tcase MROCE_VF_%s:" % f)
        o.append("\t\treturn %s;" % ACCESS[f])
    o += ["\tdefault:", "\t\treturn U64_MAX;", "\t}", "}"]
    return "\n".join(o)


vectors = []   # (name, err, bytes, [(field, value)])


def pos(name, b, fields):
    vectors.append((name, "OK", b, fields))


def data_fields(op, flags, conn, pid, gen, floor, psn, sid, spsn, ssn, off,
                ts, backlog, plen):
    return [("OPCODE", OP[op]), ("FLAGS", flags), ("DST_CONN", conn),
            ("PATH_ID", pid), ("PATH_GEN", gen), ("FLOOR", floor),
            ("PATH_PSN", psn), ("STREAM_ID", sid), ("STREAM_PSN", spsn),
            ("SSN", ssn), ("OFFSET", off), ("TX_TS", ts),
            ("BACKLOG", backlog), ("PAYLOAD_LEN", plen)]


def payload(n, seed):
    return bytes((seed + 7 * i) & 0xff for i in range(n))


# --- data opcodes ---------------------------------------------------------
b = (common("SEND", SOM, 0x00010203, 3, 7, 5, 0x89abcdef) +
     data_hdr(0x000a0b, 0x11223344, 0x55667788, 0, 0x0badf00d, 0x0102) +
     struct.pack(">I", 0x00000009) + payload(8, 1))
pos("send_first", b, data_fields("SEND", SOM, 0x00010203, 3, 7, 5, 0x89abcdef,
                                 0x000a0b, 0x11223344, 0x55667788, 0,
                                 0x0badf00d, 0x0102, 8) + [("MSN", 9)])
SEND_FIRST = b

b = (common("SEND_IMM", EOM | SE | AR, 0x42, 0, 1, 0, 17) +
     data_hdr(0x123456, 0xfffffffe, 3, 4096, 1, 0) +
     struct.pack(">II", 0xffffffff, 0xdeadbeef) + payload(5, 2))
pos("send_imm_last", b, data_fields("SEND_IMM", EOM | SE | AR, 0x42, 0, 1, 0, 17,
                                    0x123456, 0xfffffffe, 3, 4096, 1, 0, 5) +
    [("MSN", 0xffffffff), ("IMM", 0xdeadbeef)])

b = (common("SEND_INV", SOM | EOM, 7, 63, 255, 255, 0) +
     data_hdr(2, 0, 0, 0, 0, 0xffff) + struct.pack(">II", 1, 0x00c0ffee))
pos("send_inv_only_empty", b, data_fields("SEND_INV", SOM | EOM, 7, 63, 255,
                                          255, 0, 2, 0, 0, 0, 0, 0xffff, 0) +
    [("MSN", 1), ("IMM", 0x00c0ffee)])

b = (common("WRITE", RETX, 0x00ffffff, 1, 2, 3, 4) +
     data_hdr(0xffffff, 5, 6, 1024, 7, 8) +
     struct.pack(">QII", 0x00007f0012345000, 0xabcdef01, 4096) + payload(16, 3))
pos("write_middle", b, data_fields("WRITE", RETX, 0x00ffffff, 1, 2, 3, 4,
                                   0xffffff, 5, 6, 1024, 7, 8, 16) +
    [("VA", 0x00007f0012345000), ("RKEY", 0xabcdef01), ("LENGTH", 4096)])
WRITE_MIDDLE = b

b = (common("WRITE_IMM", SOM | EOM | SE, 9, 0, 0, 0, 1) +
     data_hdr(8, 9, 10, 0, 11, 12) +
     struct.pack(">QIIII", 0xfffffffffffffff0, 0x10, 16, 4, 0x01020304) +
     payload(16, 4))
pos("write_imm_only", b, data_fields("WRITE_IMM", SOM | EOM | SE, 9, 0, 0, 0, 1,
                                     8, 9, 10, 0, 11, 12, 16) +
    [("VA", 0xfffffffffffffff0), ("RKEY", 0x10), ("LENGTH", 16), ("MSN", 4),
     ("IMM", 0x01020304)])
WRITE_IMM_ONLY = b

b = (common("READ_REQ", SOM | EOM | AR, 1, 2, 3, 0, 4) +
     data_hdr(5, 6, 7, 0, 8, 0) +
     struct.pack(">QIII", 0x1000, 0x2000, 1 << 20, 3))
pos("read_req", b, data_fields("READ_REQ", SOM | EOM | AR, 1, 2, 3, 0, 4, 5, 6,
                               7, 0, 8, 0, 0) +
    [("VA", 0x1000), ("RKEY", 0x2000), ("LENGTH", 1 << 20), ("MSN", 3)])
READ_REQ = b

b = (common("READ_RESP", EOM, 1, 2, 3, 4, 5) +
     data_hdr(6, 7, 8, 0xfffffff0, 9, 10) + struct.pack(">I", 11) +
     payload(15, 5))
pos("read_resp_last", b, data_fields("READ_RESP", EOM, 1, 2, 3, 4, 5, 6, 7, 8,
                                     0xfffffff0, 9, 10, 15) + [("MSN", 11)])

b = (common("ATOMIC_REQ", SOM | EOM, 3, 0, 0, 0, 9) +
     data_hdr(4, 5, 6, 0, 7, 0) +
     struct.pack(">QQQIIB3x", 0x8000, 0x0102030405060708,
                 0x1112131415161718, 0x77, 2, 0))
pos("atomic_cmp_swp", b, data_fields("ATOMIC_REQ", SOM | EOM, 3, 0, 0, 0, 9, 4,
                                     5, 6, 0, 7, 0, 0) +
    [("VA", 0x8000), ("SWAP", 0x0102030405060708),
     ("COMPARE", 0x1112131415161718), ("RKEY", 0x77), ("MSN", 2),
     ("AOP", 0)])
ATOMIC_REQ = b

b = (common("ATOMIC_REQ", SOM | EOM | RETX, 3, 1, 1, 1, 10) +
     data_hdr(4, 6, 7, 0, 8, 0) +
     struct.pack(">QQQIIB3x", 0x8008, 5, 0, 0x77, 3, 1))
pos("atomic_fetch_add", b, data_fields("ATOMIC_REQ", SOM | EOM | RETX, 3, 1, 1,
                                       1, 10, 4, 6, 7, 0, 8, 0, 0) +
    [("VA", 0x8008), ("SWAP", 5), ("COMPARE", 0), ("RKEY", 0x77),
     ("MSN", 3), ("AOP", 1)])

b = (common("ATOMIC_RESP", SOM | EOM, 3, 2, 2, 2, 11) +
     data_hdr(12, 13, 14, 0, 15, 16) +
     struct.pack(">IIQ", 2, 0, 0xfedcba9876543210))
pos("atomic_resp", b, data_fields("ATOMIC_RESP", SOM | EOM, 3, 2, 2, 2, 11, 12,
                                  13, 14, 0, 15, 16, 0) +
    [("MSN", 2), ("ORIG", 0xfedcba9876543210)])
ATOMIC_RESP = b

# --- control opcodes --------------------------------------------------------
sack = [0x8000000000000001, 0, 0x00ff00ff00ff00ff, 0xffffffffffffffff]
b = (common("ACK", 0, 0x1234) + struct.pack(">IIBBH", 25000, 0x01020304, 2, 0, 0) +
     ack_block(3, 9, 0xfffffff0, sack, 0xcafebabe, 1500, 7, 65535) +
     ack_block(4, 0, 0, [0, 0, 0, 0], 0, 0, 0, 0))
pos("ack_two_blocks", b, [("OPCODE", OP["ACK"]), ("DST_CONN", 0x1234),
                          ("ACK_HINT", 25000), ("ACK_CE", 0x01020304),
                          ("ACK_NBLK", 2), ("BLK0_PATH", 3), ("BLK0_GEN", 9),
                          ("BLK0_CUM", 0xfffffff0),
                          ("BLK0_SACK0", sack[0]), ("BLK0_SACK3", sack[3]),
                          ("BLK0_ECHO", 0xcafebabe), ("BLK0_DELAY", 1500),
                          ("BLK0_CE", 7), ("BLK0_RX", 65535)])
ACK2 = b

# A hint-only ACK: no block, the receiver's rate hint for an idle sender.
b = common("ACK", 0, 0x77) + struct.pack(">IIBBH", 3125, 9, 0, 0, 0)
pos("ack_hint_only", b, [("OPCODE", OP["ACK"]), ("DST_CONN", 0x77),
                         ("ACK_HINT", 3125), ("ACK_CE", 9), ("ACK_NBLK", 0)])

b = common("NAK", 0, 5) + struct.pack(">BBBBIIIII", 0x01, 6, 7, 0, 8, 9, 10,
                                       11, 120)
pos("nak_rnr", b, [("OPCODE", OP["NAK"]), ("DST_CONN", 5), ("NAK_CODE", 1),
                   ("NAK_PATH", 6), ("NAK_GEN", 7), ("NAK_PSN", 8),
                   ("NAK_SID", 9), ("NAK_SPSN", 10), ("NAK_SSN", 11),
                   ("NAK_ARG", 120)])
NAK_RNR = b

b = common("NAK", 0, 0) + struct.pack(">BBBBIIIII", 0x06, 1, 2, 0, 3, 4, 5, 6,
                                       0x00abcdef)
pos("nak_unknown_conn", b, [("OPCODE", OP["NAK"]), ("DST_CONN", 0),
                            ("NAK_CODE", 6), ("NAK_ARG", 0x00abcdef)])

b = common("PROBE", AR, 77, 5, 6, 2, 1000) + struct.pack(">IHH", 0x13572468, 0x1234, 0)
pos("probe", b, [("OPCODE", OP["PROBE"]), ("FLAGS", AR), ("DST_CONN", 77),
                 ("PATH_ID", 5), ("PATH_GEN", 6), ("FLOOR", 2),
                 ("PATH_PSN", 1000), ("PROBE_TS", 0x13572468),
                 ("PROBE_BACKLOG", 0x1234)])
PROBE = b

b = common("CONN_REQ") + struct.pack(">IQQHBBII", 0x00000101, 0x0102030405060708,
                                     0, 4096, 8, 0, 0x1, 10000)
pos("conn_req", b, [("OPCODE", OP["CONN_REQ"]), ("DST_CONN", 0),
                    ("HS_SRC", 0x101), ("HS_NONCE", 0x0102030405060708),
                    ("HS_ECHO", 0), ("HS_MTU", 4096), ("HS_PATHS", 8),
                    ("HS_CAPS", 1), ("HS_RATE", 10000)])
CONN_REQ = b

b = common("CONN_REP", 0, 0x101) + struct.pack(">IQQHBBII", 0x202, 0xaaaa,
                                                0x0102030405060708, 1500, 64,
                                                0, 0xffffffff, 0)
pos("conn_rep", b, [("OPCODE", OP["CONN_REP"]), ("DST_CONN", 0x101),
                    ("HS_SRC", 0x202), ("HS_NONCE", 0xaaaa),
                    ("HS_ECHO", 0x0102030405060708), ("HS_MTU", 1500),
                    ("HS_PATHS", 64), ("HS_CAPS", 0xffffffff), ("HS_RATE", 0)])

b = common("CONN_CLOSE", 0, 0x202) + struct.pack(">IQI", 0x101, 0xbbbb, 3)
pos("conn_close", b, [("OPCODE", OP["CONN_CLOSE"]), ("DST_CONN", 0x202),
                      ("HS_SRC", 0x101), ("HS_NONCE", 0xbbbb),
                      ("HS_REASON", 3)])

b = (common("UD_SEND", SE) + struct.pack(">IIIHH", 0x000100, 0x000200,
                                          0x11111111, 0xffff, 0) + payload(64, 6))
pos("ud_send", b, [("OPCODE", OP["UD_SEND"]), ("FLAGS", SE), ("UD_DQPN", 0x100),
                   ("UD_SQPN", 0x200), ("UD_QKEY", 0x11111111),
                   ("UD_PKEY", 0xffff), ("PAYLOAD_LEN", 64)])
UD_SEND = b

b = (common("UD_SEND_IMM") + struct.pack(">IIIHHI", 2, 3, 4, 0x8001, 0, 0x55aa55aa) +
     payload(1, 7))
pos("ud_send_imm", b, [("OPCODE", OP["UD_SEND_IMM"]), ("UD_DQPN", 2),
                       ("UD_SQPN", 3), ("UD_QKEY", 4), ("UD_PKEY", 0x8001),
                       ("UD_IMM", 0x55aa55aa), ("PAYLOAD_LEN", 1)])

b = (common("MAD") + struct.pack(">IIIHH", 1, 1, 0x80010000, 0xffff, 0) +
     payload(256, 8))
pos("mad", b, [("OPCODE", OP["MAD"]), ("UD_DQPN", 1), ("UD_SQPN", 1),
               ("UD_QKEY", 0x80010000), ("UD_PKEY", 0xffff),
               ("PAYLOAD_LEN", 256)])
MAD = b


# --- negative vectors -------------------------------------------------------
def neg(name, err, b):
    vectors.append((name, err, b, []))


def put(b, off, fmt, val):
    b = bytearray(b)
    struct.pack_into(fmt, b, off, val)
    return bytes(b)


neg("empty", "ETRUNC", b"")
neg("common_truncated", "ETRUNC", SEND_FIRST[:15])
neg("send_header_truncated", "ETRUNC", SEND_FIRST[:43])
neg("version_0", "EVERSION", put(SEND_FIRST, 0, ">B", 0x00))
neg("version_2", "EVERSION", put(SEND_FIRST, 0, ">B", 0x20))
neg("version_reserved_nibble", "ERESERVED",
    put(SEND_FIRST, 0, ">B", VERSION << 4 | 0x01))
neg("common_reserved_byte", "ERESERVED", put(SEND_FIRST, 11, ">B", 1))
neg("unknown_opcode", "EOPCODE", put(SEND_FIRST, 1, ">B", 0x0a))
neg("opcode_ff", "EOPCODE", put(SEND_FIRST, 1, ">B", 0xff))
neg("undefined_flag", "EFLAGS", put(SEND_FIRST, 2, ">H", SOM | 0x0020))
neg("som_without_offset_zero", "EFLAGS", put(SEND_FIRST, 2, ">H", 0))
neg("se_without_eom", "EFLAGS", put(SEND_FIRST, 2, ">H", SOM | SE))
neg("data_conn_zero", "EFIELD", put(SEND_FIRST, 4, ">I", 0))
neg("stream_id_over_24_bits", "ERESERVED", put(SEND_FIRST, 16, ">B", 1))
neg("data_reserved_tail", "ERESERVED", put(SEND_FIRST, 38, ">H", 1))
neg("write_se_not_allowed", "EFLAGS", put(WRITE_MIDDLE, 2, ">H", RETX | SE))
neg("write_beyond_length", "ELENGTH", put(WRITE_MIDDLE, 28, ">I", 4090))
neg("write_eom_missing", "EFLAGS", put(WRITE_MIDDLE, 28, ">I", 4080))
neg("write_eom_early", "EFLAGS", put(WRITE_MIDDLE, 2, ">H", EOM))
neg("write_va_wraps", "ELENGTH", put(WRITE_MIDDLE, 40, ">Q", 0xfffffffffffff001))
neg("write_offset_plus_len_wraps", "ELENGTH", put(WRITE_MIDDLE, 28, ">I", 0xfffffff8))
neg("write_imm_va_wraps", "ELENGTH", put(WRITE_IMM_ONLY, 40, ">Q", 0xfffffffffffffff1))
neg("read_req_with_payload", "ELENGTH", READ_REQ + b"\x00")
neg("read_req_not_solo", "EFLAGS", put(READ_REQ, 2, ">H", SOM))
neg("read_req_offset", "EFLAGS", put(READ_REQ, 28, ">I", 8))
neg("atomic_bad_op", "EFIELD", put(ATOMIC_REQ, 72, ">B", 2))
neg("atomic_reserved", "ERESERVED", put(ATOMIC_REQ, 73, ">B", 1))
neg("atomic_with_payload", "ELENGTH", ATOMIC_REQ + b"\x00" * 8)
neg("atomic_truncated", "ETRUNC", ATOMIC_REQ[:75])
neg("atomic_resp_reserved", "ERESERVED", put(ATOMIC_RESP, 44, ">I", 1))
neg("atomic_resp_not_solo", "EFLAGS", put(ATOMIC_RESP, 2, ">H", EOM))
neg("ack_zero_blocks_but_block_bytes", "ELENGTH", put(ACK2, 24, ">B", 0))
neg("ack_17_blocks", "EBLOCKS", put(ACK2, 24, ">B", 17))
neg("ack_block_count_exceeds_length", "ETRUNC", put(ACK2, 24, ">B", 3))
neg("ack_trailing_bytes", "ELENGTH", ACK2 + b"\x00")
neg("ack_truncated_block", "ETRUNC", ACK2[:-1])
neg("ack_reserved", "ERESERVED", put(ACK2, 25, ">B", 1))
neg("ack_block_reserved", "ERESERVED", put(ACK2, 28 + 52 + 3, ">B", 1))
neg("ack_flags", "EFLAGS", put(ACK2, 2, ">H", AR))
neg("ack_path_fields", "ERESERVED", put(ACK2, 12, ">I", 1))
neg("ack_conn_zero", "EFIELD", put(ACK2, 4, ">I", 0))
neg("ack_block_path_64", "EFIELD", put(ACK2, 28 + 52, ">B", 64))
neg("nak_code_zero", "EFIELD", put(NAK_RNR, 16, ">B", 0))
neg("nak_code_unknown", "EFIELD", put(NAK_RNR, 16, ">B", 0x09))
neg("nak_arg_on_fatal", "EFIELD", put(NAK_RNR, 16, ">B", 0x03))
neg("nak_conn_zero", "EFIELD", put(NAK_RNR, 4, ">I", 0))
neg("nak_unknown_conn_addressed", "EFIELD", put(NAK_RNR, 16, ">B", 0x06))
neg("nak_stale_gen_arg", "EFIELD",
    put(put(NAK_RNR, 16, ">B", 0x08), 36, ">I", 256))
neg("nak_reserved", "ERESERVED", put(NAK_RNR, 19, ">B", 1))
neg("nak_stream_id_over_24_bits", "ERESERVED", put(NAK_RNR, 24, ">B", 1))
neg("nak_trailing", "ELENGTH", NAK_RNR + b"\x00")
neg("nak_path_64", "EFIELD", put(NAK_RNR, 17, ">B", 64))
neg("probe_reserved", "ERESERVED", put(PROBE, 22, ">H", 1))
neg("probe_flag", "EFLAGS", put(PROBE, 2, ">H", EOM))
neg("probe_short", "ETRUNC", PROBE[:20])
neg("probe_path_64", "EFIELD", put(PROBE, 8, ">B", 64))
neg("write_path_255", "EFIELD", put(WRITE_MIDDLE, 8, ">B", 255))
neg("conn_req_addressed", "EFIELD", put(CONN_REQ, 4, ">I", 9))
neg("conn_req_echo", "EFIELD", put(CONN_REQ, 28, ">Q", 1))
neg("conn_req_nonce_zero", "EFIELD", put(CONN_REQ, 20, ">Q", 0))
neg("conn_req_src_zero", "EFIELD", put(CONN_REQ, 16, ">I", 0))
neg("conn_req_mtu_small", "EFIELD", put(CONN_REQ, 36, ">H", 511))
neg("conn_req_paths_zero", "EFIELD", put(CONN_REQ, 38, ">B", 0))
neg("conn_req_paths_65", "EFIELD", put(CONN_REQ, 38, ">B", 65))
neg("conn_req_reserved", "ERESERVED", put(CONN_REQ, 39, ">B", 1))
neg("conn_req_path_fields", "ERESERVED", put(CONN_REQ, 8, ">B", 1))
neg("ud_to_gsi", "EFIELD", put(UD_SEND, 16, ">I", 1))
neg("ud_to_qp0", "EFIELD", put(UD_SEND, 16, ">I", 0))
neg("ud_src_zero", "EFIELD", put(UD_SEND, 20, ">I", 0))
neg("ud_conn", "EFIELD", put(UD_SEND, 4, ">I", 1))
neg("ud_reserved", "ERESERVED", put(UD_SEND, 30, ">H", 1))
neg("ud_qpn_over_24_bits", "ERESERVED", put(UD_SEND, 20, ">B", 1))
neg("mad_short", "ELENGTH", MAD[:-1])
neg("mad_long", "ELENGTH", MAD + b"\x00")
neg("mad_not_gsi", "EFIELD", put(MAD, 19, ">B", 2))
neg("mad_se", "EFLAGS", put(MAD, 2, ">H", SE))


def cbytes(b):
    out = []
    for i in range(0, len(b), 12):
        out.append("\t\t\t" + " ".join("0x%02x," % x for x in b[i:i + 12]))
    return "\n".join(out)


def generate():
    maxlen = max(len(v[2]) for v in vectors)
    maxf = max(len(v[3]) for v in vectors) + 1
    o = []
    o.append("/* SPDX-License-Identifier: GPL-2.0 */")
    o.append("/*")
    o.append(" * Wire format v%d test vectors, generated by" % VERSION)
    o.append(" * userspace/tests/tools/gen_wire_vectors.py from the byte layouts in")
    o.append(" * docs/protocol.md. Do not edit by hand.")
    o.append(" *")
    o.append(" * Shared by the user-space unit tests and the fuzzer seed corpus; plain C")
    o.append(" * tables so an in-module self-test can iterate them too.")
    o.append(" */")
    o.append("#ifndef MROCE_VECTORS_WIRE_H")
    o.append("#define MROCE_VECTORS_WIRE_H")
    o.append("")
    o.append('#include "../mroce_wire.h"')
    o.append("")
    o.append("enum mroce_vf {")
    o.append("\tMROCE_VF_END = 0,")
    for f in FIELDS:
        o.append("\tMROCE_VF_%s," % f)
    o.append("};")
    o.append("")
    o.append("struct mroce_wire_vec_field {")
    o.append("\tu8 id;\t\t/* enum mroce_vf */")
    o.append("\tu64 val;")
    o.append("};")
    o.append("")
    o.append("#define MROCE_WIRE_VEC_MAX_LEN %d" % maxlen)
    o.append("#define MROCE_WIRE_VEC_MAX_FIELDS %d" % maxf)
    o.append("")
    o.append("struct mroce_wire_vec {")
    o.append("\tconst char *name;")
    o.append("\tu8 err;\t\t/* enum mroce_wire_err the decoder returns */")
    o.append("\tu32 len;")
    o.append("\tu8 bytes[MROCE_WIRE_VEC_MAX_LEN];")
    o.append("\tstruct mroce_wire_vec_field f[MROCE_WIRE_VEC_MAX_FIELDS];")
    o.append("};")
    o.append("")
    o.append("static const struct mroce_wire_vec mroce_wire_vectors[] = {")
    for name, err, b, fields in vectors:
        o.append("\t{")
        o.append('\t\t"%s", MROCE_WIRE_%s, %d,' % (name, err, len(b)))
        if b:
            o.append("\t\t{")
            o.append(cbytes(b))
            o.append("\t\t},")
        else:
            o.append("\t\t{ 0 },")
        if fields:
            o.append("\t\t{")
            for f, v in fields:
                assert f in FIELDS, f
                o.append("\t\t\t{ MROCE_VF_%s, 0x%xULL }," % (f, v))
            o.append("\t\t\t{ MROCE_VF_END, 0 },")
            o.append("\t\t},")
        else:
            o.append("\t\t{ { MROCE_VF_END, 0 } },")
        o.append("\t},")
    o.append("};")
    o.append("")
    o.append(accessor())
    o.append("")
    o.append("#define MROCE_WIRE_NR_VECTORS \\")
    o.append("\tMROCE_ARRAY_SIZE(mroce_wire_vectors)")
    o.append("")
    o.append("#endif /* MROCE_VECTORS_WIRE_H */")
    return "\n".join(o) + "\n"


def main():
    top = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                        "..", "..", ".."))
    default = os.path.join(top, "drivers/infiniband/sw/mroce/core/vectors/wire_vectors.h")
    ap = argparse.ArgumentParser(
        description="Generate the wire format test vectors from the layouts of "
                    "docs/protocol.md.")
    ap.add_argument("output", nargs="?", default=default,
                    help="header to write (default: %(default)s)")
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 if OUTPUT differs from what "
                         "would be generated")
    args = ap.parse_args()
    text = generate()
    if args.check:
        try:
            with open(args.output) as fh:
                same = fh.read() == text
        except OSError as e:
            sys.exit("gen_wire_vectors: %s" % e)
        if not same:
            sys.exit("gen_wire_vectors: %s is stale: run %s and commit it"
                     % (args.output, sys.argv[0]))
        return
    with open(args.output, "w") as fh:
        fh.write(text)


if __name__ == "__main__":
    main()
