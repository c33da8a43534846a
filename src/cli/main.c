/*
 * lipgnn: the command-line tool. main() gives closed standard streams
 * /dev/null (lg_cli_std_fds), fixes the OpenBLAS core type, OpenMP's waiting
 * and the worker threads' stacks if needed (lg_cli_env_fix), moves the
 * command off a small main-thread stack (lg_cli_small_stack) and dispatches
 * to the subcommands.
 */
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cli/cli.h"

/* Under a stack limit (ulimit -s) below LG_CLI_STACK_MIN_MIB MiB, the command
 * runs on a thread with a stack of LG_CLI_STACK_MIB MiB, and libgomp's worker
 * threads get OMP_STACKSIZE of the same size (lg_cli_env_fix). */
#define LG_CLI_STACK_MIN_MIB 1
#define LG_CLI_STACK_MIB 8
#define LG_CLI_STR_(x) #x
#define LG_CLI_STR(x) LG_CLI_STR_(x)

static const char lg__usage[] =
    "Usage: lipgnn COMMAND [OPTIONS]\n"
    "Graph neural networks with Lipschitz-normalised attention.\n"
    "\n"
    "Commands:\n"
    "  demo        the main job: a deep GAT without and with LipschitzNorm on a built-in SBM\n"
    "  depth-study accuracy against depth: a grid of models, depths, norms and seeds (CSV, table, SVG)\n"
    "  gradmap     SVG heat-map of per-layer gradient norms (layer x epoch) from --grad-log files\n"
    "  info        describe a data set (nodes, edges, features, classes, splits, degrees)\n"
    "  lipschitz   per-layer Lipschitz estimates of a checkpoint beside their bounds (CSV, SVG)\n"
    "  predict     evaluate a checkpoint; export predictions, embeddings, attention weights\n"
    "  train       train a deep GAT, graph transformer, L2 or cosine attention model or a baseline;\n"
    "              log gradient norms, detect explosions\n"
    "\n"
    "Options:\n"
    "  -h, --help     this help; `lipgnn COMMAND --help` for a command's options\n"
    "  -V, --version  the version, the OpenBLAS core type and lipgnn's kernel instruction set\n"
    "  (help and version, without dashes, are the same)\n"
    "\n"
    "Environment:\n"
    "  LIPGNN_DATA        directory that --dataset NAME looks in (e.g. holding cora/, pubmed/)\n"
    "  OPENBLAS_CORETYPE  OpenBLAS kernel family. When unset and OpenBLAS picks a slower\n"
    "                     one than the CPU supports (Debian's 0.3.21 on AVX-512 CPUs),\n"
    "                     lipgnn restarts itself with the best one and says so on stderr.\n"
    "                     A type you set is kept; train, demo and depth-study say so\n"
    "                     when it is slower than the best one for this CPU, or when\n"
    "                     OpenBLAS did not take it (a name it does not know). A type\n"
    "                     this CPU cannot execute (SkylakeX without AVX-512) would stop\n"
    "                     OpenBLAS with SIGILL: lipgnn restarts with the best one instead.\n"
    "  OMP_NUM_THREADS    threads of lipgnn's kernels (default: all cores; 1024 at most)\n"
    "  OMP_STACKSIZE      stack of lipgnn's OpenMP worker threads. Under a stack limit\n"
    "                     below " LG_CLI_STR(LG_CLI_STACK_MIN_MIB) " MiB (ulimit -s), which they would follow, lipgnn\n"
    "                     restarts with OMP_STACKSIZE=" LG_CLI_STR(LG_CLI_STACK_MIB) "M when neither it nor\n"
    "                     GOMP_STACKSIZE is set, and runs the command on a thread\n"
    "                     with a stack of that size\n"
    "  OMP_WAIT_POLICY,   how OpenMP threads wait at a barrier. When both are unset,\n"
    "  GOMP_SPINCOUNT     " LG_CLI_COMPUTING "\n"
    "                     restart themselves once with GOMP_SPINCOUNT=" LG_CLI_SPINCOUNT " (a short\n"
    "                     spin, then sleep: fast on an idle machine, little time lost to\n"
    "                     a descheduled thread on a busy one); a setting of yours is\n"
    "                     kept. --version says which applies\n"
    "  OPENBLAS_NUM_THREADS  lipgnn runs every OpenBLAS product on a thread of its own,\n"
    "                     never on OpenBLAS's. It sets this to 1 when it restarts\n"
    "                     (above), and restarts for this alone under an address-space\n"
    "                     or data limit (ulimit -v, -d), so that OpenBLAS starts no\n"
    "                     threads: each maps a buffer of 128 MiB, and OpenBLAS 0.3.21\n"
    "                     retries one that does not fit forever (a hang). Commands\n"
    "                     that compute end with a message when a limit leaves too\n"
    "                     little for the buffers of lipgnn's own threads\n"
    "  LIPGNN_ISA         'baseline' or 'avx2' caps the instruction set of lipgnn's own\n"
    "                     kernels (default: the best of baseline, avx2, avx512 that CPUID\n"
    "                     reports; all give the same results, the wider ones faster).\n"
    "                     avx512 and auto cap nothing; any other value is ignored,\n"
    "                     which --version, train, demo and depth-study say\n"
    "\n"
    "Exit status: 0 success, 1 failure, 2 bad usage or bad input data, 3 training stopped\n"
    "on a gradient explosion (--stop-on-explosion), 130 / 143 / 129 interrupted (SIGINT,\n"
    "SIGTERM, SIGHUP).\n";

