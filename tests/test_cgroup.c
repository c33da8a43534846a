/* Tests of lg_cli_cgroup_memory (src/cli/common.c): the memory limit of the
 * process's control group, read from trees of files laid out as the kernel
 * lays out /proc/self/cgroup and /sys/fs/cgroup (v1, v2, both, a
 * container's namespace, no limit, unreadable or malformed files). The real
 * files are checked by tests/test_cli.sh limits, where a group can be made. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"
#include "cli/cli.h"

#define GiB (1024.0 * 1024 * 1024)

static char dir[64]; /* the test's tree: dir/self (the group list), dir/fs/... */

/* Writes text to dir/rel, making its directories. */
static void put(const char *rel, const char *text) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    for (char *c = path + strlen(dir) + 1; *c; c++)
        if (*c == '/') {
            *c = '\0';
            mkdir(path, 0755);
            *c = '/';
        }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* lg_cli_cgroup_memory on the tree, in GiB */
static double limit_gib(void) {
    char self[128], root[128];
    snprintf(self, sizeof self, "%s/self", dir);
    snprintf(root, sizeof root, "%s/fs", dir);
    return lg_cli_cgroup_memory(self, root) / GiB;
}

static int setup(void **state) {
    (void)state;
    return lg_test_tmpdir(dir, sizeof dir, "lg_cgroup");
}

static int teardown(void **state) {
    (void)state;
    return lg_test_rmtree(dir);
}

static void test_v2(void **state) {
    (void)state;
    put("self", "0::/job/step\n");
    put("fs/job/step/memory.max", "max\n");
    put("fs/job/memory.max", "2147483648\n");
    assert_true(limit_gib() == 2.0); /* the group above's */
    put("fs/job/step/memory.max", "1073741824\n");
    assert_true(limit_gib() == 1.0); /* the smaller, the group's own */
    put("fs/job/memory.max", "max\n");
    put("fs/job/step/memory.max", "max\n");
    assert_true(limit_gib() == 0.0); /* none */
    put("fs/job/step/memory.max", "12abc\n");
    assert_true(limit_gib() == 0.0); /* not a number: none */
    put("fs/job/step/memory.max", "");
    assert_true(limit_gib() == 0.0);
}

static void test_v2_namespace(void **state) {
    (void)state;
    /* a container: its group is "/" there, and root holds its own files */
    put("self", "0::/\n");
    put("fs/memory.max", "1073741824\n");
    assert_true(limit_gib() == 1.0);
    /* a group path that is not under root (another namespace's view) */
    put("self", "0::/elsewhere/x\n");
    assert_true(limit_gib() == 1.0);
}

static void test_v1(void **state) {
    (void)state;
    put("self", "5:cpu,cpuacct:/\n4:memory:/slurm/job_7\n1:name=systemd:/user\n");
    put("fs/memory/slurm/job_7/memory.stat", "cache 0\nhierarchical_memory_limit 4294967296\nrss 0\n");
    assert_true(limit_gib() == 4.0);
    /* no limit: the page-rounded LONG_MAX */
    put("fs/memory/slurm/job_7/memory.stat", "hierarchical_memory_limit 9223372036854771712\n");
    assert_true(limit_gib() == 0.0);
    /* memory among other controllers of one hierarchy */
    put("self", "3:cpuacct,memory:/j\n");
    put("fs/memory/j/memory.stat", "hierarchical_memory_limit 3221225472\n");
    assert_true(limit_gib() == 3.0);
    /* a controller whose name only starts with "memory" is not it */
    put("self", "3:memoryx:/j\n");
    assert_true(limit_gib() == 0.0);
}

static void test_both(void **state) {
    (void)state;
    /* v1's memory controller and the v2 hierarchy both mounted: the smaller */
    put("self", "4:memory:/a\n0::/b\n");
    put("fs/memory/a/memory.stat", "hierarchical_memory_limit 2147483648\n");
    put("fs/b/memory.max", "1073741824\n");
    assert_true(limit_gib() == 1.0);
    put("fs/b/memory.max", "max\n");
    assert_true(limit_gib() == 2.0);
}

static void test_unreadable(void **state) {
    (void)state;
    char self[128];
    snprintf(self, sizeof self, "%s/none", dir);
    assert_true(lg_cli_cgroup_memory(self, "/nonexistent") == 0.0);
    put("self", "garbage without colons\n::\n0:\n0::relative\n");
    assert_true(limit_gib() == 0.0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_v2, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v2_namespace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v1, setup, teardown),
        cmocka_unit_test_setup_teardown(test_both, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unreadable, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
