#!/bin/bash
# Unit tests written in C: the namespace rule, the Module.symvers reader, module names of
# paths, the namespace record.
. "$(dirname "$0")/lib.sh"
for t in test-rule test-symvers test-modname test-record; do
	$W "$B/testsuite/$t" || echo "FAIL: $t exited $?"
done