/* Debian's OpenBLAS 0.3.21 picks a generic kernel on AVX-512 CPUs and then runs
 * sgemm 2-5x slower. OPENBLAS_CORETYPE is only read when OpenBLAS loads, which
 * happens before main(): so when it is unset and a better core exists, set it
 * and re-execute this program, once, saying so. A core type the user set is
 * never touched, unless this CPU cannot run it (lg_blas_info.unsupported:
 * OpenBLAS 0.3.21 takes OPENBLAS_CORETYPE=SkylakeX on a CPU without AVX-512,
 * and its first product would stop the process with SIGILL): then the same
 * restart with the best core, or with OpenBLAS's own choice when CPUID names
 * none, said as loudly. Should that fail, the library's operations return
 * LG_EUNSUPPORTED and the command ends with that error.
 *
 * libgomp reads its wait policy when it loads too. Its default spins 300 000
 * times at every barrier before sleeping, which on a machine with more
 * runnable processes than cores makes each of an epoch's short parallel
 * regions wait for a partner that is not running (a 30-layer epoch 100x
 * slower); OMP_WAIT_POLICY=passive never spins, and each region then pays for
 * waking the other thread (a 64-wide epoch 25-60% slower on an idle machine).
 * So when neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT is set, the commands
 * that compute (lg_cli_computes) run with GOMP_SPINCOUNT=LG_CLI_SPINCOUNT, a
 * short spin, set by the same single restart (quietly: --version and the
 * JSON results say so). Results do not depend on it.
 *
 * OpenBLAS also starts, when it loads, a thread for each core but one, each
 * of which maps a working buffer of 128 MiB; lipgnn runs its products on its
 * own threads (lg_set_threads) and never uses them. Under an address-space
 * or data limit (RLIMIT_AS, RLIMIT_DATA) a buffer that does not fit makes
 * OpenBLAS 0.3.21 retry forever: those threads spin and the process hangs
 * when it exits, whatever the command. So the restart also sets
 * OPENBLAS_NUM_THREADS=1, and happens for that alone when such a limit is set
 * and OpenBLAS has threads. (The buffers of lipgnn's own threads are the
 * library's to check: lg__blas_room.)
 *
 * A small stack limit (ulimit -s under LG_CLI_STACK_MIN_MIB) also reaches
 * libgomp's worker threads, whose stacks glibc sizes by it when
 * OMP_STACKSIZE is unset, and OpenBLAS keeps about 60 KB of thread-local
 * data in each: under 96 KB a worker's dgemm overflowed (SIGSEGV). So the
 * restart also sets OMP_STACKSIZE to LG_CLI_STACK_MIB MiB when a small limit is set
 * and neither OMP_STACKSIZE nor GOMP_STACKSIZE is (worker stacks are
 * mapped memory, which that limit does not bound; main() moves the
 * command itself off the small stack: lg_cli_small_stack). */
