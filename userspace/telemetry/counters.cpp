// SPDX-License-Identifier: GPL-2.0
#include "counters.h"

namespace mroce {

namespace {
constexpr auto P = CounterUnit::packets;
constexpr auto B = CounterUnit::bytes;
constexpr auto E = CounterUnit::events;
} // namespace

const std::vector<CounterInfo> &counter_catalog()
{
	static const std::vector<CounterInfo> c = {
		{"sent_pkts", "traffic", P, "mroce packets sent, data and control (IP/UDP headers excluded)"},
		{"rcvd_pkts", "traffic", P, "mroce packets received and accepted for processing"},
		{"sent_bytes", "traffic", B, "bytes of mroce packets sent (mroce header and payload)"},
		{"rcvd_bytes", "traffic", B, "bytes of mroce packets received"},
		{"rdma_sends", "traffic", E, "send work requests completed"},
		{"rdma_recvs", "traffic", E, "receive work requests completed"},
		{"send_err", "traffic", P, "packets the IP layer refused to send"},
		{"link_downed", "traffic", E, "times the port went from ACTIVE to DOWN"},
		{"cq_overflow", "traffic", E, "completions lost to a full CQ (the CQ went into error)"},

		{"acks_sent", "reliability", P, "ACK packets sent"},
		{"acks_rcvd", "reliability", P, "ACK packets received"},
		{"naks_sent", "reliability", P, "NAK packets sent, every code (RNR included)"},
		{"naks_rcvd", "reliability", P, "NAK packets received"},
		{"probes_sent", "reliability", P, "PROBE packets sent to test a path"},
		{"retrans_pkts", "reliability", P, "data packets sent again"},
		{"sack_gaps", "reliability", P, "packets declared lost from a gap in a SACK"},
		{"rto_timeouts", "reliability", E, "path retransmission timeouts"},
		{"pto_timeouts", "reliability", E, "probe (tail-loss) timeouts"},
		{"send_rnr_err", "reliability", P, "RNR NAKs sent (no receive WQE posted)"},
		{"rcvd_rnr_err", "reliability", P, "RNR NAKs received"},
		{"retry_exceeded_err", "reliability", E, "QPs moved to error: retry_cnt exhausted"},
		{"retry_rnr_exceeded_err", "reliability", E, "QPs moved to error: rnr_retry exhausted"},
		{"duplicate_request", "reliability", P, "duplicate data packets dropped"},
		{"out_of_window", "reliability", P, "packets beyond the path or stream window"},

		{"ecn_ce_rcvd", "congestion", P, "CE-marked data packets received"},
		{"rate_hints_rcvd", "congestion", P, "ACKs carrying a non-zero receiver rate hint"},
		{"path_rekeys", "congestion", E, "paths moved to a new source port (new generation)"},

		{"conn_opened", "connections", E, "connections established (one per peer, shared by its QPs)"},
		{"conn_failed", "connections", E, "connection handshakes that gave up"},
		{"conn_lost", "connections", E, "connections the peer restarted or closed"},
		{"cm_dreq_resent", "connections", E, "CM disconnect requests the MAD tunnel sent again (no reply yet)"},
		{"cm_dreq_uninsured", "connections", E, "CM disconnect requests the MAD tunnel sent without a copy to resend (it keeps 64 at most)"},
		{"cm_dreq_expired", "connections", E, "CM disconnect requests whose copy the MAD tunnel dropped after its last resend, no reply"},

		{"drop_truncated", "drops", P, "dropped: shorter than its headers"},
		{"drop_bad_version", "drops", P, "dropped: unknown protocol version"},
		{"drop_bad_opcode", "drops", P, "dropped: unknown opcode"},
		{"drop_reserved", "drops", P, "dropped: reserved bits set"},
		{"drop_bad_flags", "drops", P, "dropped: flags invalid for the opcode"},
		{"drop_bad_length", "drops", P, "dropped: length field disagrees with the packet"},
		{"drop_bad_ack_blocks", "drops", P, "dropped: malformed ACK blocks"},
		{"drop_bad_field", "drops", P, "dropped: a field out of its range"},
		{"drop_unknown_conn", "drops", P, "dropped: no connection with that dst_conn"},
		{"drop_wrong_peer", "drops", P, "dropped: dst_conn belongs to another address"},
		{"drop_not_connected", "drops", P, "dropped: connection not established"},
		{"drop_bad_path", "drops", P, "dropped: path id not negotiated"},
		{"drop_stale_gen", "drops", P, "dropped: older path generation"},
		{"drop_unknown_qp", "drops", P, "dropped: no such QP, or not ours to this peer"},
		{"drop_qp_state", "drops", P, "dropped: QP cannot receive (not RTR/RTS)"},
		{"drop_unexpected", "drops", P, "dropped: opcode the QP does not expect now"},
		{"drop_bad_rkey", "drops", P, "refused: no MR, stale key, invalidated or other PD"},
		{"drop_mr_bounds", "drops", P, "refused: range outside the MR"},
		{"drop_access", "drops", P, "refused: MR lacks the remote access right"},
		{"drop_bad_atomic", "drops", P, "refused: atomic misaligned or not supported"},
		{"drop_rq_overflow", "drops", P, "refused: SEND larger than its receive WQE"},
		{"drop_nomem", "drops", P, "dropped: no memory to process the packet"},
		{"drop_rx_queue", "drops", P, "dropped: the receiving CPU's queue was full"},

		{"naks_sent_rnr", "naks", P, "NAKs sent: RNR (no receive WQE posted)"},
		{"naks_sent_invalid_request", "naks", P, "NAKs sent: INVALID_REQUEST"},
		{"naks_sent_remote_access", "naks", P, "NAKs sent: REMOTE_ACCESS (rkey, bounds or rights)"},
		{"naks_sent_remote_op", "naks", P, "NAKs sent: REMOTE_OP (SEND larger than its receive WQE)"},
		{"naks_sent_stream_psn_window", "naks", P, "NAKs sent: STREAM_PSN_WINDOW (beyond the stream window)"},
		{"naks_sent_unknown_conn", "naks", P, "NAKs sent: UNKNOWN_CONN (no such connection)"},
		{"naks_sent_unknown_stream", "naks", P, "NAKs sent: UNKNOWN_STREAM (no such QP on the connection)"},
		{"naks_sent_stale_gen", "naks", P, "NAKs sent: STALE_GEN (older path generation)"},
		{"naks_rcvd_rnr", "naks", P, "NAKs received: RNR (no receive WQE posted)"},
		{"naks_rcvd_invalid_request", "naks", P, "NAKs received: INVALID_REQUEST"},
		{"naks_rcvd_remote_access", "naks", P, "NAKs received: REMOTE_ACCESS (rkey, bounds or rights)"},
		{"naks_rcvd_remote_op", "naks", P, "NAKs received: REMOTE_OP (SEND larger than its receive WQE)"},
		{"naks_rcvd_stream_psn_window", "naks", P, "NAKs received: STREAM_PSN_WINDOW (beyond the stream window)"},
		{"naks_rcvd_unknown_conn", "naks", P, "NAKs received: UNKNOWN_CONN (no such connection)"},
		{"naks_rcvd_unknown_stream", "naks", P, "NAKs received: UNKNOWN_STREAM (no such QP on the connection)"},
		{"naks_rcvd_stale_gen", "naks", P, "NAKs received: STALE_GEN (older path generation)"},
	};
	return c;
}

const CounterInfo *counter_info(std::string_view name)
{
	for (const auto &c : counter_catalog())
		if (c.name == name)
			return &c;
	return nullptr;
}

} // namespace mroce
