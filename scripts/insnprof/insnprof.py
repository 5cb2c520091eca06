#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Guest kernel instructions per round trip, by function, from insnprof snapshots.

Input: the directory selftests/bench/insn_profile.sh filled in the guest:
for each column COL (rxe, mroce, mroce2, ...) COL-0.snap .. COL-W.snap (the
insnprof plugin's counters: "vaddr n_insns executions" per translated
kernel block), COL.kallsyms (the guest's /proc/kallsyms while that driver
was loaded) and COL.meta. Each window is the difference of two successive
snapshots; a block's instructions are its executions x its length, and it
belongs to the symbol its start address falls in. The round trips in a
window are the calls of ib_uverbs_post_send in it (the executions of the
blocks that start at its address) / 2: ib_write_lat's client and server
post one RDMA WRITE each per round trip, each through the rxe provider's
doorbell (a write() to the uverbs device), for rxe and mroce alike.

Output (markdown, stdout): per column the kernel (and user-space)
instructions per round trip, window by window and in all; the groups
(driver module, RDMA core, network stack, skb and memory, syscall entry,
timers and clock, locking, irq/softirq/scheduler, other) side by side;
the functions side by side with the difference of each column from the
first (mroce - rxe), sorted by size; and each column's top functions
with their calls per round trip. With snapshots of the session-40 plugin
(rows "vaddr n_insns executions loads stores end atomics wrmsr tsc io
sys"), also the TCG cost proxies per round trip: blocks executed, memory
loads and stores, block ends by kind (TB lookups: ret, indirect, direct
to another page), helper instructions, by group and by function, and the
calls of rare but costly events (EVENTS). With snapshots of the plugin
run with phases= (session 41: rows with four more columns, the block's
runs outside a half and in phases A, C1, C2 of a half round trip on the
vCPU that ran it, and "h" lines, one per half that ended), the phases:
per half the medians and means of each phase's instructions and blocks
and the means of its cost proxies, side by side, per vCPU, every block by
phase, and per phase the functions with the largest differences. With
snapshots of the plugin run with jc=1 (session 43: "jk", "jp", "jx" lines,
counts since the previous snapshot), the simulated TB jump cache: lookups
and misses per round trip by kind, by the regions of the missed pc and of
the pc that evicted it, and the top conflicting pairs.

Usage: insnprof.py [--top N] [--phase-top N] [--base COL] DIR
"""

import argparse
import bisect
import glob
import os
import re
import statistics
import sys

KERNEL_START = 0xffff800000000000
USER = "(user space)"

# Groups of kernel functions, first match wins. Module symbols go by their
# module first (MODULE_GROUPS); the rest by name.
MODULE_GROUPS = {
    "mroce": "mroce module",
    "rdma_rxe": "rxe module",
    "ib_uverbs": "RDMA core (ib_uverbs, ib_core)",
    "ib_core": "RDMA core (ib_uverbs, ib_core)",
    "veth": "net stack (udp/ip/dev/veth)",
    "ip6_udp_tunnel": "net stack (udp/ip/dev/veth)",
    "udp_tunnel": "net stack (udp/ip/dev/veth)",
}
NAME_GROUPS = [
    ("crc32 (ICRC)", r"(^crc32|^__crc32|^crypto_shash|^crypto_|^shash_|^chksum_)"),
    ("memset/memcpy", r"(^memset|^memcpy|^memmove|^__memset|^__memcpy|^__memmove|^copy_mc_|"
     r"^clear_page|^memdup_user|^memcmp|^__memcmp)"),
    ("mm (page faults, exec)", r"(^handle_mm_fault|^__handle_mm_fault|^do_user_addr_fault|"
     r"^exc_page_fault|^filemap_|^unmap_|^do_set_pte|^page_remove_rmap|^page_add_|^next_uptodate|"
     r"^mtree_|^mas_|^mt_|^folio_|^__folio|^lru_|^release_pages|^zap_|^do_anonymous|^do_wp_page|"
     r"^wp_page|^copy_page|^copy_pte|^__pte|^pte_|^pmd_|^__pmd|^vma_|^__vma|^mmap_|^do_mmap|"
     r"^free_pgtables|^tlb_|^flush_tlb|^native_flush_tlb|^exit_mmap|^dup_mm|^copy_process|"
     r"^link_path_walk|^step_into|^path_|^walk_component|^lookup_fast|^d_alloc|^__d_lookup|"
     r"^chacha|^get_random|^_get_random|^crng_|^load_elf|^bprm_|^do_execve|^begin_new_exec)"),
    ("syscall entry/exit, vfs", r"^(entry_SYSCALL|do_syscall_64|syscall_|exit_to_user_mode|"
     r"__x64_sys_|ksys_|vfs_|__fdget|fdget|__fget|fput|__fput|rw_verify_area|security_file_|"
     r"apparmor_file_|aa_file_perm|fsnotify|__fsnotify|__check_object_size|check_stack_object|"
     r"__virt_addr_valid|_copy_from_user|_copy_to_user|copy_user_|rep_movs_alternative|"
     r"__put_user|__get_user|restore_regs_and_return|entry_|irqentry_exit_to_user|"
     r"fpregs_|switch_fpu|__rseq|rseq_)"),
    ("timers and clock", r"(hrtimer|^__?run_timers|_timer|^timer|^tick_|^clockevents|^ktime_|"
     r"read_tsc|^lapic_next|^native_sched_clock|^sched_clock|^update_process_times|"
     r"^update_wall_time|^timekeeping_|^jiffies|^calc_global_load|^account_process_tick|"
     r"^irqtime_|^hpet_|^native_apic_|^clockevent|^do_timer|^update_vsyscall|^update_fast_timekeeper)"),
    ("locking", r"(^_raw_|^queued_|^__raw_|spin_lock|spin_unlock|^mutex_|^__mutex|^down_|^up_|"
     r"^up$|^down$|^rcu_read_|^__rcu_read_|^__local_bh_disable|^_local_bh_enable|^refcount_|"
     r"^osq_|^rwsem_|^percpu_counter|^__local_bh_enable_ip|^local_bh_)"),
    ("skb and memory alloc/free", r"(alloc_skb|^__kfree_skb|^kfree_skb|^consume_skb|^skb_release|"
     r"^skb_free|^__skb_free|^__build_skb|^build_skb|^napi_skb_cache|^__napi_alloc|^kmem_cache_|"
     r"^__kmem_cache|^kmalloc|^__kmalloc|^kfree|^__kfree|^___slab|^__slab|^slab_|^kmalloc_|"
     r"^kmalloc_reserve|^page_frag|^__page_frag|^skb_clone|^__skb_clone|^__copy_skb_header|"
     r"^pskb_expand_head|^skb_head_|^memcg_|^mod_objcg|^obj_cgroup|^__memcg|^get_obj_cgroup|"
     r"^refill_obj_stock|^consume_obj_stock|^free_unref|^__free_pages|^get_page_from_freelist|"
     r"^__alloc_pages|^rmqueue|^skb_attempt_defer_free|^napi_consume_skb|^__napi_kfree_skb|"
     r"^kfree_skbmem|^skb_defer)"),
    ("net stack (udp/ip/dev/veth)", r"(^ip_|^ip6_|^__ip|^udp|^__udp|^udp4_|^udp6_|^dev_|^__dev_|"
     r"^netif_|^__netif_|^net_rx_action|^__napi|^napi_|^process_backlog|^sch_|^qdisc|^__qdisc|"
     r"^pfifo|^validate_xmit|^skb_|^__skb|^neigh_|^__neigh|^fib_|^__fib|^dst_|^rt_|^ipv4_|"
     r"^ipv6_|^nf_|^__nf_|^inet_|^__inet|^sk_|^__sk_|^sock_|^__sock|^eth_|^csum_|^__csum|"
     r"^veth_|^rps_|^enqueue_to_backlog|^netdev_|^__netdev|^__ipv6|^icmp|^raw_local_deliver|"
     r"^ip_route|^l3mdev|^lwtunnel|^xfrm|^__xfrm|^nexthop|^gro_|^__gro|^tcp_|^__tcp|^bpf_|"
     r"^do_csum|^csum_partial|^__dst|^dst|^net_|^__net|^flow_|^__flow|^rtnl_|^tc_|^tcf_|"
     r"^__dev_queue_xmit|^siphash|^compute_score|^fib4_|^fib6_|^apparmor_ip|^selinux_ip|"
     r"^security_sock|^security_sk)"),
    ("irq/softirq/scheduler", r"(softirq|^irq_|^__irq|^asm_|^sysvec_|^__sysvec|^do_IRQ|^common_interrupt|"
     r"^handle_|^schedule|^__schedule|^try_to_wake_up|^ttwu_|^wake_up|^__wake_up|^enqueue_|"
     r"^dequeue_|^pick_next|_fair$|^update_curr|^update_load|^update_cfs|^update_rq|^resched|"
     r"^set_next|^put_prev|^check_preempt|^finish_task_switch|^__switch_to|^switch_mm|"
     r"^native_|^raise_softirq|^__raise|^tasklet|^ksoftirqd|^run_ksoftirqd|^smpboot_|"
     r"^kthread|^preempt_|^__cond_resched|^_cond_resched|^rcu_|^__rcu|^note_gp|^account_|"
     r"^cpuacct|^cgroup_rstat|^sched_|^task_tick|^perf_event_task|^reweight|^psi_|^__update|"
     r"^activate_task|^select_task_rq|^ttwu|^x2apic|^__x2apic|^default_send_IPI|^flush_smp|"
     r"^generic_smp|^__flush_smp|^llist_|^idle|^do_idle|^cpuidle|^default_idle|^arch_cpu_idle|"
     r"^cpu_startup|^call_cpuidle|^menu_|^nohz|^__do_softirq|^do_softirq|^irqentry|"
     r"^cpus_share|^available_idle|^newidle|^update_blocked|^__calc_delta|^place_entity|"
     r"^hrtick|^wakeup_preempt|^__enqueue|^__dequeue|^set_task_cpu|^migrate_|^__migrate|"
     r"^load_balance|^rebalance|^find_busiest|^kick_|^__kick|^nr_iowait|^irqtime|^vtime|"
     r"^error_entry|^sync_regs|^trigger_load_balance|^update_sd_lb|^update_rt_rq|^update_dl_rq|"
     r"^update_min_vruntime|^acct_account|^amd_clear_divider|^rb_|^x64_sys_call)"),
]
NAME_RES = [(g, re.compile(p)) for g, p in NAME_GROUPS]
GROUP_ORDER = ["mroce module", "rxe module", "RDMA core (ib_uverbs, ib_core)",
               "crc32 (ICRC)", "memset/memcpy",
               "net stack (udp/ip/dev/veth)", "skb and memory alloc/free",
               "syscall entry/exit, vfs", "timers and clock", "locking",
               "irq/softirq/scheduler", "mm (page faults, exec)", "other kernel"]
POST = "ib_uverbs_post_send"
SPIN = "native_queued_spin_lock_slowpath"
TIME_GROUPS = ("timers and clock", "irq/softirq/scheduler")


def group_of(name, module):
    if module in MODULE_GROUPS:
        return MODULE_GROUPS[module]
    for g, r in NAME_RES:
        if r.search(name):
            return g
    return "other kernel"


class Syms:
    """A /proc/kallsyms: the text symbols, sorted; lookup by address."""

    def __init__(self, path):
        syms = {}
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) < 3 or parts[1] not in "tTwW":
                    continue
                addr = int(parts[0], 16)
                if addr < KERNEL_START:
                    continue
                mod = parts[3].strip("[]") if len(parts) > 3 else ""
                # the first name at an address wins (aliases)
                syms.setdefault(addr, (parts[2], mod))
        self.addrs = sorted(syms)
        self.syms = [syms[a] for a in self.addrs]
        self.by_name = {}
        for a, (n, m) in zip(self.addrs, self.syms):
            self.by_name.setdefault(n, a)
        if not self.addrs:
            raise SystemExit(f"insnprof: no kernel addresses in {path} (kptr_restrict?)")

    def lookup(self, addr):
        """(name, module, start) of the symbol addr falls in."""
        i = bisect.bisect_right(self.addrs, addr) - 1
        if i < 0:
            return ("(below kallsyms)", "", 0)
        n, m = self.syms[i]
        return (n, m, self.addrs[i])


# How a block ends (the plugin's enum end_kind): what TCG does to find the
# next block. Chained: a direct jump within the block's page, patched to
# jump straight on; the others look the next block up (lookup_tb_ptr: a
# hash of the guest pc), or leave the block for the main loop (OTHER).
ENDS = ("other", "chain", "xjcc", "xpage", "indirect", "ret")
LOOKUP_ENDS = ("xpage", "indirect", "ret")
# The cost proxies of a block, counted per executed block: COST[0:2] from
# the plugin's runtime counters, the rest its static counts x executions.
COST = ("blocks", "loads", "stores") + tuple("end_" + e for e in ENDS) + (
    "atomics", "wrmsr", "tsc", "io", "sys")


# The phases of a half round trip on one vCPU (the plugin's phases=, session
# 41): outside a half, A (post -> the copy into the peer's MR), C1 (the
# copy -> the completion posted), C2 (the completion -> the return to user).
PHASES = ("out", "A", "C1", "C2")
PHASE_LABELS = {
    "out": "outside a half (the syscall up to the post, interrupts and timers while polling)",
    "A": "A: post -> the copy into the peer's MR",
    "C1": "C1: the copy -> the completion posted",
    "C2": "C2: the completion -> the return to user",
}
# A half's values per phase (A, C1, C2), as the plugin's "h" lines give them
# (mem: x 16 there); and its flags.
HV = ("insns", "blocks", "mem", "lookups", "atomics", "tsc")
# A function's values per phase: those, and its calls (runs of its entry block).
PHASE_VALS = HV + ("calls",)
HF_COPY, HF_CQE, HF_RET, HF_CUT = 1, 2, 4, 8
MARK_KINDS = ("", "post", "copy", "cqe", "end", "gate")


class Snap:
    """One snapshot: counts {(vaddr, n_insns): executions}, head (header
    dict), ext {(vaddr, n_insns): (loads, stores, end, atomics, wrmsr, tsc,
    io, sys)} (empty before session 40's plugin), ph {(vaddr, n_insns):
    (out, A, C1, C2) executions} and halves [(vcpu, flags, {phase:
    {value: n}})] (empty without the plugin's phases=), markers [(kind,
    vaddr, gated, name)]."""

    @property
    def has_jc(self):
        return "jc_flushes" in self.head

    def __init__(self, path):
        self.counts, self.head, self.ext, self.ph = {}, {}, {}, {}
        self.halves, self.markers = [], []
        # jc=1 (the jump-cache simulation): counts since the previous snapshot
        self.jk = {}   # (kind, prev_user, user) -> [lookups, misses]
        self.jp = {}   # pc -> [lookups, misses]
        self.jx = {}   # (pc, evicted_by) -> misses
        with open(path) as f:
            for line in f:
                if line.startswith("#"):
                    parts = line[1:].split()
                    if len(parts) == 2:
                        self.head[parts[0]] = parts[1]
                    elif len(parts) == 5 and parts[0] == "marker":
                        self.markers.append((MARK_KINDS[int(parts[2])], int(parts[1], 16),
                                             parts[3] == "1", parts[4]))
                    continue
                parts = line.split()
                if parts[0] == "jk":
                    self.jk[(parts[1], int(parts[2]), int(parts[3]))] = [int(parts[4]),
                                                                        int(parts[5])]
                    continue
                if parts[0] == "jp":
                    self.jp[int(parts[1], 16)] = [int(parts[2]), int(parts[3])]
                    continue
                if parts[0] == "jx":
                    self.jx[(int(parts[1], 16), int(parts[2], 16))] = int(parts[3])
                    continue
                if parts[0] == "h":
                    v = [int(x) for x in parts[3:]]
                    n = len(HV)
                    vals = {ph: {h: v[i * n + j] / (16 if h == "mem" else 1)
                                 for j, h in enumerate(HV)}
                            for i, ph in enumerate(PHASES[1:])}
                    self.halves.append((int(parts[1]), int(parts[2]), vals))
                    continue
                key = (int(parts[0], 16), int(parts[1], 16))
                self.counts[key] = int(parts[2])
                if len(parts) >= 11:
                    self.ext[key] = tuple(int(x) for x in parts[3:11])
                if len(parts) >= 15:
                    self.ph[key] = tuple(int(x) for x in parts[11:15])


def read_snap(path):
    return Snap(path)


def read_meta(path):
    meta = {}
    try:
        with open(path) as f:
            for line in f:
                k, _, v = line.rstrip("\n").partition("=")
                meta[k] = v
    except FileNotFoundError:
        pass
    return meta


class Window:
    """One window of one column: instructions and calls by function."""

    def __init__(self, syms, a, b):
        ca, ha, ea = a.counts, a.head, a.ext
        cb, hb, eb = b.counts, b.head, b.ext
        self.insns = {}   # (name, module) -> instructions
        self.calls = {}   # (name, module) -> executions of blocks at its address
        self.cost = {}    # (name, module) -> [COST...] (blocks, loads, ...)
        self.has_cost = bool(eb)
        self.phase = {ph: {} for ph in PHASES}   # phase -> (name, module) -> [PHASE_VALS...]
        self.kernel = 0
        self.kcost = [0] * len(COST)

        def hdiff(k):
            return int(hb.get(k, 0)) - int(ha.get(k, 0))
        self.user = hdiff("user_insns")
        self.ucost = {"blocks": hdiff("user_blocks"), "loads": hdiff("user_loads"),
                      "stores": hdiff("user_stores")}
        cache = {}
        for key, cnt in cb.items():
            d = cnt - ca.get(key, 0)
            if d <= 0:
                continue
            vaddr, n = key
            if vaddr < KERNEL_START:
                continue
            s = cache.get(vaddr)
            if s is None:
                s = cache[vaddr] = syms.lookup(vaddr)
            k = (s[0], s[1])
            self.insns[k] = self.insns.get(k, 0) + d * n
            self.kernel += d * n
            if vaddr == s[2]:
                self.calls[k] = self.calls.get(k, 0) + d
            x = eb.get(key)
            if x is None:
                continue
            xa = ea.get(key, (0, 0))
            v = [0] * len(COST)
            v[0] = d
            v[1] = x[0] - xa[0]
            v[2] = x[1] - xa[1]
            v[3 + x[2]] = d
            for j in range(5):
                v[3 + len(ENDS) + j] = d * x[3 + j]
            c = self.cost.setdefault(k, [0] * len(COST))
            for j in range(len(COST)):
                c[j] += v[j]
                self.kcost[j] += v[j]
            pb = b.ph.get(key)
            if pb is None:
                continue
            pa = a.ph.get(key, (0,) * len(PHASES))
            for i, ph in enumerate(PHASES):
                dp = pb[i] - pa[i]
                if dp <= 0:
                    continue
                # a block's memory accesses go to the phases in proportion
                # to its runs in each (every run of a block makes the same
                # accesses, but for a fault in its middle)
                pv = self.phase[ph].setdefault(k, [0] * len(PHASE_VALS))
                for j, add in enumerate((dp * n, dp, (v[1] + v[2]) * dp / d,
                                         dp if ENDS[x[2]] in LOOKUP_ENDS else 0,
                                         dp * x[3], dp * x[5], dp if vaddr == s[2] else 0)):
                    pv[j] += add
        self.has_phases = bool(b.ph)
        # the jump cache: the later snapshot's counts are the window's
        self.has_jc = b.has_jc
        self.jk, self.jp, self.jx = b.jk, b.jp, b.jx
        self.jc_flushes = int(b.head.get("jc_flushes", 0))
        self.jc_invlpg = int(b.head.get("jc_invlpg", 0))
        self.syms = syms
        self.halves = b.halves
        self.markers = b.markers
        post = [k for k in self.calls if k[0] == POST]
        self.posts = sum(self.calls[k] for k in post)
        self.rts = self.posts / 2


def load(dirname):
    """{column: (meta, [Window...])} in the order the guest ran them."""
    cols = {}
    for snap in glob.glob(os.path.join(dirname, "*.snap")):
        m = re.fullmatch(r"(.+)-(\d+)\.snap", os.path.basename(snap))
        if m:
            cols.setdefault(m.group(1), []).append((int(m.group(2)), snap))
    out = {}

    def order(c):
        return (0 if c == "rxe" else 1, len(c), c)
    for col in sorted(cols, key=order):
        snaps = [p for _, p in sorted(cols[col])]
        ks = os.path.join(dirname, col + ".kallsyms")
        if len(snaps) < 2 or not os.path.exists(ks):
            print(f"insnprof: {col}: {len(snaps)} snapshot(s), kallsyms "
                  f"{'present' if os.path.exists(ks) else 'missing'}: left out", file=sys.stderr)
            continue
        syms = Syms(ks)
        data = [read_snap(p) for p in snaps]
        wins = [Window(syms, data[i], data[i + 1]) for i in range(len(data) - 1)]
        out[col] = (read_meta(os.path.join(dirname, col + ".meta")), wins)
    return out


class Column:
    """A column's windows summed: per round trip figures."""

    def __init__(self, name, meta, wins):
        self.name, self.meta, self.wins = name, meta, wins
        self.rts = sum(w.rts for w in wins)
        self.insns, self.calls = {}, {}
        for w in wins:
            for k, v in w.insns.items():
                self.insns[k] = self.insns.get(k, 0) + v
            for k, v in w.calls.items():
                self.calls[k] = self.calls.get(k, 0) + v
        self.kernel = sum(w.kernel for w in wins)
        self.user = sum(w.user for w in wins)
        self.has_cost = all(w.has_cost for w in wins)
        self.cost = {}
        self.kcost = [sum(w.kcost[j] for w in wins) for j in range(len(COST))]
        self.ucost = {k: sum(w.ucost[k] for w in wins) for k in ("blocks", "loads", "stores")}
        for w in wins:
            for k, v in w.cost.items():
                c = self.cost.setdefault(k, [0] * len(COST))
                for j in range(len(COST)):
                    c[j] += v[j]
        self.has_phases = bool(wins) and all(w.has_phases for w in wins)
        self.phase = {ph: {} for ph in PHASES}
        for w in wins:
            for ph in PHASES:
                for k, v in w.phase[ph].items():
                    c = self.phase[ph].setdefault(k, [0] * len(PHASE_VALS))
                    for j in range(len(PHASE_VALS)):
                        c[j] += v[j]
        self.halves = [h for w in wins for h in w.halves]
        self.markers = wins[-1].markers if wins else []
        self.has_jc = bool(wins) and all(w.has_jc for w in wins)
        self.jk, self.jp, self.jx = {}, {}, {}
        for w in wins:
            for k, v in w.jk.items():
                c = self.jk.setdefault(k, [0, 0])
                c[0] += v[0]
                c[1] += v[1]
            for k, v in w.jp.items():
                c = self.jp.setdefault(k, [0, 0])
                c[0] += v[0]
                c[1] += v[1]
            for k, v in w.jx.items():
                self.jx[k] = self.jx.get(k, 0) + v
        self.jc_flushes = sum(w.jc_flushes for w in wins)
        self.jc_invlpg = sum(w.jc_invlpg for w in wins)
        self.syms = wins[-1].syms if wins else None

    def jc_total(self, what, kinds=None, prev_user=None, user=None):
        """Simulated jump-cache lookups (what 0) or misses (1), summed over the
        entry kinds (all), the space of the block before and of the block
        looked up (None: either; 1 user)."""
        return sum(v[what] for (k, pu, u), v in self.jk.items()
                   if (kinds is None or k in kinds) and (prev_user is None or pu == prev_user)
                   and (user is None or u == user))

    def region(self, pc):
        """The region a pc is in: user, or its kernel symbol's group."""
        if pc == 0:
            return "(empty slot)"
        if pc < KERNEL_START:
            return "user space"
        n, m, _ = self.syms.lookup(pc)
        return group_of(n, m)

    def where(self, pc):
        """pc as symbol+offset [module] (user space: the address)."""
        if pc == 0:
            return "(empty slot)"
        if pc < KERNEL_START:
            return f"user 0x{pc:x}"
        n, m, a = self.syms.lookup(pc)
        return f"{n}+0x{pc - a:x}" + (f" [{m}]" if m else "")

    def complete_halves(self, vcpu=None):
        """The halves that saw the copy and the completion and returned to
        user (on vCPU vcpu, or any)."""
        return [h for h in self.halves if h[1] & (HF_COPY | HF_CQE | HF_RET) ==
                HF_COPY | HF_CQE | HF_RET and (vcpu is None or h[0] == vcpu)]

    def phase_total(self, ph, what, k=None):
        """Phase ph's value `what` (a PHASE_VALS name) summed over the
        blocks (of function k, or all), over the windows."""
        j = PHASE_VALS.index(what)
        if k is not None:
            return self.phase[ph].get(k, [0] * len(PHASE_VALS))[j]
        return sum(v[j] for v in self.phase[ph].values())

    def per_half(self, v):
        """Per half round trip: per post (two per round trip)."""
        return v / (2 * self.rts) if self.rts else float("nan")

    def cost_of(self, k, what):
        """A function's (or, k None, the kernel's) cost proxy `what` (a COST
        name, "lookups": ends that look the next block up, "mem": loads +
        stores), summed over the windows."""
        v = self.kcost if k is None else self.cost.get(k, [0] * len(COST))
        if what == "mem":
            return v[1] + v[2]
        if what == "lookups":
            return sum(v[COST.index("end_" + e)] for e in ("xpage", "indirect", "ret"))
        return v[COST.index(what)]

    def calls_matching(self, pattern):
        """Calls (entries) of every function whose name matches the regex."""
        r = re.compile(pattern)
        return sum(v for (n, m), v in self.calls.items() if r.search(n))

    def group_cost(self, what):
        g = {}
        for k in self.cost:
            grp = group_of(*k)
            g[grp] = g.get(grp, 0) + self.cost_of(k, what)
        return g

    def per_rt(self, v):
        return v / self.rts if self.rts else float("nan")

    def groups(self):
        g = {}
        for (n, m), v in self.insns.items():
            k = group_of(n, m)
            g[k] = g.get(k, 0) + v
        return g