static int lg_cli_computes(int argc, char **argv) {
    /* the commands LG_CLI_COMPUTING names */
    static const char *const cmds[] = {"train", "demo", "depth-study", "predict", "lipschitz"};
    if (argc < 2) return 0;
    for (size_t k = 0; k < sizeof cmds / sizeof *cmds; k++)
        if (!strcmp(argv[1], cmds[k])) return 1;
    return 0;
}

/* 1 when the stack limit (RLIMIT_STACK's soft one) is under
 * LG_CLI_STACK_MIN_MIB MiB: the main thread's stack, and the default of other
 * threads', are that small. */
static int lg_cli_small_stack(void) {
    struct rlimit st;
    return getrlimit(RLIMIT_STACK, &st) == 0 && st.rlim_cur != RLIM_INFINITY &&
           st.rlim_cur < ((rlim_t)LG_CLI_STACK_MIN_MIB << 20);
}

/* An OMP_NUM_THREADS that libgomp refused (it warned, and runs all cores)
 * is replaced by that count for the processes this one starts (the restart
 * of lg_cli_env_fix, depth-study's workers), so that the warning is printed
 * once and they run as this one does. */
static void lg_cli_threads_env_fix(void) {
    unsigned long v;
    char num[16];
    if (lg_cli_env_threads(&v) >= 0) return;
    snprintf(num, sizeof num, "%d", omp_get_max_threads());
    (void)setenv("OMP_NUM_THREADS", num, 1); /* on failure the warning is only repeated */
}

static void lg_cli_env_fix(int argc, char **argv) {
    lg_blas_info bi;
    lg_blas_check(&bi);
    const int bad = bi.unsupported && !getenv("LIPGNN_BLAS_REEXEC");
    const int blas = bad || (bi.recommend && !getenv("LIPGNN_BLAS_REEXEC"));
    const int spin = lg_cli_computes(argc, argv) && !getenv("OMP_WAIT_POLICY") && !getenv("GOMP_SPINCOUNT") &&
                     !getenv("LIPGNN_OMP_REEXEC");
    const char *obt = getenv("OPENBLAS_NUM_THREADS");
    const int pool_one = bi.threads <= 1 || (obt && !strcmp(obt, "1")); /* "1": set, by the user or the restart */
    struct rlimit as, data;
    const int limited = (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) ||
                        (getrlimit(RLIMIT_DATA, &data) == 0 && data.rlim_cur != RLIM_INFINITY);
    const int stack = lg_cli_small_stack() && !getenv("OMP_STACKSIZE") && !getenv("GOMP_STACKSIZE");
    if (!blas && !spin && !stack && (pool_one || !limited)) return;
    /* kept should the restart fail: it only reaches the processes this one
     * starts (depth-study's workers, lipgnn again) */
    if (!pool_one && setenv("OPENBLAS_NUM_THREADS", "1", 1) != 0) return;
    if (stack && setenv("OMP_STACKSIZE", LG_CLI_STR(LG_CLI_STACK_MIB) "M", 1) != 0) return;
    if (bad) {
        const char *env = getenv("OPENBLAS_CORETYPE");
        fprintf(stderr,
                "lipgnn: %s%s%sOpenBLAS's '%s' kernels, which need instructions this CPU does not have (its "
                "first dense product would stop lipgnn); restarting with %s%s\n",
                env && *env ? "OPENBLAS_CORETYPE=" : "", env && *env ? env : "", env && *env ? " selects " : "",
                bi.current, bi.best[0] ? "OPENBLAS_CORETYPE=" : "OpenBLAS's own choice", bi.best);
        fflush(stderr);
        if ((bi.best[0] ? setenv("OPENBLAS_CORETYPE", bi.best, 1) : unsetenv("OPENBLAS_CORETYPE")) != 0 ||
            setenv("LIPGNN_BLAS_REEXEC", bi.current, 1) != 0)
            return;
    } else if (blas) {
        fprintf(stderr,
                "lipgnn: OpenBLAS selected its '%s' kernels, but this CPU runs '%s' (sgemm up to 5x "
                "faster); restarting with OPENBLAS_CORETYPE=%s (set OPENBLAS_CORETYPE yourself to "
                "choose another)\n",
                bi.current, bi.best, bi.best);
        fflush(stderr);
        if (setenv("OPENBLAS_CORETYPE", bi.best, 1) != 0 || setenv("LIPGNN_BLAS_REEXEC", bi.current, 1) != 0)
            return;
    }
    if (spin && (setenv("GOMP_SPINCOUNT", LG_CLI_SPINCOUNT, 1) != 0 || setenv("LIPGNN_OMP_REEXEC", "1", 1) != 0))
        return;
    execv("/proc/self/exe", argv);
    /* exec failed: carry on with the slower kernels and libgomp's default rather than fail */
    if (bad)
        fprintf(stderr,
                "lipgnn: could not restart (commands that compute will fail: OpenBLAS's '%s' kernels cannot run "
                "here)\n",
                bi.current);
    else if (blas) {
        fprintf(stderr, "lipgnn: could not restart (continuing with OpenBLAS '%s')\n", bi.current);
        unsetenv("OPENBLAS_CORETYPE");
    }
    if (spin) {
        unsetenv("GOMP_SPINCOUNT");
        unsetenv("LIPGNN_OMP_REEXEC");
    }
}

