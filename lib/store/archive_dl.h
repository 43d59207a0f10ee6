/* SPDX-License-Identifier: MIT */
/*
 * libarchive, loaded when a layer is first packed or unpacked rather than
 * linked: every sbx program would otherwise map it and its dozen dependencies
 * (libxml2, ICU, libstdc++...) at start-up, about 1.5 ms each time, for the
 * few commands that archive anything. Include this instead of <archive.h>;
 * the calls read as usual and go through pointers set by sbx_archive_load().
 */
#ifndef SBX_ARCHIVE_DL_H
#define SBX_ARCHIVE_DL_H

#include <archive.h>
#include <archive_entry.h>

#include "error.h"

#define SBX_ARCHIVE_FUNCS(X) \
	X(archive_entry_clear) \
	X(archive_entry_filetype) \
	X(archive_entry_free) \
	X(archive_entry_gid) \
	X(archive_entry_hardlink) \
	X(archive_entry_mode) \
	X(archive_entry_mtime) \
	X(archive_entry_mtime_nsec) \
	X(archive_entry_new) \
	X(archive_entry_pathname) \
	X(archive_entry_rdev) \
	X(archive_entry_rdevmajor) \
	X(archive_entry_rdevminor) \
	X(archive_entry_set_filetype) \
	X(archive_entry_set_gid) \
	X(archive_entry_set_hardlink) \
	X(archive_entry_set_mode) \
	X(archive_entry_set_mtime) \
	X(archive_entry_set_pathname) \
	X(archive_entry_set_perm) \
	X(archive_entry_set_rdev) \
	X(archive_entry_set_size) \
	X(archive_entry_set_symlink) \
	X(archive_entry_set_uid) \
	X(archive_entry_size) \
	X(archive_entry_sparse_add_entry) \
	X(archive_entry_symlink) \
	X(archive_entry_uid) \
	X(archive_entry_xattr_add_entry) \
	X(archive_entry_xattr_next) \
	X(archive_entry_xattr_reset) \
	X(archive_error_string) \
	X(archive_filter_code) \
	X(archive_read_data) \
	X(archive_read_data_block) \
	X(archive_read_free) \
	X(archive_read_new) \
	X(archive_read_next_header) \
	X(archive_read_open) \
	X(archive_read_open_fd) \
	X(archive_read_support_filter_zstd) \
	X(archive_read_support_format_tar) \
	X(archive_write_add_filter_zstd) \
	X(archive_write_close) \
	X(archive_write_data) \
	X(archive_write_free) \
	X(archive_write_header) \
	X(archive_write_new) \
	X(archive_write_open) \
	X(archive_write_open_fd) \
	X(archive_write_set_bytes_in_last_block) \
	X(archive_write_set_filter_option) \
	X(archive_write_set_format_pax_restricted)

#define X(f) extern __typeof__(f) *sbx_dl_##f;
SBX_ARCHIVE_FUNCS(X)
#undef X

/* Load libarchive (once); exit 69 naming what is missing. */
int sbx_archive_load(struct sbx_err *e);

#ifndef SBX_ARCHIVE_DL_SELF
#define archive_entry_clear (*sbx_dl_archive_entry_clear)
#define archive_entry_filetype (*sbx_dl_archive_entry_filetype)
#define archive_entry_free (*sbx_dl_archive_entry_free)
#define archive_entry_gid (*sbx_dl_archive_entry_gid)
#define archive_entry_hardlink (*sbx_dl_archive_entry_hardlink)
#define archive_entry_mode (*sbx_dl_archive_entry_mode)
#define archive_entry_mtime (*sbx_dl_archive_entry_mtime)
#define archive_entry_mtime_nsec (*sbx_dl_archive_entry_mtime_nsec)
#define archive_entry_new (*sbx_dl_archive_entry_new)
#define archive_entry_pathname (*sbx_dl_archive_entry_pathname)
#define archive_entry_rdev (*sbx_dl_archive_entry_rdev)
#define archive_entry_rdevmajor (*sbx_dl_archive_entry_rdevmajor)
#define archive_entry_rdevminor (*sbx_dl_archive_entry_rdevminor)
#define archive_entry_set_filetype (*sbx_dl_archive_entry_set_filetype)
#define archive_entry_set_gid (*sbx_dl_archive_entry_set_gid)
#define archive_entry_set_hardlink (*sbx_dl_archive_entry_set_hardlink)
#define archive_entry_set_mode (*sbx_dl_archive_entry_set_mode)
#define archive_entry_set_mtime (*sbx_dl_archive_entry_set_mtime)
#define archive_entry_set_pathname (*sbx_dl_archive_entry_set_pathname)
#define archive_entry_set_perm (*sbx_dl_archive_entry_set_perm)
#define archive_entry_set_rdev (*sbx_dl_archive_entry_set_rdev)
#define archive_entry_set_size (*sbx_dl_archive_entry_set_size)
#define archive_entry_set_symlink (*sbx_dl_archive_entry_set_symlink)
#define archive_entry_set_uid (*sbx_dl_archive_entry_set_uid)
#define archive_entry_size (*sbx_dl_archive_entry_size)
#define archive_entry_sparse_add_entry (*sbx_dl_archive_entry_sparse_add_entry)
#define archive_entry_symlink (*sbx_dl_archive_entry_symlink)
#define archive_entry_uid (*sbx_dl_archive_entry_uid)
#define archive_entry_xattr_add_entry (*sbx_dl_archive_entry_xattr_add_entry)
#define archive_entry_xattr_next (*sbx_dl_archive_entry_xattr_next)
#define archive_entry_xattr_reset (*sbx_dl_archive_entry_xattr_reset)
#define archive_error_string (*sbx_dl_archive_error_string)
#define archive_filter_code (*sbx_dl_archive_filter_code)
#define archive_read_data (*sbx_dl_archive_read_data)
#define archive_read_data_block (*sbx_dl_archive_read_data_block)
#define archive_read_free (*sbx_dl_archive_read_free)
#define archive_read_new (*sbx_dl_archive_read_new)
#define archive_read_next_header (*sbx_dl_archive_read_next_header)
#define archive_read_open (*sbx_dl_archive_read_open)
#define archive_read_open_fd (*sbx_dl_archive_read_open_fd)
#define archive_read_support_filter_zstd (*sbx_dl_archive_read_support_filter_zstd)
#define archive_read_support_format_tar (*sbx_dl_archive_read_support_format_tar)
#define archive_write_add_filter_zstd (*sbx_dl_archive_write_add_filter_zstd)
#define archive_write_close (*sbx_dl_archive_write_close)
#define archive_write_data (*sbx_dl_archive_write_data)
#define archive_write_free (*sbx_dl_archive_write_free)
#define archive_write_header (*sbx_dl_archive_write_header)
#define archive_write_new (*sbx_dl_archive_write_new)
#define archive_write_open (*sbx_dl_archive_write_open)
#define archive_write_open_fd (*sbx_dl_archive_write_open_fd)
#define archive_write_set_bytes_in_last_block (*sbx_dl_archive_write_set_bytes_in_last_block)
#define archive_write_set_filter_option (*sbx_dl_archive_write_set_filter_option)
#define archive_write_set_format_pax_restricted (*sbx_dl_archive_write_set_format_pax_restricted)
#endif

#endif
