/* SPDX-License-Identifier: MIT */
/*
 * The microVM tier's driver (driver.h), in two files: vm.c finds the guest
 * kit and QEMU, makes, freezes and destroys the VM and sweeps; vm_agent.c
 * talks to the guest agent (cmd/guest/sbx-agent.c, over vm_proto.h) and to
 * QEMU's monitor (QMP), and runs commands. Only these include this header.
 */
#ifndef SBX_VM_H
#define SBX_VM_H

#include <sys/types.h>

#include "driver.h"
#include "sha256.h"
#include "vm_proto.h"

/* The VMs' own directories: sockets and the base root's mount point, owned by
 * the user QEMU runs as (the sandbox's first host ID). */
#define VM_RUN "/run/sbx-vm"
/* The RAM of VMs that can be snapshotted: a file on a tmpfs, shared with
 * QEMU (/run is not one everywhere, and is small where it is). */
#define VM_SHM "/dev/shm/sbx-vm"
/* A memory snapshot's tier, as the store records it. */
#define VM_TIER "microvm/microvm"
/* Guest RAM in a shared file is not part of the migration stream: the
 * checkpoint copies the file instead. */
#define VM_QMP_IGNORE_SHARED "{\"execute\":\"migrate-set-capabilities\",\"arguments\":" \
	"{\"capabilities\":[{\"capability\":\"x-ignore-shared\",\"state\":true}]}}"

struct vm_paths {
	char dir[200];                  /* VM_RUN/<group>/<id> */
	char port[VM_CHANNELS][240];    /* dir/agent.N, agent.ctl: the agent's ports' sockets */
	char qmp[240];                  /* dir/qmp: QEMU's monitor */
	char base[240];                 /* dir/base: the root's read-only layers, shared over 9p */
	char ram[240];                  /* VM_SHM/<group>/<id>.ram: the guest's RAM (a disk base) */
	char disk[1200];                /* the sandbox's directory's disk.img: its writable layer */
	char base_img[1200];            /* its base.img: the read-only layers as a disk */
	char log[1200];                 /* the sandbox's directory's vmm.log: QEMU's stderr */
	char lock[1200];                /* the sandbox's directory's agent.lock (.N per port) */
};

int vm_paths(const struct sbx_store *s, const struct sbx_manifest *m, struct vm_paths *p,
    struct sbx_err *e);
/* The same from the sandbox's state (dir, port, qmp and lock only). */
int vm_paths_rt(const struct sbx_manifest *m, struct vm_paths *p, struct sbx_err *e);
/* Make the VM: booted, or with ckpt (a checkpoint's directory, vm_snap.c)
 * restored from it, the sandbox's processes going on. */
int vm_start(const struct sbx_store *s, struct sbx_manifest *m, const char *ckpt,
    struct sbx_err *e);
/* Whether m's VM has its base as a disk and its RAM in a file (a memory
 * snapshot is possible). */
int vm_disk_base(const struct sbx_manifest *m);
/* The VM's NIC: none (deny-all), a tap bridged to the allow-list's veth
 * (egress-allow-list), or QEMU's user-mode network, the host's own (host). */
enum { VM_NIC_NONE, VM_NIC_TAP, VM_NIC_USER };
int vm_nic(const struct sbx_manifest *m);
/* A tree as vm.c copies it into a base disk: its size in KiB of blocks,
 * its inodes, and a digest of every name's path, type, mode, owner, size,
 * modification time and link target (16 hex digits). */
struct vm_tree {
	long long kb, inodes;
	struct sbx_sha256 sha;
	char digest[17];
};
int vm_tree(const char *dir, struct vm_tree *t);
/* vm_snap.c: bytes [0, size) of in to out, which reads as zeros: holes and
 * pages of zeros stay holes. */
int vm_copy_fd(int in, int out, off_t size);
/* vm_snap.c: from to a new file to (mode, owner uid), as vm_copy_fd. */
int vm_copy_sparse(const char *from, const char *to, mode_t mode, uid_t uid, struct sbx_err *e);
/* vm_snap.c: the stopped VM's device state, RAM and disks into dir (an
 * empty directory), and the VM goes on. */
int vm_save(const struct sbx_manifest *m, const struct vm_paths *p, const char *dir,
    struct sbx_err *e);
/* vm_snap.c: the VM, just booted, saved as the boot snapshot boot (made
 * whole beside it, then renamed; one there already wins). */
int vm_boot_save(const struct sbx_manifest *m, const struct vm_paths *p, const char *boot,
    struct sbx_err *e);
/* vm_snap.c: the driver's capture, checkpoint, restart and restore. */
int vm_capture(const struct sbx_store *s, const struct sbx_manifest *m, int fd,
    const struct sbx_pack_opts *o, struct sbx_layer_info *li, struct sbx_err *e);
int vm_checkpoint(const struct sbx_store *s, struct sbx_manifest *m, const char *dir,
    struct sbx_err *e);
int vm_restart(const struct sbx_store *s, struct sbx_manifest *m, const char *dir,
    struct sbx_err *e);
int vm_restore(const struct sbx_store *s, struct sbx_manifest *m, const char *dir,
    struct sbx_err *e);

/* vm_agent.c */
/* A session with the agent on port n: connected, HELLO answered (before
 * deadline, sbx_monotonic()); the socket, *release the guest's kernel. */
int vm_agent_open(const struct vm_paths *p, int n, double deadline, char *release, size_t size,
    struct sbx_err *e);
/* The guest's limits for m's commands (0: none): its pids and memory. */
void vm_limits(const struct sbx_manifest *m, int64_t *pids, int64_t *memory);
/* The sandbox's limits, hostname, clock and a fresh random seed, sent with
 * the HELLO of a session on port 0 (as vm_agent_open's) and answered. */
int vm_agent_setup(const struct vm_paths *p, const struct sbx_manifest *m, double deadline,
    char *release, size_t size, struct sbx_err *e);
/* What the guest uses now. */
int vm_agent_stats(const struct vm_paths *p, struct vm_stats *st, struct sbx_err *e);
/* A QMP command (JSON text) and its answer's first line ("return" or "error"). */
int vm_qmp(const char *sock, const char *cmd, char *reply, size_t size, struct sbx_err *e);
/* The same over one connection (vm_qmp_open's, capabilities negotiated),
 * with sendfd (not -1) passed along for getfd. */
int vm_qmp_open(const char *sock, struct sbx_err *e);
int vm_qmp_cmd(int fd, const char *cmd, int sendfd, char *reply, size_t size,
    struct sbx_err *e);
/* The agent's FREEZE and HOSTS (vm_proto.h), over the control port. */
int vm_agent_freeze(const struct vm_paths *p, int on, int keep, struct sbx_err *e);
int vm_agent_hosts(const struct vm_paths *p, const char *text, struct sbx_err *e);
int vm_exec(const struct sbx_store *s, const struct sbx_manifest *m, const struct sbx_exec *x,
    struct sbx_exec_result *res, struct sbx_err *e);
/* vm_exec with the EXEC frame's flags (VM_EXEC_SYSTEM). */
int vm_exec_flags(const struct sbx_store *s, const struct sbx_manifest *m,
    const struct sbx_exec *x, uint32_t flags, struct sbx_exec_result *res, struct sbx_err *e);

#endif
