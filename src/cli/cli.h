/* Shared pieces of the lipgnn command-line tool. */
#ifndef LG_CLI_H
#define LG_CLI_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "lipgnn.h"

/* Exit statuses of the CLI. */
enum {
    LG_EXIT_OK = 0,
    LG_EXIT_FAIL = 1,     /* a run failed (out of memory, internal error)     */
    LG_EXIT_USAGE = 2,    /* bad option, bad value, or bad input data         */
    LG_EXIT_EXPLODED = 3, /* training stopped on a gradient explosion         */
};

/* Where a command's data set comes from: exactly one of data, dataset, trees,
 * sbm. */
typedef struct lg_cli_data {
    const char *data;     /* --data DIR                                       */
    const char *dataset;  /* --dataset NAME, under $LIPGNN_DATA               */
    int trees;            /* --trees DEPTH (0 = not given)                    */
    long long trees_count; /* --trees-count N                                 */
    long long sbm_nodes;  /* --sbm N[,M] (0 = not given): nodes ...           */
    long long sbm_edges;  /* ... and expected edges (0: the default, 4N)      */
    uint64_t seed;        /* --seed S                                         */
    int progress;         /* 1: a status line on stderr, a terminal, while the
                             data set is made or read (train sets it)        */
    const char *recorded_in; /* the checkpoint these options were read from
                             (lg_cli_data_from_checkpoint), or NULL: given  */
    unsigned given;       /* the data options given so far, a bit each
                             (lg_cli_data_option: a second one is refused)  */
} lg_cli_data;

/* The program name for messages ("lipgnn"). */
extern const char *lg_cli_prog;