def fmt(x, sign=False):
    if x != x:
        return "-"
    return f"{x:+,.0f}" if sign else f"{x:,.0f}"


def label(k):
    n, m = k
    return f"{n} [{m}]" if m else n


# Rare but costly events under TCG, as calls (entries) per round trip of
# the functions whose names match: (label, regex).
EVENTS = [
    ("timer interrupts (hrtimer_interrupt)", r"^hrtimer_interrupt$"),
    ("timer reprogrammed (lapic_next_deadline, lapic_next_event)", r"^lapic_next_(deadline|event)$"),
    ("hrtimer start/cancel (hrtimer_start_range_ns, hrtimer_try_to_cancel)",
     r"^(hrtimer_start_range_ns|hrtimer_try_to_cancel)$"),
    ("clock reads (ktime_get*)", r"^ktime_get"),
    ("TSC reads (read_tsc)", r"^read_tsc$"),
    ("IPIs sent (x2apic/default send_IPI*, native_send_call_func*, native_smp_send_reschedule)",
     r"^(x2apic_send_IPI|__x2apic_send_IPI|default_send_IPI|native_send_call_func|"
     r"native_smp_send_reschedule)"),
    ("IPIs taken (sysvec_call_function*, sysvec_reschedule_ipi)",
     r"^(sysvec_call_function|sysvec_reschedule_ipi)"),
    ("TLB flushes (flush_tlb_*, native_flush_tlb_*)", r"^(flush_tlb_|native_flush_tlb_)"),
    ("irq_work (irq_work_*)", r"^irq_work_"),
    ("softirq runs (__do_softirq)", r"^__do_softirq$"),
    ("tasklet runs (tasklet_action_common)", r"^tasklet_action_common"),
    ("wakeups (try_to_wake_up)", r"^try_to_wake_up$"),
    ("context switches (__schedule)", r"^__schedule$"),
    ("idle entries (default_idle_call)", r"^default_idle_call$"),
]
COST_ROWS = [
    ("blocks executed", "blocks"),
    ("memory loads", "loads"),
    ("memory stores", "stores"),
    ("block ends: ret/iret (TB lookup)", "end_ret"),
    ("block ends: indirect jmp/call (TB lookup)", "end_indirect"),
    ("block ends: direct jmp/call to another page (TB lookup)", "end_xpage"),
    ("**TB lookups (the three above)**", "lookups"),
    ("block ends: jcc with an edge on another page (lookup if it goes there)", "end_xjcc"),
    ("block ends: chained direct jump (same page)", "end_chain"),
    ("block ends: no branch (sti/popf/wrmsr..., page end: back to the main loop)", "end_other"),
    ("locked atomics (lock prefix, xchg mem)", "atomics"),
    ("wrmsr", "wrmsr"),
    ("rdtsc/rdtscp", "tsc"),
    ("port I/O (in/out/ins/outs)", "io"),
    ("other system insns (rdmsr, cpuid, invlpg, mov cr, hlt, swapgs, syscall, sysret)", "sys"),
]


