// SPDX-License-Identifier: LGPL-2.1-or-later
/* kmodns_kernel_set_policy_reader(): read only for a module that uses a namespace, once, and a
 * failed read fails the check and is tried again. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "libkmodns.h"

static int failures;
static unsigned reads;
static int read_result = -EIO;
static const char *policy_path;

static void check(const char *name, int ok)
{
	printf("%s: %s\n", ok ? "PASS" : "FAIL", name);
	failures += !ok;
}

static int count_reads(struct kmodns_ctx *ctx, void *data, struct kmodns_policy **policy)
{
	reads++;
	if (read_result < 0)
		return read_result;
	return kmodns_policy_new_from_files(ctx, &policy_path, 1, policy);
}

/* The verdict on one record's text: the check's result, and the verdict in *status. */
static int judge(struct kmodns_kernel *k, const char *text, enum kmodns_load_status *status)
{
	struct kmodns_ns_record *rec;
	struct kmodns_load_verdict *v = NULL;
	int r = kmodns_ns_record_new_from_text(text, &rec);

	if (r < 0)
		return r;
	r = kmodns_kernel_check_record(k, "m", rec, &v);
	if (r == 0)
		*status = kmodns_load_verdict_get_status(v);
	kmodns_load_verdict_unref(v);
	kmodns_ns_record_unref(rec);
	return r;
}

int main(void)
{
	static const char plain[] = "kmodns-ns/1 vmlinux=known unresolved=0";
	static const char user[] = "kmodns-ns/1 vmlinux=known unresolved=0 import=NS require=NS,other,f,imported";
	char path[] = "/tmp/test-policy-reader.XXXXXX";
	struct kmodns_ctx *ctx = kmodns_new();
	struct kmodns_kernel *k = NULL;
	enum kmodns_load_status status = KMODNS_LOAD_ALLOWED;
	int fd = mkstemp(path);

	if (ctx == NULL || fd < 0 || write(fd, "refuse NS\n", 10) != 10 ||
	    kmodns_kernel_new(ctx, "6.12.0", "/nonexistent", &k) < 0) {
		fprintf(stderr, "test-policy-reader: setup failed\n");
		if (fd >= 0)
			unlink(path);
		kmodns_kernel_unref(k);
		kmodns_unref(ctx);
		return 2;
	}
	close(fd);
	policy_path = path;
	kmodns_kernel_set_policy_reader(k, count_reads, NULL);

	check("unread-for-no-namespace", judge(k, plain, &status) == 0 && reads == 0 &&
						 status == KMODNS_LOAD_ALLOWED);
	check("failed-read-fails-check", judge(k, user, &status) == -EIO && reads == 1);
	check("failed-read-tried-again", judge(k, user, &status) == -EIO && reads == 2);
	read_result = 0;
	check("read-applies", judge(k, user, &status) == 0 && reads == 3 && status == KMODNS_LOAD_REFUSED);
	check("read-once", judge(k, user, &status) == 0 && reads == 3 && status == KMODNS_LOAD_REFUSED);
	kmodns_kernel_set_policy(k, NULL);
	check("set-policy-replaces-reader", judge(k, user, &status) == 0 && reads == 3 &&
						    status == KMODNS_LOAD_ALLOWED);

	unlink(path);
	kmodns_kernel_unref(k);
	kmodns_unref(ctx);
	return failures ? 1 : 0;
}
