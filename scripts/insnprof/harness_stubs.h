/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The QEMU plugin API calls insnprof.c makes, stubbed (they abort) for
 * the harnesses that include insnprof.c and drive its callbacks directly
 * (phases_harness.c, jcsim.c).
 */
#define STUB { abort(); }
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb) STUB
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb) STUB
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx) STUB
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn) STUB
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn) STUB
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn) STUB
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
					      void *ptr, uint64_t imm) STUB
void qemu_plugin_register_vcpu_mem_inline(struct qemu_plugin_insn *insn,
					  enum qemu_plugin_mem_rw rw, enum qemu_plugin_op op,
					  void *ptr, uint64_t imm) STUB
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
					  qemu_plugin_vcpu_udata_cb_t cb,
					  enum qemu_plugin_cb_flags flags, void *userdata) STUB
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb) STUB
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb,
				    void *userdata) STUB
bool qemu_plugin_bool_parse(const char *name, const char *val, bool *ret) STUB