def group_rows(row, C, names, pairs, per_group):
    """One row per group that any column has: per-RT values, then each pair's difference."""
    for g in GROUP_ORDER:
        vals = [C[c].per_rt(per_group[c].get(g, 0)) for c in names]
        if not any(vals):
            continue
        row([g] + [fmt(v) for v in vals]
            + [fmt(C[o].per_rt(per_group[o].get(g, 0)) - C[b].per_rt(per_group[b].get(g, 0)), True)
               for o, b in pairs])


def cost_report(p, row, C, names, pairs, top):
    """The TCG cost proxies: totals, by group, rare events, by function."""
    def f2(x):
        return "-" if x != x else f"{x:,.2f}"
    p("## TCG cost proxies per round trip (kernel)")
    p("")
    p("Under TCG a block's run costs a dispatch, each memory access a softmmu TLB "
      "lookup, each return, indirect branch or jump to another page a TB lookup "
      "(lookup_tb_ptr) instead of a chained jump, and atomics, wrmsr, rdtsc and I/O run "
      "as helpers: these count what plain instruction totals hide "
      "(docs/testing.md, \"Instruction profile\").")
    p("")
    row(["per round trip"] + names + [f"{o} - {b}" for o, b in pairs])
    p("|---|" + "---:|" * (len(names) + len(pairs)))
    row(["kernel instructions"] + [fmt(C[c].per_rt(C[c].kernel)) for c in names]
        + [fmt(C[o].per_rt(C[o].kernel) - C[b].per_rt(C[b].kernel), True) for o, b in pairs])
    for lab, what in COST_ROWS:
        vals = {c: C[c].per_rt(C[c].cost_of(None, what)) for c in names}
        small = max(abs(v) for v in vals.values()) < 100
        f = f2 if small else fmt
        row([lab] + [f(vals[c]) for c in names]
            + [(("+" if vals[o] - vals[b] >= 0 else "") + f2(vals[o] - vals[b])) if small
               else fmt(vals[o] - vals[b], True) for o, b in pairs])
    row(["instructions per block"] + [f2(C[c].kernel / C[c].cost_of(None, "blocks"))
                                      if C[c].cost_of(None, "blocks") else "-" for c in names]
        + ["" for _ in pairs])
    row(["user space: blocks, loads + stores"] +
        [f"{fmt(C[c].per_rt(C[c].ucost['blocks']))}, "
         f"{fmt(C[c].per_rt(C[c].ucost['loads'] + C[c].ucost['stores']))}" for c in names]
        + ["" for _ in pairs])
    p("")
    for lab, what in (("blocks executed", "blocks"), ("memory accesses (loads + stores)", "mem"),
                      ("TB lookups (ret, indirect, direct to another page)", "lookups")):
        p(f"### By group: {lab} per round trip")
        p("")
        row(["group"] + names + [f"{o} - {b}" for o, b in pairs])
        p("|---|" + "---:|" * (len(names) + len(pairs)))
        group_rows(row, C, names, pairs, {c: C[c].group_cost(what) for c in names})
        p("")
    p("### Rare events: calls per round trip")
    p("")
    row(["event"] + names + [f"{o} - {b}" for o, b in pairs])
    p("|---|" + "---:|" * (len(names) + len(pairs)))
    for lab, rx in EVENTS:
        vals = {c: C[c].per_rt(C[c].calls_matching(rx)) for c in names}
        row([lab] + [f2(vals[c]) for c in names]
            + [f"{vals[o] - vals[b]:+.2f}" for o, b in pairs])
    p("")
    for o, base in pairs:
        keys = set(C[o].cost) | set(C[base].cost)
        rows = []
        for k in keys:
            a = C[base].per_rt(C[base].cost_of(k, "blocks"))
            b = C[o].per_rt(C[o].cost_of(k, "blocks"))
            rows.append((b - a, k))
        rows.sort(key=lambda r: (-abs(r[0]), r[1]))
        p(f"### Functions, {o} - {base}: the {top} largest differences in blocks executed "
          "per round trip")
        p("")
        p(f"| function | group | blocks {base} | blocks {o} | diff | mem {base} | mem {o} | "
          f"lookups {base} | lookups {o} | atomics {base} | atomics {o} |")
        p("|---|---|" + "---:|" * 9)
        for d, k in rows[:top]:
            cb, co = C[base], C[o]
            p(f"| {label(k)} | {group_of(*k)} | {fmt(cb.per_rt(cb.cost_of(k, 'blocks')))} | "
              f"{fmt(co.per_rt(co.cost_of(k, 'blocks')))} | {fmt(d, True)} | "
              f"{fmt(cb.per_rt(cb.cost_of(k, 'mem')))} | {fmt(co.per_rt(co.cost_of(k, 'mem')))} | "
              f"{f2(cb.per_rt(cb.cost_of(k, 'lookups')))} | "
              f"{f2(co.per_rt(co.cost_of(k, 'lookups')))} | "
              f"{f2(cb.per_rt(cb.cost_of(k, 'atomics')))} | "
              f"{f2(co.per_rt(co.cost_of(k, 'atomics')))} |")
        p("")