/* Prints "lipgnn CMD: <message>" on stderr. */
void lg_cli_errorf(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Closes f (an output named path; NULL: nothing) and returns 0, or -1 after
 * "lipgnn CMD: PATH: write error: <reason>" when a write to it failed (its
 * error flag, or the flush at closing: a full disk). */
int lg_cli_close_out(const char *cmd, FILE *f, const char *path);

/* fflush(f): 0, or -1 when it failed, whose reason (errno) is kept for
 * standard output, for lg_cli_close_out's message (its data are gone by
 * then: the close finds nothing to write and no reason of its own). */
int lg_cli_flush(FILE *f);

/* Opens the regular file at path for reading (a FIFO is refused at once, not
 * waited on; a device or a directory is refused too). NULL with *missing = 1
 * and no message when nothing is at path; NULL with *missing = 0 after a
 * message naming path and the reason otherwise. */
FILE *lg_cli_open_regular(const char *cmd, const char *path, int *missing);

/* The files a command reads and writes, named by their options (opt[k],
 * e.g. "--out") and paths (path[k], NULL when not given), the first nout of
 * them written: -1 after a message when an output is the same file as an
 * input or as another output (the same device and inode, through any path or
 * link), which writing it would destroy or interleave, or is one of the files
 * the data set d (NULL: none) is read from (graph.mtx, edges.txt,
 * features.mtx, labels.txt, train.txt, val.txt, test.txt in the directory of
 * --data or --dataset: the same inode, or a name of those in that directory
 * when not there yet); else 0. O(n^2) stats. */
int lg_cli_check_clobber(const char *cmd, int n, int nout, const char *const *opt, const char *const *path,
                         const lg_cli_data *d);

/* Before a command computes: -1 after a message ("--out P: ..."; opt names
 * the option) when the output file path cannot be written: a directory, a
 * file without write permission, or a new file in a directory where none can
 * be made (missing, not a directory, unwritable: found by creating and
 * removing a probe file there, which access() cannot tell as root); else 0
 * (NULL path: 0). The file is not created or changed (a failed run must not
 * leave an old output truncated). O(1). */
int lg_cli_check_writable(const char *cmd, const char *opt, const char *path);

/* Before a command computes: -1 after a message ("--save P: ...", opt
 * naming the option) when lg_trainer_save_check(path) refuses path: not a
 * regular file, or no new file can be made beside the file it replaces
 * ("cannot create a file in /proc: No such file or directory"); else 0 (NULL
 * path: 0). */
int lg_cli_check_save(const char *cmd, const char *opt, const char *path);

/* lg_set_threads(n) for command cmd (n: --threads, or 0 for OMP_NUM_THREADS
 * or all cores), with a note on stderr when OMP_NUM_THREADS asks for more than
 * LG_MAX_THREADS. Returns the thread count in effect. */
int lg_cli_set_threads(const char *cmd, int n);

/* OMP_NUM_THREADS read as libgomp (GCC 12, env.c) reads it: white space, a
 * positive decimal number, white space, then optionally a comma and such a list
 * again. 1 with the first number in *v when libgomp takes it (a number beyond
 * INT_MAX included, which libgomp's int then wraps: 4294967297 gives 1
 * thread), 0 when unset, -1 when libgomp refused it (it warned on stderr when
 * the program loaded, and runs all cores). */
int lg_cli_env_threads(unsigned long *v);

/* How many signals stop training at the end of an epoch (the stop signals):
 * SIGINT (Ctrl-C), SIGTERM and SIGHUP (the terminal gone). */
#define LG_CLI_NSTOP 3

/* Sets act on each of the stop signals that was not ignored: one ignored
 * when lipgnn started (SIGINT in a script's background job, SIGHUP under
 * nohup) stays so, as the shells' convention has it. old (NULL: not kept)
 * receives the LG_CLI_NSTOP previous actions, for lg_cli_restore_stop. */
void lg_cli_catch_stop(const struct sigaction *act, struct sigaction *old);

/* Gives the stop signals back the actions lg_cli_catch_stop kept in old. */
void lg_cli_restore_stop(const struct sigaction *old);

/* "interrupted", "terminated" or "hung up": what a stop signal did. */
const char *lg_cli_stop_word(int sig);

/* Replaces the control bytes (below 0x20, and 0x7f) of s[0..n) by '?', in
 * place, so that text read from a file or a path prints on one line of a
 * terminal without moving its cursor. Returns s. */
char *lg_cli_printable(char *s, size_t n);

/* An accuracy for the text outputs: "%.4f" of v, or "n/a" when the split is
 * empty (have 0; the library gives 0 there). Returns buf (>= 16 bytes). */
const char *lg_cli_acc(char *buf, size_t cap, double v, int have);

/* The shortest "%.Ng" (N = 1..17) of a finite v that reads back as v (0.6,
 * not 0.59999999999999998), for JSON. Returns buf (>= 32 bytes). */
const char *lg_cli_shortest(char *buf, size_t cap, double v);

struct option;

/* The error for getopt_long's '?' on the argument arg (argv[optind - 1]),
 * printed for command cmd (its help: 'lipgnn CMD --help'): "--X needs a
 * value" when arg names (or uniquely abbreviates) an option of opts that
 * takes one, "--X takes no value" for "--X=V" on one that takes none, "--X is
 * ambiguous" with the options it abbreviates, else "unknown option" with the
 * option of opts or of extra (more option names without "--", NULL-ended;
 * extra may be NULL) closest to it when it lies within two edits ("did you
 * mean"). opts ends with a zero entry, as getopt_long's. */
void lg_cli_bad_option(const char *cmd, const char *arg, const struct option *opts, const char *const *extra);

/* The option of opts (zero-ended, or NULL) that getopt_long takes name[0..len)
 * for: the one of that exact name, else the only one it abbreviates; NULL when
 * none or several. *n: 1 for an exact name, else the count of options whose
 * names begin with it. O(options). */
const struct option *lg_cli_match_option(const struct option *opts, const char *name, size_t len, int *n);

/* 1 when arg is "--X" or "--X=V" with X a non-empty prefix of an option name
 * of opts (a zero-ended getopt_long table, or NULL) or of extra (names
 * without "--", NULL-ended, or NULL): what getopt_long would read as an
 * option there. */
int lg_cli_is_option(const char *arg, const struct option *opts, const char *const *extra);

/* For option opt ("--X") of command cmd, given value as the next argument:
 * when value is itself an option (lg_cli_is_option), prints "option '--X'
 * needs a value, but the argument after it, '--Y', is an option" (a value
 * that begins with "--" can still be given as --X=V) and returns -1; else 0.
 * The usual slip it catches is a forgotten value, "--norm --epochs 5", which
 * getopt_long would read as the norm "--epochs" and a stray "5". */
int lg_cli_check_value(const char *cmd, const char *opt, const char *value, const struct option *opts,
                       const char *const *extra);

/* getopt_long(argc, argv, "h", opts, idx) for command cmd, and its errors:
 * on an unknown, ambiguous or ill-formed option (lg_cli_bad_option), and on
 * an option that takes a value whose value, the next argument, is an option
 * (lg_cli_check_value), it prints the error and returns '?'; else what
 * getopt_long returns. extra: more option names, for the suggestions and the
 * check (as lg_cli_bad_option's). */
int lg_cli_getopt(const char *cmd, int argc, char **argv, const struct option *opts, int *idx,
                  const char *const *extra);

/* The train options' getopt_long table (zero-ended), which depth-study's own
 * options check their values against. */
const struct option *lg_cli_train_option_table(void);

/* The names of depth-study's own options (without "--"), NULL-ended: the
 * suggestions for a mistyped option of depth-study. */
extern const char *const lg_cli_depth_option_names[];

/* The closest of the n names to s within two edits (insertions, deletions,
 * substitutions, swaps of neighbours), and less than half of s's length;
 * NULL if none is. */
const char *lg_cli_closest(const char *s, const char *const *names, int n);

/* Strict number parsing: the whole string, within [lo, hi]; on failure prints
 * an error naming the option and returns -1. */
int lg_cli_parse_ll(const char *cmd, const char *opt, const char *s, long long lo, long long hi,
                    long long *out);
int lg_cli_parse_u64(const char *cmd, const char *opt, const char *s, uint64_t *out);
int lg_cli_parse_double(const char *cmd, const char *opt, const char *s, double lo, double hi,
                        double *out);

/* An option of the explosion detector, into its field of tc: opt is
 * "--explode-threshold" (> 0), "--explode-growth" (> 1) or "--explode-window"
 * (0..100000 epochs); the ranges train and gradmap share. On failure prints
 * an error naming opt and returns -1. */
int lg_cli_parse_explode(const char *cmd, const char *opt, const char *s, lg_train_config *tc);

/* A byte count: a number > 0 with an optional K, M, G or T (powers of 1024,
 * an optional B after it); on failure prints an error naming opt, returns -1. */
int lg_cli_parse_size(const char *cmd, const char *opt, const char *s, double *out);

/* The memory limit of this process's control group in bytes, 0 when none is
 * set or none can be read: what a batch job's memory request (SLURM's --mem)
 * or a container's limit sets, and past which the kernel ends the process
 * with SIGKILL. self is the process's group list (/proc/self/cgroup), root
 * where the groups are mounted (/sys/fs/cgroup). cgroup v2: the smallest
 * memory.max of the group and of the groups above it; v1: the memory
 * controller's hierarchical_memory_limit (memory.stat), which already counts
 * the groups above. Where the group's directory is not under root (a
 * container's namespace), root's own files. The smaller of the two when both
 * are mounted. */
double lg_cli_cgroup_memory(const char *self, const char *root);

/* The memory a run may use: max_memory if given (> 0), else the machine's
 * physical memory, or its control group's limit when smaller
 * (lg_cli_cgroup_memory); *what names it ("--max-memory", "this machine's
 * memory", ...) and *why says what passing it does (or ""). 0 if unknown. */
double lg_cli_memory_limit(double max_memory, const char **what, const char **why);

/* The unit for a message about the bytes limit (or about bytes near it): GiB,
 * or MiB, KiB or bytes when limit is below 1 GiB, 1 MiB or 1 KiB (0.00 GiB
 * says nothing: limit never prints as 0.00); returns its bytes, *u names it. */
double lg_cli_unit(double limit, const char **u);

/* *total = the memory of a run of (mc, tc) on ds: the model's estimate
 * (lg_trainer_estimate, into *est) and the data set beside it
 * (lg_dataset_bytes). lg_trainer_estimate's status. */
lg_status lg_cli_run_memory(const lg_model_config *mc, const lg_train_config *tc, const lg_dataset *ds,
                            lg_trainer_mem *est, double *total);

/* Refuses, before anything is allocated, a model whose estimated memory
 * (lg_cli_run_memory) exceeds the limit of lg_cli_memory_limit(max_memory),
 * with the estimate in the message. Returns 0, or the exit status after printing the
 * message. */
int lg_cli_memory_check(const char *cmd, const lg_model_config *mc, const lg_train_config *tc, const lg_dataset *ds,
                        double max_memory);

/* Handles one data option (--data, --dataset, --trees, --trees-count, --sbm,
 * --seed)
 * if `name` is one: returns 1 if handled, 0 if not a data option, -1 on a bad
 * value (message printed): one given before (d->given: "--data given twice",
 * as a second source is refused, not the last one kept), an empty --data or --dataset, a number out of
 * range, an --sbm the generator refuses (fewer than 2 nodes a class: 16, or
 * more edges than its blocks hold). */
int lg_cli_data_option(const char *cmd, lg_cli_data *d, const char *name, const char *value);

/* An option's path value: -1 after "OPT: an empty path" when value is NULL
 * or "" (which no file has: refused as the option is parsed), else 0. */
int lg_cli_path_value(const char *cmd, const char *opt, const char *value);

/* dir without its trailing slashes ("study/" -> "study", "/" kept), for the
 * paths made in it ("study/runs.csv", not "study//runs.csv"), into buf of cap
 * bytes; -1 when it does not fit, else 0. */
int lg_cli_trim_dir(char *buf, size_t cap, const char *dir);

/* Checks that exactly one source is given (message printed, -1 otherwise). */
int lg_cli_data_check(const char *cmd, const lg_cli_data *d);

/* Loads the data set described by d. A synthetic one (--trees, --sbm) is
 * first refused, with exit status 2 and a message, if the generator's
 * estimate of its peak (lg_trees_estimate, lg_sbm_estimate) exceeds the
 * memory limit (max_memory as in lg_cli_memory_check). On failure prints the
 * library's message and returns the exit status to use. */
int lg_cli_data_load(const char *cmd, const lg_cli_data *d, double max_memory, lg_dataset **out);

/* The data options of d as a command line gives them, into buf (cap bytes),
 * which it returns: "--dataset cora", "--trees 3 --trees-count 200 --seed 5"
 * (the seed with --trees and --sbm, whose data it makes, and with the others
 * when it is not 0), "--sbm 400,1600 --seed 0" (the edges made explicit). */
const char *lg_cli_data_describe(char *buf, size_t cap, const lg_cli_data *d);

/* Bytes enough for lg_cli_data_note's text of any data options (two paths of
 * 4096 bytes, an escaped byte in four of them). */
#define LG_CLI_NOTE_CAP 16384

/* The text train keeps in its checkpoints (lg_trainer_set_note) to say where
 * their data came from, into buf (cap bytes): a first line naming it, then
 * one data option a line as lg_cli_data_describe lists them, with the seed
 * always ("--data tests/data/tiny", "--seed 0"), and after --data DIR a line
 * "abs PATH" with its absolute path (realpath) when it has one; a value's
 * bytes below 0x20, 0x7f and '%' as %XX. Read back, option by option, by
 * lg_cli_data_option. 0, or -1 when it does not fit. */
int lg_cli_data_note(const lg_cli_data *d, char *buf, size_t cap);

/* The data set of a command that reads the checkpoint ckpt (predict, train
 * --resume). When d names none (and no --trees-count), the one recorded in
 * ckpt (lg_cli_data_note) is put in *d, --data by the absolute path it had,
 * with its seed unless keep_seed (d's is kept then: --seed given for the
 * data; a checkpoint without the record leaves d's, which predict and
 * lipschitz set to its training seed), and said on stderr
 * unless quiet: "lipgnn CMD: data: --dataset cora (from the checkpoint)";
 * d's strings then point into note (cap bytes, LG_CLI_NOTE_CAP), which must
 * outlive it. When d names one, it stays; a note names both when the
 * checkpoint records another (kind, values, the seed where it makes the
 * data, --data by its absolute path), unless quiet, a seed not kept said
 * as the checkpoint's; its seed is the recorded one unless keep_seed, as when
 * d names none. Returns 0, or -1 after a
 * message when d names none and ckpt records none (written before
 * checkpoints recorded their data, or not by lipgnn train) or cannot be read.
 * Two data options given: 0, for lg_cli_data_check to refuse. */
int lg_cli_data_from_checkpoint(const char *cmd, lg_cli_data *d, int keep_seed, const char *ckpt, char *note,
                                size_t cap, int quiet);

/* The help lines of the data options: under the heading of a command that
 * needs one, and of one that reads a checkpoint, --resume FILE, which may
 * take the data options it records (predict, train). */
extern const char lg_cli_data_help[];
extern const char lg_cli_data_help_resume[];

/* The exit status for a library status (data errors -> 2, others -> 1). */
int lg_cli_exit_for(lg_status st);

/* Notes on the environment's choices that cost or do not do what they say,
 * one line each to f, nothing otherwise: OPENBLAS_CORETYPE holding OpenBLAS to
 * kernels slower than this CPU runs (lg_blas_info.user_slower; lipgnn respects
 * such a choice, never restarting itself over it, but does not hide its cost),
 * an OPENBLAS_CORETYPE that OpenBLAS did not take (lg_blas_info.user_ignored),
 * and a LIPGNN_ISA that names no variant (ignored). */
void lg_cli_env_notes(FILE *f);

/* The values LIPGNN_ISA understands, as the CLI's messages say them. */
#define LG_CLI_ISA_VALUES "baseline, avx2, avx512 or auto"

/* The spin count lipgnn's computing commands give libgomp when neither
 * OMP_WAIT_POLICY nor GOMP_SPINCOUNT is set (main.c, lg_cli_env_fix), and
 * those commands as the messages name them (main.c's lg_cli_computes holds
 * the same list). */
#define LG_CLI_SPINCOUNT "1000"
#define LG_CLI_COMPUTING "train, demo, depth-study, predict and lipschitz"

/* Bytes enough for lg_cli_omp_wait's longest text. */
#define LG_CLI_OMP_WAIT_CAP 256

/* How this process's OpenMP threads wait at a barrier, in words, into buf
 * (cap bytes), which it returns: the environment's OMP_WAIT_POLICY and
 * GOMP_SPINCOUNT, lipgnn's setting, or libgomp's default. long_form adds
 * what the computing commands do when nothing is set (--version). */
const char *lg_cli_omp_wait(char *buf, size_t cap, int long_form);

/* JSON output: a string with escapes. */
void lg_json_string(FILE *f, const char *s);

/* JSON output: v printed with fmt (e.g. "%.6g"), or null when v is NaN or
 * infinite, which JSON cannot hold (a run whose gradients overflowed). */
void lg_json_number(FILE *f, const char *fmt, double v);

/* The TREES setting of `lipgnn train --trees D` where not given: D+1 layers
 * of this width (the paper's), no dropout (as the demo), no weight decay (as
 * Alon & Yahav; with Adam, L2 in the gradient drives the first layers'
 * weights to 0 once their data gradient is small), and mini-batches of this
 * many trees (Alon & Yahav's batch size for NeighborsMatch). */
#define LG_CLI_TREES_HIDDEN 32
#define LG_CLI_TREES_BATCH 1024

/* Options of a training run (train, demo; the base options of depth-study). */
typedef struct lg_train_opts {
    lg_cli_data data;   /* where the data set comes from                      */
    lg_model_config mc; /* model                                              */
    lg_train_config tc; /* training (tc.seed = data.seed)                     */
    int threads;        /* --threads (0: OpenMP's default)                    */
    const char *grad_log, *log, *save, *resume; /* output and state files, or NULL */
    const char *save_best; /* --save-best: the checkpoint of the best epoch, or NULL */
    int json, verbose, quiet;
    double max_memory;  /* --max-memory in bytes (0: the machine's memory)    */
    const char *label;  /* the run's name in its messages ("run LABEL: ..."; a
                           depth study's cell), or NULL                         */
    char data_note[LG_CLI_NOTE_CAP]; /* --resume without a data option: the
                           checkpoint's data options, data's strings point
                           into it (lg_cli_data_from_checkpoint)             */
    char unused[160];   /* options given that this model ignores ("--alpha: only
                           gcnii has it"), or "": train and demo refuse them,
                           depth-study (several models) notes them              */
} lg_train_opts;

/* Parses the options of `lipgnn train` (argv[0] is the command name) into o:
 * the defaults of the chosen --model, then the options given; with --resume
 * FILE and no data option, the data options FILE records (read from it:
 * lg_cli_data_from_checkpoint, into o->data_note). Returns -1 after
 * printing an error, 1 after printing the help, 0 on success. Uses getopt_long
 * (global state: restarted with optind = 0, so nothing of an earlier parse
 * carries over). */
int lg_cli_train_parse(const char *cmd, int argc, char **argv, lg_train_opts *o);

/* Parses and checks the options of `lipgnn depth-study` (argv[0] is the
 * command name) as the command does, without loading data or touching files,
 * and frees what it built. Returns the command's exit status so far: 0 (valid,
 * or help printed), 2 after printing an error, 1 out of memory; -1 if a valid
 * parse left an empty grid (a bug: for tests). */
int lg_cli_depth_parse(int argc, char **argv);

/* Trains on ds as o says (progress on a terminal, explosion messages, logs,
 * checkpoint, SIGINT/SIGTERM ending the run at the end of an epoch). Fills
 * *sum (its per-layer arrays are set to NULL: they die with the trainer) and
 * *interrupted; returns the exit status (0, 1, 2, 3, or 128 + signal). Prints
 * the JSON summary when o->json. */
int lg_cli_train_run(const char *cmd, const lg_train_opts *o, const lg_dataset *ds, lg_train_summary *sum,
                     int *interrupted);

/* 1 once SIGINT or SIGTERM was received during lg_cli_train_run. */
int lg_cli_stop_requested(void);

/* Subcommands: each returns the process exit status. */
int lg_cmd_info(int argc, char **argv);
int lg_cmd_train(int argc, char **argv);
int lg_cmd_demo(int argc, char **argv);
int lg_cmd_predict(int argc, char **argv);
int lg_cmd_gradmap(int argc, char **argv);
int lg_cmd_depth_study(int argc, char **argv);
int lg_cmd_lipschitz(int argc, char **argv);


#endif
