/* SPDX-License-Identifier: MIT */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <linux/kvm.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kvm.h"

/* Whether /proc/cpuinfo's first flags line names vmx or svm. */
static int
cpu_virt(void)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[8192];
	int found = 0;

	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "flags", 5) == 0) {
			found = strstr(line, " vmx") != NULL || strstr(line, " svm") != NULL;
			break;
		}
	if (f)
		fclose(f);
	return found;
}

int
sbx_kvm_hardware(void)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC), vm;

	if (fd == -1)
		return 0;
	vm = ioctl(fd, KVM_CREATE_VM, 0);
	close(fd);
	if (vm < 0)
		return 0;
	close(vm);
	return cpu_virt();
}
