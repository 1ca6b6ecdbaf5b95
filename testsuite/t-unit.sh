#!/bin/bash
# Unit tests written in C: the namespace rule and the Module.symvers reader.
. "$(dirname "$0")/lib.sh"
for t in test-rule test-symvers; do
	$W "$B/testsuite/$t" || echo "FAIL: $t exited $?"
done
