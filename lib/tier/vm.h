/* SPDX-License-Identifier: MIT */
/*
 * The microVM tier's driver (driver.h), in two files: vm.c finds the guest
 * kit and QEMU, makes, freezes and destroys the VM and sweeps; vm_agent.c
 * talks to the guest agent (cmd/guest/sbx-agent.c, over vm_proto.h) and to
 * QEMU's monitor (QMP), and runs commands. Only these include this header.
 */
#ifndef SBX_VM_H
#define SBX_VM_H

#include "driver.h"
#include "vm_proto.h"

/* The VMs' own directories: sockets and the base root's mount point, owned by
 * the user QEMU runs as (the sandbox's first host ID). */
#define VM_RUN "/run/sbx-vm"

struct vm_paths {
	char dir[200];                  /* VM_RUN/<group>/<id> */
	char port[VM_PORTS][240];       /* dir/agent.N: the agent's ports' sockets */
	char qmp[240];                  /* dir/qmp: QEMU's monitor */
	char base[240];                 /* dir/base: the root's read-only layers, shared over 9p */
	char disk[1200];                /* the sandbox's directory's disk.img: its writable layer */
	char log[1200];                 /* the sandbox's directory's vmm.log: QEMU's stderr */
	char lock[1200];                /* the sandbox's directory's agent.lock (.N per port) */
};

int vm_paths(const struct sbx_store *s, const struct sbx_manifest *m, struct vm_paths *p,
    struct sbx_err *e);

/* vm_agent.c */
/* A session with the agent on port n: connected, HELLO answered (before
 * deadline, sbx_monotonic()); the socket, *release the guest's kernel. */
int vm_agent_open(const struct vm_paths *p, int n, double deadline, char *release, size_t size,
    struct sbx_err *e);
/* The sandbox's limits, hostname and a fresh random seed, through fd. */
int vm_agent_setup(int fd, const struct sbx_manifest *m, struct sbx_err *e);
/* What the guest uses now. */
int vm_agent_stats(const struct vm_paths *p, struct vm_stats *st, struct sbx_err *e);
/* A QMP command (JSON text) and its answer's first line ("return" or "error"). */
int vm_qmp(const char *sock, const char *cmd, char *reply, size_t size, struct sbx_err *e);
int vm_exec(const struct sbx_store *s, const struct sbx_manifest *m, const struct sbx_exec *x,
    struct sbx_exec_result *res, struct sbx_err *e);

#endif
