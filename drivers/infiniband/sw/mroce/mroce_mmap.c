// SPDX-License-Identifier: GPL-2.0
/*
 * Mapping user rings into user space.
 *
 * Each user ring is registered with the RDMA core as an rdma_user_mmap_entry
 * of its ucontext; the core hands out an opaque, page-aligned mmap offset
 * which create_cq/create_qp/create_srq return to librxe in struct mminfo,
 * and finds the entry again when librxe mmap()s that offset on the uverbs fd.
 *
 * The entry owns the ring memory: the object that created the ring removes
 * the entry when it is destroyed, and the memory is freed when the entry's
 * last reference goes (mroce_mmap_free()), so a racing mmap() can never map
 * freed memory. Pages already mapped into a process are referenced by its
 * page tables and outlive the vfree() until it unmaps them; that is also why
 * disassociate_ucontext has nothing to zap for us: no device memory is ever
 * mapped, only ordinary pages that stay valid.
 */
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "mroce.h"
#include "mroce_verbs.h"

struct mroce_mmap_entry {
	struct rdma_user_mmap_entry	rdma;
	void				*vaddr;	/* vmalloc_user() memory */
};

static struct mroce_mmap_entry *to_mentry(struct rdma_user_mmap_entry *e)
{
	return container_of(e, struct mroce_mmap_entry, rdma);
}

/**
 * mroce_mmap_insert() - make vmalloc_user() memory mappable by a ucontext
 * @uctx: the user context that may map it
 * @vaddr: memory from vmalloc_user(); owned by the entry from now on, also
 *	   when this fails
 * @size: bytes to expose
 *
 * Return: the entry or an ERR_PTR().
 */
struct mroce_mmap_entry *mroce_mmap_insert(struct ib_ucontext *uctx,
					   void *vaddr, size_t size)
{
	struct mroce_mmap_entry *e;
	int err;

	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e) {
		vfree(vaddr);
		return ERR_PTR(-ENOMEM);
	}
	e->vaddr = vaddr;
	err = rdma_user_mmap_entry_insert(uctx, &e->rdma, size);
	if (err) {
		vfree(vaddr);
		kfree(e);
		return ERR_PTR(err);
	}
	return e;
}

/* Stop new mappings; the memory goes when the last reference does. */
void mroce_mmap_remove(struct mroce_mmap_entry *e)
{
	rdma_user_mmap_entry_remove(&e->rdma);
}

u64 mroce_mmap_offset(const struct mroce_mmap_entry *e)
{
	return rdma_user_mmap_get_offset(&e->rdma);
}

int mroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma;
	int err;

	/* Checks MAP_SHARED and that the length is exactly the ring's. */
	rdma = rdma_user_mmap_entry_get(uctx, vma);
	if (!rdma)
		return -EINVAL;
	err = remap_vmalloc_range(vma, to_mentry(rdma)->vaddr, 0);
	rdma_user_mmap_entry_put(rdma);
	return err;
}

void mroce_mmap_free(struct rdma_user_mmap_entry *rdma)
{
	struct mroce_mmap_entry *e = to_mentry(rdma);

	vfree(e->vaddr);
	kfree(e);
}