def median(xs):
    """statistics.median, but NaN (a "-" cell) for no halves."""
    return statistics.median(xs) if xs else float("nan")


def half_value(h, phs, what):
    """A half's value `what` summed over the phases phs ("-A": less A's)."""
    return sum(-h[2][ph[1:]][what] if ph[0] == "-" else h[2][ph][what] for ph in phs)


# The rows of the per-half table: (label, phases summed).
HALF_ROWS = [("A: post -> copy", ("A",)), ("C1: copy -> completion", ("C1",)),
             ("C2: completion -> return to user", ("C2",)),
             ("tail C1 + C2: copy -> return to user", ("C1", "C2")),
             ("A + C1 + C2: post -> return to user", ("A", "C1", "C2")),
             # the tail runs while the peer notices and runs its own A: what
             # it takes beyond an A is what can delay the peer's write
             ("tail - A (the tail beyond an A)", ("C1", "C2", "-A"))]


def marker_text(col):
    by = {}
    gate = {m[3] for m in col.markers if m[0] == "gate"}
    for kind, _, gated, name in col.markers:
        if kind == "gate":
            continue
        g = f" (after {', '.join(sorted(gate))})" if gated and gate else ""
        by.setdefault(kind, []).append(name + g)
    return "; ".join(f"{k} {', '.join(v)}" for k, v in by.items()) or "none resolved"


