/* SPDX-License-Identifier: MIT */
/*
 * The microVM tier's wire between the host (vm_agent.c) and the guest agent
 * (cmd/guest/sbx-agent.c), over a virtio-serial port: frames of a type and
 * a length, then that many bytes; integers in the host's order (host and
 * guest are the same machine type). A port carries one session at a time;
 * every session begins with HELLO, which ends whatever the port carried
 * before (the agent kills a command left running). Header-only: the agent
 * is a static program of its own.
 */
#ifndef SBX_VM_PROTO_H
#define SBX_VM_PROTO_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define VM_PROTO_VERSION 5
/* The guest's ports for runs are named sbx.0 ... sbx.(VM_PORTS-1); one
 * more, sbx.ctl (index VM_CTL), carries sbx's own requests (FREEZE, STAT,
 * HOSTS, VM_EXEC_SYSTEM commands), so that they never wait for a run to end. */
#define VM_PORTS 4
#define VM_CTL VM_PORTS
#define VM_CHANNELS (VM_PORTS + 1)
#define VM_FRAME_MAX (1u << 20)

enum vm_frame {
	/* host -> guest */
	VM_HELLO = 1,     /* u64 nonce, u32 version */
	VM_SETUP,         /* struct vm_setup, its texts, then the hostname */
	VM_EXEC,          /* struct vm_exec, then cwd, argv[], env[] as NUL-ended strings */
	VM_STDIN,         /* bytes; empty: end of input */
	VM_SIGNAL,        /* u32 signal, to the command's process group */
	VM_RESIZE,        /* u16 rows, u16 cols */
	VM_STAT,          /* nothing: answered by VM_STATS */
	VM_POWEROFF,      /* nothing: the guest syncs and powers off */
	VM_FREEZE,        /* u32 on, u32 keep: answered by VM_OK (see below) */
	VM_HOSTS,         /* the new /etc/hosts (the allow-list's names re-pinned):
	                   * answered by VM_OK */
	/* guest -> host */
	VM_READY = 64,    /* u64 nonce, u32 version, then the guest's kernel release */
	VM_STARTED,       /* u32 the command's PID in the guest */
	VM_FAILED,        /* i32 status (125, 126, 127), then a message */
	VM_STDOUT,        /* bytes */
	VM_STDERR,        /* bytes */
	VM_EXIT,          /* struct vm_exit */
	VM_STATS,         /* struct vm_stats */
	VM_OK,            /* SETUP, FREEZE or HOSTS done */
	VM_TYPE_MAX = VM_OK,
};

struct vm_hdr {
	uint32_t type, len;
};

struct vm_setup {
	int64_t pids_max;        /* 0: none */
	int64_t memory_max;      /* bytes, for the commands' cgroup; 0: none */
	int64_t memory_high;     /* bytes, its soft limit; 0: none */
	uint8_t seed[32];        /* mixed into the guest's entropy pool */
	int64_t realtime_ns;     /* the host's clock: the guest's is set to it (a VM
	                          * resumed from a snapshot is behind) */
	uint8_t net;             /* 1: the guest's NIC (eth0) takes the address below,
	                          * down first (a clone's was its parent's) */
	uint8_t prefix4;
	uint8_t addr4[4], gw4[4];  /* network order; gw4 the default route */
	uint8_t mac[6];
	uint8_t net6;            /* 1: eth0 takes addr6/prefix6 too (an allow-list
	                          * naming IPv6 destinations), gw6 its default route */
	uint8_t prefix6;
	uint8_t addr6[16], gw6[16];
	uint32_t hosts_len;      /* then /etc/hosts (0: the root's own stays) */
	uint32_t resolv_len;     /* then /etc/resolv.conf (0: the root's own stays) */
};

struct vm_exec {
	uint32_t uid, gid, tty, rows, cols, argc, envc;
	uint32_t flags;          /* VM_EXEC_* */
};

/* The command is sbx's own (the writable layer's packer), not the
 * sandbox's: outside the sandbox's cgroup, so not frozen with it and not in
 * its figures. */
#define VM_EXEC_SYSTEM 1u
/* The agent's own path in the guest, and the mode in which it writes the
 * tree below DIR to stdout as a tar archive (pax: names, owners, modes,
 * times, symlinks, whiteouts, user.overlay.* attributes). */
#define VM_AGENT_PATH "/dev/.sbx/sbx-agent"
#define VM_AGENT_PACK "--pack"
/* The mode in which it reads a block of each disk and exits: a warm pool's
 * member runs it once (VM_EXEC_SYSTEM), so that its VMM has run a command's
 * start, a disk's read and a command's end before the claimer's first run. */
#define VM_AGENT_WARM "--warm"
/* The guest's overlay's upper directory, where the agent can reach it. */
#define VM_UPPER "/dev/.sbx/layer/upper"

/*
 * FREEZE on = 1: the sandbox's processes frozen (its cgroup's
 * cgroup.freeze), then the guest's filesystems synced. While frozen, a run
 * whose host side goes away is kept aside, still frozen, instead of being
 * killed: a clone resumed from a memory snapshot taken then finds its
 * ports without a host (the clone's QEMU is a new process). FREEZE on = 0
 * thaws; runs kept aside meanwhile are killed, or with keep = 1 (the clone)
 * go on detached: their output discarded, they end with the VM.
 */
struct vm_freeze {
	uint32_t on, keep;
};

struct vm_exit {
	int32_t status;          /* as wait(2) gives it */
	uint32_t oom_kills;      /* in the run's cgroup */
	uint32_t pids_refused;   /* forks the pids limit refused during the run */
	uint32_t pad;
	int64_t utime_us, stime_us, maxrss_kb;
	int64_t cpu_us;          /* the run's cgroup's CPU time (all its processes); -1: unknown */
};

struct vm_stats {
	int64_t memory_bytes, pids, disk_bytes, cpu_us;
};

/* Write all of buf (EINTR and short writes retried): 0, or -1. */
static inline int
vm_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Read exactly len bytes: 0, or -1 (end of stream or an error). */
static inline int
vm_read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len > 0) {
		ssize_t n = read(fd, p, len);

		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* One frame, header and payload in one write where it fits. */
static inline int
vm_send(int fd, uint32_t type, const void *a, size_t alen, const void *b, size_t blen)
{
	char buf[8192];
	struct vm_hdr h = { type, (uint32_t)(alen + blen) };

	if (sizeof h + alen + blen <= sizeof buf) {
		memcpy(buf, &h, sizeof h);
		if (alen)
			memcpy(buf + sizeof h, a, alen);
		if (blen)
			memcpy(buf + sizeof h + alen, b, blen);
		return vm_write_all(fd, buf, sizeof h + alen + blen);
	}
	if (vm_write_all(fd, &h, sizeof h) == -1 || (alen && vm_write_all(fd, a, alen) == -1))
		return -1;
	return blen ? vm_write_all(fd, b, blen) : 0;
}

#endif
