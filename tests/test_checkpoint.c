/* Tests of the checkpoint container: round trip, and refusal of truncated,
 * bit-flipped, wrong-version and foreign files; interrupted saves never leave
 * a damaged file under the target name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "train/checkpoint.h"

static char dir[256];

static int setup(void **state) {
    (void)state;
    return lg_test_tmpdir(dir, sizeof dir, "lg_ckpt");
}

static int teardown(void **state) {
    (void)state;
    return lg_test_rmtree(dir);
}

static unsigned char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(*n ? *n : 1);
    if (fread(b, 1, *n, f) != *n) { free(b); b = NULL; }
    fclose(f);
    return b;
}

static void spit(const char *path, const unsigned char *b, size_t n) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    fclose(f);
}

static const float params[5] = {1.5f, -2.0f, 0.0f, 3.25f, 1e-30f};
static const char config[] = "model=gat layers=2";

static void save_sample(const char *path) {
    lg_ckpt_section s[3] = {{1, sizeof params, params}, {2, sizeof config, config}, {3, 0, NULL}};
    assert_ok(lg__ckpt_save(path, s, 3, -1));
}

static void test_round_trip(void **state) {
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/a.ckpt", dir);
    save_sample(path);
    lg_ckpt *c = NULL;
    assert_ok(lg__ckpt_load(&c, path));
    assert_int_equal(c->count, 3);
    const lg_ckpt_section *p = lg__ckpt_find(c, 1), *q = lg__ckpt_find(c, 2), *e = lg__ckpt_find(c, 3);
    assert_non_null(p);
    assert_non_null(q);
    assert_non_null(e);
    assert_null(lg__ckpt_find(c, 9));
    assert_int_equal(p->length, sizeof params);
    assert_memory_equal(p->data, params, sizeof params);
    assert_string_equal((const char *)q->data, config);
    assert_int_equal(e->length, 0);
    lg__ckpt_free(c);
    lg__ckpt_free(NULL);
    /* no temporary file is left behind */
    char tmp[320];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    assert_int_not_equal(access(tmp, F_OK), 0);
}