def phase_report(p, row, C, names, pairs, top):
    """The per-vCPU phases of a half round trip (the plugin's phases=)."""
    def f1(x):
        return "-" if x != x else f"{x:,.1f}"

    def diff(a, b, f=fmt):
        d = a - b
        return "-" if d != d else ("+" if d >= 0 else "") + f(d).lstrip("+")
    p("## Phases of a half round trip (per vCPU)")
    p("")
    p("A half round trip is one side's `write()` doorbell: on the poster's vCPU the "
      "driver's post_send starts phase A, the copy into the peer's MR (on the same vCPU: "
      "the veth delivers into the sender's backlog) C1, the poster's completion posted "
      "C2, and the return to user (sysret) ends it (docs/experiments/"
      "s38-H-lat-decomposition.md). Each vCPU's kernel blocks count in the phase that "
      "vCPU is in; the markers are `scripts/insnprof/phases`, resolved per column. "
      "Medians and means over the complete halves (copy, completion and return seen, "
      "in that order); a round trip is two halves, one per side.")
    p("")
    for c in names:
        p(f"- {c}: {marker_text(C[c])}")
    p("")
    comp = {c: C[c].complete_halves() for c in names}
    row(["per half round trip"] + names + [f"{o} - {b}" for o, b in pairs])
    p("|---|" + "---:|" * (len(names) + len(pairs)))
    row(["halves ended in the windows (returned or cut by the next post)"]
        + [fmt(len(C[c].halves)) for c in names] + ["" for _ in pairs])
    row(["of them complete"] + [f"{fmt(len(comp[c]))} ({100.0 * len(comp[c]) / len(C[c].halves):.1f} %)"
                                if C[c].halves else "-" for c in names] + ["" for _ in pairs])
    for lab, flag, want in (("without the copy on the poster's vCPU", HF_COPY, 0),
                            ("without the completion on the poster's vCPU", HF_CQE, 0),
                            ("cut by the next post (no return to user seen)", HF_CUT, HF_CUT)):
        row([lab] + [fmt(sum(1 for h in C[c].halves if h[1] & flag == want)) for c in names]
            + ["" for _ in pairs])
    for what, lab in (("insns", "instructions"), ("blocks", "blocks executed")):
        for rlab, phs in HALF_ROWS:
            for stat, fn in (("median", median), ("mean", lambda xs: sum(xs) / len(xs)
                                                  if xs else float("nan"))):
                vals = {c: fn([half_value(h, phs, what) for h in comp[c]]) for c in names}
                row([f"{rlab}, {lab}, {stat}"] + [fmt(vals[c]) for c in names]
                    + [diff(vals[o], vals[b]) for o, b in pairs])
    for what, lab in (("mem", "memory accesses"), ("lookups", "TB lookups"),
                      ("atomics", "locked atomics"), ("tsc", "rdtsc")):
        for rlab, phs in HALF_ROWS[:3]:
            vals = {c: (sum(half_value(h, phs, what) for h in comp[c]) / len(comp[c])
                        if comp[c] else float("nan")) for c in names}
            row([f"{rlab}, {lab}, mean"] + [f1(vals[c]) for c in names]
                + [diff(vals[o], vals[b], f1) for o, b in pairs])
    p("")
    # each side on its own: the client's and the server's halves
    vcpus = sorted({h[0] for c in names for h in comp[c]})
    if len(vcpus) > 1:
        p("By vCPU (complete halves; instructions, median A / C1 / C2):")
        p("")
        row(["vCPU"] + names + [f"{o} - {b}" for o, b in pairs])
        p("|---|" + "---:|" * (len(names) + len(pairs)))
        for v in vcpus:
            hs = {c: C[c].complete_halves(v) for c in names}
            med = {c: [median([h[2][ph]["insns"] for h in hs[c]]) for ph in PHASES[1:]]
                   for c in names}
            row([f"{v}: halves"] + [fmt(len(hs[c])) for c in names] + ["" for _ in pairs])
            row([f"{v}: A / C1 / C2"] + [" / ".join(fmt(x) for x in med[c]) for c in names]
                + [" / ".join(diff(x, y) for x, y in zip(med[o], med[b])) for o, b in pairs])
        p("")
    # every block by phase, incomplete halves included: per post
    p("Every kernel block by the phase its vCPU was in, per half (per post; incomplete "
      "halves included):")
    p("")
    row(["per half"] + names + [f"{o} - {b}" for o, b in pairs])
    p("|---|" + "---:|" * (len(names) + len(pairs)))
    for what, lab in (("insns", "instructions"), ("blocks", "blocks"), ("mem", "memory accesses"),
                      ("lookups", "TB lookups")):
        for ph in PHASES:
            vals = {c: C[c].per_half(C[c].phase_total(ph, what)) for c in names}
            row([f"{PHASE_LABELS[ph].split(':')[0].split(' (')[0]}, {lab}"]
                + [fmt(vals[c]) for c in names] + [diff(vals[o], vals[b]) for o, b in pairs])
    p("")
    # where each phase's difference is
    for o, base in pairs:
        for ph in PHASES[1:] + PHASES[:1]:
            keys = set(C[o].phase[ph]) | set(C[base].phase[ph])
            rows = []
            for k in keys:
                a = C[base].per_half(C[base].phase_total(ph, "insns", k))
                b = C[o].per_half(C[o].phase_total(ph, "insns", k))
                rows.append((b - a, k, a, b))
            rows.sort(key=lambda r: (-abs(r[0]), r[1]))
            p(f"### Phase {PHASE_LABELS[ph]}: functions, {o} - {base}, the {top} largest "
              "differences in instructions per half")
            p("")
            p(f"| function | group | {base} | {o} | diff | calls {base} | calls {o} | "
              f"blocks {base} | blocks {o} | mem {base} | mem {o} | lookups {base} | lookups {o} |")
            p("|---|---|" + "---:|" * 11)
            for d, k, a, b in rows[:top]:
                cb, co = C[base], C[o]
                p(f"| {label(k)} | {group_of(*k)} | {fmt(a)} | {fmt(b)} | {fmt(d, True)} | "
                  + " | ".join(f"{col.per_half(col.phase_total(ph, 'calls', k)):.2f}"
                               for col in (cb, co)) + " | "
                  + " | ".join(f1(col.per_half(col.phase_total(ph, w, k)))
                               for w in ("blocks", "mem", "lookups") for col in (cb, co)) + " |")
            p("")