static int lg_cli_version(void) {
    lg_blas_info bi;
    lg_blas_check(&bi);
    const char *fixed = getenv("LIPGNN_BLAS_REEXEC");
    printf("lipgnn %s\n", lg_version());
    printf("OpenBLAS core: %s (best for this CPU: %s; %s)\n", bi.current, bi.best[0] ? bi.best : "unknown",
           bi.unsupported    ? "this CPU cannot run it: commands that compute fail"
           : fixed && !bi.user_set ? "detected by OpenBLAS, after lipgnn unset OPENBLAS_CORETYPE"
           : fixed           ? "set by lipgnn"
           : bi.user_ignored ? "detected by OpenBLAS, which did not take OPENBLAS_CORETYPE"
           : bi.user_set     ? "set by OPENBLAS_CORETYPE"
                             : "detected by OpenBLAS");
    lg_isa_info ii;
    lg_kernel_isa_info(&ii);
    if (ii.env && ii.env_valid && strcmp(ii.chosen, ii.cpu) != 0)
        printf("lipgnn kernels: %s (LIPGNN_ISA=%s caps this CPU's %s; same results)\n", ii.chosen, ii.env, ii.cpu);
    else if (ii.env && !ii.env_valid)
        printf("lipgnn kernels: %s (CPUID; LIPGNN_ISA=%s is not " LG_CLI_ISA_VALUES ": ignored)\n",
               ii.chosen, ii.env);
    else
        printf("lipgnn kernels: %s (CPUID; LIPGNN_ISA=baseline|avx2 caps it; same results)\n", ii.chosen);
    char wait[LG_CLI_OMP_WAIT_CAP];
    printf("OpenMP waiting: %s\n", lg_cli_omp_wait(wait, sizeof wait, 1));
    return LG_EXIT_OK;
}

/* Standard input, output or error closed when lipgnn starts (`2>&-`): the
 * first file the command opened took that number, and what was meant for
 * the closed stream went into it (--verbose's epoch lines into --log's CSV).
 * So each closed one is given /dev/null, opened the way that keeps it
 * unusable as the closed descriptor was (read-only for output, write-only
 * for input, as gnulib's stdopen does): writes to a closed standard output
 * still fail, and the command says so. */
static void lg_cli_std_fds(void) {
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
        const int got = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
        if (got >= 0 && got != fd) close(got); /* a lower one was closed too: taken in its turn */
    }
}