static void test_truncated_and_flipped(void **state) {
    (void)state;
    char path[300], bad[300];
    snprintf(path, sizeof path, "%s/b.ckpt", dir);
    snprintf(bad, sizeof bad, "%s/bad.ckpt", dir);
    save_sample(path);
    size_t n;
    unsigned char *b = slurp(path, &n);
    assert_non_null(b);
    lg_ckpt *c = NULL;
    for (size_t len = 0; len < n; len++) { /* every truncation */
        spit(bad, b, len);
        lg_status st = lg__ckpt_load(&c, bad);
        assert_int_equal(st, LG_EPARSE);
        assert_null(c);
        assert_non_null(strstr(lg_last_error(), "bad.ckpt"));
    }
    for (size_t bit = 0; bit < 8 * n; bit++) { /* every single-bit flip */
        b[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        spit(bad, b, n);
        assert_int_equal(lg__ckpt_load(&c, bad), LG_EPARSE);
        b[bit / 8] ^= (unsigned char)(1u << (bit % 8));
    }
    /* a surplus byte is refused too */
    unsigned char *longer = malloc(n + 1);
    memcpy(longer, b, n);
    longer[n] = 0;
    spit(bad, longer, n + 1);
    assert_int_equal(lg__ckpt_load(&c, bad), LG_EPARSE);
    free(longer);
    free(b);
}

static void test_wrong_version_and_foreign(void **state) {
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/v.ckpt", dir);
    save_sample(path);
    size_t n;
    unsigned char *b = slurp(path, &n);
    b[8] = 99; /* version 99, with a valid checksum */
    uint64_t h = lg__fnv1a(LG_FNV_START, b, n - 8);
    for (int k = 0; k < 8; k++) b[n - 8 + k] = (unsigned char)(h >> (8 * k));
    spit(path, b, n);
    lg_ckpt *c = NULL;
    assert_int_equal(lg__ckpt_load(&c, path), LG_EPARSE);
    assert_non_null(strstr(lg_last_error(), "version 99"));
    free(b);
    const unsigned char text[] = "%%MatrixMarket matrix coordinate pattern general\n1 1 0\n";
    spit(path, text, sizeof text - 1);
    assert_int_equal(lg__ckpt_load(&c, path), LG_EPARSE);
    assert_non_null(strstr(lg_last_error(), "not a lipgnn checkpoint"));
    snprintf(path, sizeof path, "%s/none.ckpt", dir);
    assert_int_equal(lg__ckpt_load(&c, path), LG_EIO);
    assert_int_equal(lg__ckpt_load(&c, dir), LG_EIO); /* a directory */
}

/* A save that dies after k bytes, for every k: the target keeps its old
 * contents, byte for byte. */
static void test_interrupted_save(void **state) {
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/i.ckpt", dir);
    const char old[] = "previous";
    lg_ckpt_section s0 = {7, sizeof old, old};
    assert_ok(lg__ckpt_save(path, &s0, 1, -1));
    size_t n0;
    unsigned char *before = slurp(path, &n0);
    lg_ckpt_section s[2] = {{1, sizeof params, params}, {2, sizeof config, config}};
    size_t full = 16 + 2 * 16 + sizeof params + sizeof config + 8;
    for (long long k = 0; k < (long long)full; k++) {
        assert_int_equal(lg__ckpt_save(path, s, 2, k), LG_EIO);
        size_t n1;
        unsigned char *after = slurp(path, &n1);
        assert_int_equal(n1, n0);
        assert_memory_equal(after, before, n0);
        free(after);
        lg_ckpt *c = NULL;
        assert_ok(lg__ckpt_load(&c, path));
        lg__ckpt_free(c);
    }
    free(before);
    /* the completed save replaces it */
    assert_ok(lg__ckpt_save(path, s, 2, (long long)full));
    lg_ckpt *c = NULL;
    assert_ok(lg__ckpt_load(&c, path));
    assert_int_equal(c->count, 2);
    lg__ckpt_free(c);
    /* an unwritable place is an error, not a crash */
    assert_int_equal(lg__ckpt_save("/nonexistent-dir/x.ckpt", s, 2, -1), LG_EIO);
}

static lg_status load_attempt(void *ctx, long k) {
    (void)k;
    lg_ckpt *c = NULL;
    lg_status st = lg__ckpt_load(&c, ctx);
    lg__ckpt_free(c);
    return st;
}

/* The save replaces its target by a rename: a symbolic link is followed (the
 * link stays a link, its file gets the checkpoint), and a target that is not
 * a regular file is refused and left alone (as root, --save /dev/null made
 * /dev/null a regular file). */
static void test_save_targets(void **state) {
    (void)state;
    char file[300], link[300], fifo[300], sub[300];
    snprintf(file, sizeof file, "%s/real.ckpt", dir);
    snprintf(link, sizeof link, "%s/latest.ckpt", dir);
    snprintf(fifo, sizeof fifo, "%s/pipe", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    spit(file, (const unsigned char *)"old", 3);
    assert_int_equal(symlink("real.ckpt", link), 0);
    save_sample(link);
    struct stat sb;
    assert_int_equal(lstat(link, &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    lg_ckpt *c = NULL;
    assert_ok(lg__ckpt_load(&c, file));
    assert_int_equal(c->count, 3);
    lg__ckpt_free(c);
    /* a link to a file not there yet: the file is made, the link kept */
    char dangling[300], target[300];
    snprintf(dangling, sizeof dangling, "%s/next.ckpt", dir);
    snprintf(target, sizeof target, "%s/next-real.ckpt", dir);
    assert_int_equal(symlink("next-real.ckpt", dangling), 0);
    save_sample(dangling);
    assert_int_equal(lstat(dangling, &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    c = NULL;
    assert_ok(lg__ckpt_load(&c, target));
    lg__ckpt_free(c);
    /* a pipe and a directory: refused, untouched */
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(mkdir(sub, 0700), 0);
    lg_ckpt_section s[1] = {{1, sizeof params, params}};
    assert_int_equal(lg__ckpt_save(fifo, s, 1, -1), LG_EIO);
    assert_non_null(strstr(lg_last_error(), "not a regular file (a pipe)"));
    assert_int_equal(stat(fifo, &sb), 0);
    assert_true(S_ISFIFO(sb.st_mode));
    assert_int_equal(lg__ckpt_save(sub, s, 1, -1), LG_EIO);
    assert_non_null(strstr(lg_last_error(), "not a regular file (a directory)"));
    assert_int_equal(stat(sub, &sb), 0);
    assert_true(S_ISDIR(sb.st_mode));
    /* loading them: refused at once (opening a pipe that has no writer used
     * to wait for one, forever) */
    c = NULL;
    assert_int_equal(lg__ckpt_load(&c, fifo), LG_EIO);
    assert_non_null(strstr(lg_last_error(), "not a regular file (a pipe)"));
    assert_null(c);
    assert_int_equal(lg__ckpt_load(&c, sub), LG_EIO);
    assert_non_null(strstr(lg_last_error(), "not a regular file (a directory)"));
    /* a missing directory: refused by the public check as by the save */
    char lost[320];
    snprintf(lost, sizeof lost, "%s/none/x.ckpt", dir);
    assert_int_equal(lg_trainer_save_check(lost), LG_EIO);
    assert_non_null(strstr(lg_last_error(), "cannot create a file in"));
    assert_int_equal(lg__ckpt_save(lost, s, 1, -1), LG_EIO);
    assert_ok(lg_trainer_save_check(file));
    assert_ok(lg_trainer_save_check(link));
}

static void test_out_of_memory(void **state) {
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/m.ckpt", dir);
    save_sample(path);
    lg_test_alloc_sweep(load_attempt, path, 20);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip), cmocka_unit_test(test_truncated_and_flipped),
        cmocka_unit_test(test_wrong_version_and_foreign), cmocka_unit_test(test_interrupted_save),
        cmocka_unit_test(test_save_targets), cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