# The plugin's jump-cache simulation (jc=1, session 43): why a block was
# entered through a lookup of QEMU's per-vCPU tb_jmp_cache rather than a
# chained jump (insnprof.c, enum jc_kind), as the "jk" lines name them.
JC_KINDS = [
    ("ret", "after a ret/iret"),
    ("indirect", "after an indirect jmp/call"),
    ("xpage", "after a direct jmp/call to another page"),
    ("xjcc", "a jcc edge to another page"),
    ("pageend", "the fall-through at a page's end"),
    ("eob", "after an instruction that leaves the block (sti, popf, clac/stac, wrmsr, "
            "mov cr, pause, syscall, sysret, ...)"),
    ("twopage", "a chained edge into a block that spans two pages"),
    ("async", "after an interrupt or exception"),
    ("first", "a vCPU's first block"),
]
JC_LOOKUP_ENDS = ("ret", "indirect", "xpage")


def jc_hash(pc):
    """The jump-cache slot of pc (QEMU 7.2 softmmu, 4 KiB pages): pc[5:0] ^
    pc[11:6] within the page's group of 64, pc[17:12] ^ pc[23:18] the group."""
    return (((pc >> 12) ^ (pc >> 18)) & 0x3f) << 6 | ((pc ^ (pc >> 6)) & 0x3f)