/* The command line after the restart: the command's exit status. */
static int lg_cli_main(int argc, char **argv) {
    if (argc < 2) {
        fputs(lg__usage, stderr);
        return LG_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    /* every command's name once: the dispatch, and the "did you mean" of an
     * unknown one (help and version, handled above and below, run nothing) */
    static const struct {
        const char *name;
        int (*run)(int, char **);
    } cmds[] = {{"info", lg_cmd_info},       {"train", lg_cmd_train},           {"demo", lg_cmd_demo},
                {"predict", lg_cmd_predict}, {"depth-study", lg_cmd_depth_study}, {"gradmap", lg_cmd_gradmap},
                {"lipschitz", lg_cmd_lipschitz}, {"help", NULL},                 {"version", NULL}};
    enum { NCMD = sizeof cmds / sizeof *cmds };
    int rc = -1;
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) { /* closed below, as the others */
        fputs(lg__usage, stdout);
        rc = LG_EXIT_OK;
    }
    if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version") || !strcmp(cmd, "version")) rc = lg_cli_version();
    for (int k = 0; rc < 0 && k < NCMD; k++)
        if (cmds[k].run && !strcmp(cmd, cmds[k].name)) rc = cmds[k].run(argc - 1, argv + 1);
    if (rc >= 0) {
        /* what went to standard output (a table, --json's object) is part of
         * the result: a write that failed there (a full disk) fails the command */
        if (lg_cli_close_out(cmd[0] == '-' ? NULL : cmd, stdout, "standard output") != 0 && rc == LG_EXIT_OK)
            rc = LG_EXIT_FAIL;
        return rc;
    }
    const char *names[NCMD];
    for (int k = 0; k < NCMD; k++) names[k] = cmds[k].name;
    const char *close = lg_cli_closest(cmd, names, NCMD);
    for (int k = 0; !close && *cmd && k < NCMD; k++)
        if (!strncmp(names[k], cmd, strlen(cmd))) close = names[k]; /* "depth" -> "depth-study" */
    if (close) lg_cli_errorf(NULL, "unknown command '%s' (did you mean '%s'? see 'lipgnn --help')", cmd, close);
    else lg_cli_errorf(NULL, "unknown command '%s' (see 'lipgnn --help')", cmd);
    return LG_EXIT_USAGE;
}

/* The command on a thread of its own, whose stack is LG_CLI_STACK_MIB MiB of
 * mapped memory, for when the main thread's stack is small (lg_cli_small_stack):
 * the kernels' OpenMP master thread is then this one, and a small ulimit -s
 * bounds neither. Signals are left to it (main blocks them all), so that a
 * Ctrl-C interrupts what the command waits in, as it would on the main thread. */
struct lg_cli_run {
    int argc;     /* main's argc */
    char **argv;  /* main's argv */
    int rc;       /* out: the exit status */
    sigset_t old; /* the signal mask to restore on the command's thread */
};

static void *lg_cli_run_thread(void *arg) {
    struct lg_cli_run *r = arg;
    pthread_sigmask(SIG_SETMASK, &r->old, NULL);
    r->rc = lg_cli_main(r->argc, r->argv);
    return NULL;
}

int main(int argc, char **argv) {
    lg_cli_std_fds();
    lg_cli_threads_env_fix();
    lg_cli_env_fix(argc, argv);
    if (!lg_cli_small_stack()) return lg_cli_main(argc, argv);
    struct lg_cli_run r = {.argc = argc, .argv = argv, .rc = LG_EXIT_FAIL};
    sigset_t all;
    pthread_attr_t attr;
    pthread_t th;
    /* should any step fail (no room for the thread), the command runs on this
     * stack, as before */
    if (sigfillset(&all) != 0 || pthread_attr_init(&attr) != 0) return lg_cli_main(argc, argv);
    if (pthread_attr_setstacksize(&attr, (size_t)LG_CLI_STACK_MIB << 20) != 0 ||
        pthread_sigmask(SIG_BLOCK, &all, &r.old) != 0) {
        pthread_attr_destroy(&attr);
        return lg_cli_main(argc, argv);
    }
    const int made = pthread_create(&th, &attr, lg_cli_run_thread, &r) == 0;
    pthread_attr_destroy(&attr);
    if (!made) {
        pthread_sigmask(SIG_SETMASK, &r.old, NULL);
        return lg_cli_main(argc, argv);
    }
    pthread_join(th, NULL);
    return r.rc;
}
