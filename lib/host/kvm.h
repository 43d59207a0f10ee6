/* SPDX-License-Identifier: MIT */
/* Whether KVM here is the hardware-assisted kind that runs a stock guest. */
#ifndef SBX_KVM_H
#define SBX_KVM_H

/*
 * 1 where /dev/kvm opens, makes a VM, and the CPU has VMX or SVM; else 0.
 * A paravirtual KVM (PVM, on hosts that are VMs themselves) makes VMs
 * without either, and runs neither a stock kernel nor gVisor's kvm platform.
 */
int sbx_kvm_hardware(void);

#endif