def jc_report(p, row, C, names, pairs, top):
    """The simulated jump cache: lookups and misses per round trip, by kind,
    by the regions of the missed pc and of the pc that evicted it, the top
    conflicting pairs."""
    def f1(x):
        return "-" if x != x else f"{x:,.1f}"

    def f2(x):
        return "-" if x != x else f"{x:,.2f}"

    def diff(a, b, f=f1):
        d = a - b
        return "-" if d != d else ("+" if d >= 0 else "") + f(d)
    p("## Jump cache (simulated, QEMU 7.2's per-vCPU tb_jmp_cache)")
    p("")
    p("The plugin's jc=1 (scripts/insnprof/insnprof.c): every block entry on a vCPU that "
      "QEMU resolves through the vCPU's 4096-slot, direct-mapped jump cache (rather than a "
      "chained jump), classified from the block that ran before it, fed to a simulated "
      "cache with QEMU's index (pc[5:0]^pc[11:6] within one of 64 groups, "
      "pc[17:12]^pc[23:18] the group); a miss is a walk of QEMU's global TB hash table "
      "(qht_lookup_custom). Kernel and user space share a vCPU's cache. Per round trip, "
      "both vCPUs.")
    p("")
    row(["per round trip"] + names + [f"{o} - {b}" for o, b in pairs])
    p("|---|" + "---:|" * (len(names) + len(pairs)))

    def line(lab, vals, f=f1):
        row([lab] + [f(vals[c]) for c in names] + [diff(vals[o], vals[b], f) for o, b in pairs])
    for what, wl in ((0, "lookups"), (1, "misses")):
        for u, ul in ((0, "kernel"), (1, "user")):
            line(f"**{wl}, {ul} pc**", {c: C[c].per_rt(C[c].jc_total(what, user=u)) for c in names})
        for k, lab in JC_KINDS:
            vals = {c: C[c].per_rt(C[c].jc_total(what, (k,))) for c in names}
            if any(v >= 0.005 for v in vals.values()):
                line(f"{wl}: {lab}", vals, f2)
    line("miss rate, kernel pc (%)", {c: 100.0 * C[c].jc_total(1, user=0) / C[c].jc_total(0, user=0)
                                      if C[c].jc_total(0, user=0) else float("nan") for c in names},
         f2)
    line("miss rate, user pc (%)", {c: 100.0 * C[c].jc_total(1, user=1) / C[c].jc_total(0, user=1)
                                    if C[c].jc_total(0, user=1) else float("nan") for c in names},
         f2)
    for u, ul in ((0, "kernel"), (1, "user")):
        for j, wl in ((0, "looked up"), (1, "missed")):
            line(f"distinct {ul} pcs {wl} per window (mean)",
                 {c: statistics.mean(sum(1 for pc, v in w.jp.items() if v[j] and
                                         (pc < KERNEL_START) == bool(u)) for w in C[c].wins)
                  for c in names}, fmt)
    line("kernel blocks ending ret/indirect/xpage (lookups; the cost table's TB lookups)",
         {c: C[c].per_rt(C[c].jc_total(0, JC_LOOKUP_ENDS, prev_user=0)) for c in names}, fmt)
    if all(C[c].has_cost for c in names):
        line("the same from the block counters (agree but for the snapshots' timing)",
             {c: C[c].per_rt(C[c].cost_of(None, "lookups")) for c in names}, fmt)
    line("full TLB flushes (mov to cr3/cr4: the cache cleared)",
         {c: C[c].per_rt(C[c].jc_flushes) for c in names}, f2)
    line("invlpg (two 64-slot groups cleared in QEMU; not simulated)",
         {c: C[c].per_rt(C[c].jc_invlpg) for c in names}, f2)
    p("")
    # misses by region of the missed pc and of the one that evicted it
    reg = {}
    for c in names:
        col = C[c]
        cache = {}

        def rg(pc, col=col, cache=cache):
            r = cache.get(pc)
            if r is None:
                r = cache[pc] = col.region(pc)
            return r
        d = {}
        for (pc, by), n in col.jx.items():
            k = (rg(pc), rg(by))
            d[k] = d.get(k, 0) + n
        reg[c] = d
    for title, pick in (("the missed pc's region", lambda k: k[0]),
                        ("the evicting pc's region", lambda k: k[1])):
        p(f"### Misses per round trip by {title}")
        p("")
        row(["region"] + names + [f"{o} - {b}" for o, b in pairs])
        p("|---|" + "---:|" * (len(names) + len(pairs)))
        agg = {c: {} for c in names}
        for c in names:
            for k, n in reg[c].items():
                agg[c][pick(k)] = agg[c].get(pick(k), 0) + n
        keys = sorted({k for c in names for k in agg[c]},
                      key=lambda k: -max(C[c].per_rt(agg[c].get(k, 0)) for c in names))
        for k in keys:
            line(k, {c: C[c].per_rt(agg[c].get(k, 0)) for c in names})
        p("")
    p(f"### Misses per round trip by region pair (missed <- evicted by), the {top} largest")
    p("")
    row(["missed pc's region <- evicting pc's region"] + names + [f"{o} - {b}" for o, b in pairs])
    p("|---|" + "---:|" * (len(names) + len(pairs)))
    keys = sorted({k for c in names for k in reg[c]},
                  key=lambda k: -max(C[c].per_rt(reg[c].get(k, 0)) for c in names))
    for k in keys[:top]:
        line(f"{k[0]} <- {k[1]}", {c: C[c].per_rt(reg[c].get(k, 0)) for c in names})
    p("")
    for c in names:
        col = C[c]
        p(f"### {c}: the {top} conflicting pairs with the most misses per round trip")
        p("")
        p("| missed pc | evicted by | slot | misses/RT | lookups/RT of the missed pc |")
        p("|---|---|---:|---:|---:|")
        for (pc, by), n in sorted(col.jx.items(), key=lambda kv: (-kv[1], kv[0]))[:top]:
            p(f"| {col.where(pc)} | {col.where(by)} | {jc_hash(pc)} | {f2(col.per_rt(n))} | "
              f"{f2(col.per_rt(col.jp.get(pc, [0, 0])[0]))} |")
        p("")


