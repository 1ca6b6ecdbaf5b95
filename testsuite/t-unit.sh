#!/bin/bash
# Unit tests written in C: the namespace rule, the Module.symvers reader, module names of
# paths, the namespace record, the policy read at the first need.
. "$(dirname "$0")/lib.sh"
for t in test-rule test-symvers test-modname test-record test-policy-reader; do
	$W "$B/testsuite/$t" || echo "FAIL: $t exited $?"
done