def report(cols, top, base, tcg="single", phase_top=15):
    names = list(cols)
    if base not in cols:
        base = names[0]
    # the comparisons: each column against the base; with several mroce
    # columns (an A/B of builds or parameters) each later one against the
    # first mroce column too
    pairs = [(o, base) for o in names if o != base]
    mroces = [c for c in names if re.fullmatch(r"mroce\d*", c)]
    pairs += [(o, mroces[0]) for o in mroces[1:] if mroces[0] != base]
    C = {c: Column(c, *cols[c]) for c in names}
    lines = []
    p = lines.append
    p("# Guest kernel instructions per 64 B ib_write_lat round trip")
    p("")
    how = ("TCG thread=single: exact counts, but a round trip takes milliseconds, so "
           "time-driven work (ticks, timers) is inflated" if tcg == "single" else
           "TCG thread=multi: round trips in tenths of a millisecond, counts exact but for "
           "the rare add lost when both vCPUs run one block at once; user space not counted")
    p("Counted by the insnprof QEMU plugin (every executed kernel translation block; "
      f"{how}), between snapshots taken while ib_write_lat -s 64 ran (its "
      f"start and connection outside); round trips = calls of {POST} / 2 in the same "
      "snapshots. Instructions, not time (docs/testing.md, \"Instruction profile\").")
    p("")
    p("| column | driver, parameters | round trips | kernel insns/RT | per window | "
      "user insns/RT | perftest (64 B: t_min t_max t_typical t_avg ...) |")
    p("|---|---|---:|---:|---|---:|---|")
    for c in names:
        col = C[c]
        per = ", ".join(fmt(w.kernel / w.rts) if w.rts else "-" for w in col.wins)
        m = col.meta
        drv = (m.get("driver", "") + (" " + m["params"] if m.get("params") else "")).strip()
        pt = " ".join(m.get("perftest", "").split()[2:7])
        p(f"| {c} | {drv or '?'} | {col.rts:,.0f} | {fmt(col.per_rt(col.kernel))} | {per} | "
          f"{fmt(col.per_rt(col.user)) if col.user else '-'} | {pt} |")
    p("")
    # groups
    groups = {c: C[c].groups() for c in names}
    def row(cells):
        p("| " + " | ".join(cells) + " |")
    p("## By group (kernel instructions per round trip)")
    p("")
    row(["group"] + names + [f"{o} - {b}" for o, b in pairs])
    p("|---|" + "---:|" * (len(names) + len(pairs)))
    group_rows(row, C, names, pairs, groups)
    row(["**kernel total**"] + [f"**{fmt(C[c].per_rt(C[c].kernel))}**" for c in names]
        + [f"**{fmt(C[o].per_rt(C[o].kernel) - C[b].per_rt(C[b].kernel), True)}**"
           for o, b in pairs])
    # what depends on time more than on packets: ticks, timers, the
    # scheduler and softirq entry, spin-waiting
    steady = {c: C[c].per_rt(C[c].kernel - sum(groups[c].get(g, 0) for g in TIME_GROUPS)
                             - C[c].insns.get((SPIN, ""), 0)) for c in names}
    row(["without timers, irq/softirq/scheduler, spin-waits"] + [fmt(steady[c]) for c in names]
        + [fmt(steady[o] - steady[b], True) for o, b in pairs])
    p("")
    p("Time-driven work per round trip (it grows with the time a round trip takes, "
      "which the host's load and TCG's threading set):")
    p("")
    row(["per round trip"] + names)
    p("|---|" + "---:|" * len(names))
    for what, key in (("timer interrupts (hrtimer_interrupt calls)", ("hrtimer_interrupt", "")),
                      ("context switches (__schedule calls)", ("__schedule", "")),
                      ("tasklet runs (tasklet_action_common calls)",
                       ("tasklet_action_common.constprop.0", "")),
                      (f"spin-wait instructions ({SPIN})", None)):
        if key is None:
            row([what] + [fmt(C[c].per_rt(C[c].insns.get((SPIN, ""), 0))) for c in names])
        else:
            row([what] + [f"{C[c].per_rt(C[c].calls.get(key, 0)):.2f}" for c in names])
    p("")
    if all(C[c].has_phases for c in names):
        phase_report(p, row, C, names, pairs, phase_top)
    if all(C[c].has_cost for c in names):
        cost_report(p, row, C, names, pairs, top)
    if all(C[c].has_jc for c in names):
        jc_report(p, row, C, names, pairs, min(top, 25))
    # functions side by side, by the largest difference
    for o, base in pairs:
        keys = set(C[o].insns) | set(C[base].insns)
        rows = []
        for k in keys:
            a = C[base].per_rt(C[base].insns.get(k, 0))
            b = C[o].per_rt(C[o].insns.get(k, 0))
            rows.append((b - a, k, a, b))
        rows.sort(key=lambda r: (-abs(r[0]), r[1]))
        p(f"## Functions, {o} - {base}: the {top} largest differences (instructions per round trip)")
        p("")
        p(f"| function | group | {base} | {o} | {o} - {base} | calls/RT {base} | calls/RT {o} |")
        p("|---|---|---:|---:|---:|---:|---:|")
        for d, k, a, b in rows[:top]:
            p(f"| {label(k)} | {group_of(*k)} | {fmt(a)} | {fmt(b)} | {fmt(d, True)} | "
              f"{C[base].per_rt(C[base].calls.get(k, 0)):.2f} | "
              f"{C[o].per_rt(C[o].calls.get(k, 0)):.2f} |")
        p("")
    # each column's top functions
    for c in names:
        col = C[c]
        rows = sorted(col.insns.items(), key=lambda kv: -kv[1])
        p(f"## {c}: the {top} functions that execute the most kernel instructions per round trip")
        p("")
        p("| function | group | insns/RT | share | calls/RT | insns/call |")
        p("|---|---|---:|---:|---:|---:|")
        for k, v in rows[:top]:
            calls = col.calls.get(k, 0)
            p(f"| {label(k)} | {group_of(*k)} | {fmt(col.per_rt(v))} | "
              f"{100.0 * v / col.kernel:.1f} % | {col.per_rt(calls):.2f} | "
              f"{(v / calls) if calls else float('nan'):,.0f} |".replace("nan", "-"))
        p("")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--phase-top", type=int, default=15,
                    help="functions per phase in the phase tables")
    ap.add_argument("--tcg", choices=["single", "multi"], default="single",
                    help="how the VM ran (run.sh's INSNPROF_TCG), for the report's text")
    ap.add_argument("--base", default="rxe",
                    help="the column the others are compared with (default rxe, "
                         "else the first)")
    args = ap.parse_args()
    cols = load(args.dir)
    if not cols:
        sys.exit(f"insnprof: no complete column in {args.dir}")
    for c, (_, wins) in cols.items():
        if any(w.rts == 0 for w in wins):
            print(f"insnprof: {c}: a window without calls of {POST}: no round trips?",
                  file=sys.stderr)
    sys.stdout.write(report(cols, args.top, args.base, args.tcg, args.phase_top))


if __name__ == "__main__":
    main()
