/*
 * lipgnn/core.h: status codes, error messages, the allocator hook, the seeded
 * random number generator, the OpenBLAS core-type check and the version.
 *
 * Part of the umbrella header <lipgnn.h>; include that one.
 */
#ifndef LIPGNN_CORE_H
#define LIPGNN_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "lipgnn/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Index type for nodes, edges and non-zeros: 64-bit, so no count overflows
 * past 2^31 edges (CXSparse's cs_dl_* use the same width). */
typedef int64_t lg_idx;

/* ------------------------------------------------------------------------- */
/* Status codes                                                               */
/* ------------------------------------------------------------------------- */

/* Every fallible function returns one of these; LG_OK is 0. The thread's last
 * error message (lg_last_error) says what exactly went wrong. */
typedef enum lg_status {
    LG_OK = 0,
    LG_ENOMEM,       /* an allocation failed                                  */
    LG_EINVAL,       /* a caller's argument is invalid                        */
    LG_EIO,          /* a file could not be opened, read or written          */
    LG_EPARSE,       /* an input file is malformed                            */
    LG_ERANGE,       /* a value is out of its allowed range                   */
    LG_ENOTFOUND,    /* a named thing (data set, file, variable) is absent    */
    LG_EIGRAPH,      /* igraph reported an error                              */
    LG_ESPARSE,      /* CXSparse reported an error                            */
    LG_ENUMERIC,     /* a NaN or infinity where finite values are required   */
    LG_EUNSUPPORTED, /* a valid request this build or version does not handle */
    LG_STATUS_COUNT
} lg_status;

/* The fixed name of a status ("LG_EPARSE" ...). Never NULL. */
const char *lg_status_name(lg_status s);

/* A short fixed description of a status ("malformed input" ...). Never NULL. */
const char *lg_strerror(lg_status s);

/* The calling thread's last error message: what went wrong, naming the file,
 * the line and the value where there is one. Empty after lg_clear_error().
 * The buffer is thread-local and valid until the thread's next failing call. */
const char *lg_last_error(void);

/* Empties the calling thread's last error message. */
void lg_clear_error(void);

/* ------------------------------------------------------------------------- */
/* Allocator hook                                                             */
/* ------------------------------------------------------------------------- */

/* The library's own allocations go through these. Two libraries it calls
 * allocate with the C library's malloc instead, bypassing the hook:
 * CXSparse, for the edge triplets, their compressed copy and the transposes
 * that sort a graph's neighbours (cs_dl_spalloc, cs_dl_compress,
 * cs_dl_transpose) whenever a graph is built from an edge list -
 * lg_graph_from_edges, lg_graph_from_igraph, lg_dataset_load (graph.mtx),
 * lg_trees_generate and lg_sbm_generate - and igraph, for its graphs and
 * vectors (lg_graph_to_igraph, lg_graph_from_igraph, lg_trees_generate,
 * lg_sbm_generate). Their failures are still returned as LG_ENOMEM (nothing
 * leaked). A setting to be made before any other call (it is global, not
 * thread-safe). NULL fields restore the C library's functions;
 * lg_set_allocator(NULL) restores all four. */
typedef struct lg_allocator {
    void *(*malloc_fn)(size_t size);
    void *(*calloc_fn)(size_t count, size_t size);
    void *(*realloc_fn)(void *ptr, size_t size);
    void (*free_fn)(void *ptr);
} lg_allocator;

void lg_set_allocator(const lg_allocator *a);

/* ------------------------------------------------------------------------- */
/* Random numbers                                                             */
/* ------------------------------------------------------------------------- */

/* A seeded generator (xoshiro256**, seeded through splitmix64). Same seed, same
 * sequence, on every platform. One per user; it holds no hidden global state. */
typedef struct lg_rng {
    uint64_t s[4]; /* generator state */
} lg_rng;

/* Seeds rng from a 64-bit seed. */
void lg_rng_seed(lg_rng *rng, uint64_t seed);

/* Next 64 random bits. */
uint64_t lg_rng_next(lg_rng *rng);

/* Uniform float in [0, 1), 24 random bits. */
float lg_rng_float(lg_rng *rng);

/* Uniform double in [0, 1), 53 random bits. */
double lg_rng_double(lg_rng *rng);

/* Uniform integer in [0, n), unbiased (rejection); n must be > 0 (0 gives 0). */
uint64_t lg_rng_below(lg_rng *rng, uint64_t n);

/* In-place uniform random permutation of v[0..n) (Fisher-Yates). */
void lg_rng_shuffle(lg_rng *rng, lg_idx *v, lg_idx n);

/* Parameter initialisation schemes (lg_model_config.init, lg_gt_params_init_as):
 *   LG_INIT_GLOROT   Glorot-uniform weights, U(+-sqrt(6/(fan_in + fan_out))),
 *                    zero biases: attention-spec.md section 6, and PyTorch
 *                    Geometric's GATConv
 *   LG_INIT_PYTORCH  PyTorch's nn.Linear default: weights and biases
 *                    U(+-1/sqrt(fan_in)), a third of Glorot's variance for a
 *                    square map. The LipschitzNorm authors' code
 *                    (github.com/gdasoulas/LipschitzNorm) builds its
 *                    graph-transformer layer and both deep models' input and
 *                    output linears from nn.Linear, so they start this way. */
typedef enum lg_init { LG_INIT_GLOROT = 0, LG_INIT_PYTORCH = 1, LG_INIT_COUNT } lg_init;

/* A stateless mix of a 64-bit key into 64 well-spread bits (splitmix64's
 * finaliser). Counter-based randomness: hash(seed ^ f(epoch, edge)) gives the
 * same bits whatever the number of threads. */
uint64_t lg_hash64(uint64_t key);

/* ------------------------------------------------------------------------- */
/* OpenBLAS core type                                                         */
/* ------------------------------------------------------------------------- */

/* What OpenBLAS chose against what this CPU can run. Debian's OpenBLAS 0.3.21
 * mis-detects recent AVX-512 CPUs (as "Prescott" or "Haswell") and its sgemm
 * then runs 2-5x slower; OPENBLAS_CORETYPE, read when the library loads,
 * overrides the choice. */
typedef struct lg_blas_info {
    char current[32];   /* openblas_get_corename() of the loaded library      */
    char best[32];      /* best core type for this CPU (CPUID), "" if unknown */
    int user_set;       /* 1 if OPENBLAS_CORETYPE is set in the environment   */
    int recommend;      /* 1 if current is slower than best and !user_set     */
    int threads;        /* OpenBLAS's thread count                            */
    int user_slower;    /* 1 if current is slower than best and user_set: the
                           environment's OPENBLAS_CORETYPE costs speed        */
    int user_ignored;   /* 1 if user_set but current is not the type it names
                           (case aside): OpenBLAS did not take it (a name it
                           does not know, or a type this CPU cannot run) and
                           runs its own choice                                */
    int unsupported;    /* 1 if current needs instructions this CPU lacks
                           (CPUID): OpenBLAS 0.3.21 takes an OPENBLAS_CORETYPE
                           such as SkylakeX on a CPU without AVX-512, and its
                           first dense product would stop the process with
                           SIGILL. lipgnn's operations that make dense
                           products then return LG_EUNSUPPORTED instead     */
} lg_blas_info;

/* Fills info. CPU features come from CPUID (__builtin_cpu_supports), so under
 * valgrind, which masks AVX-512, the best type is one valgrind can execute.
 * To apply a recommendation, set OPENBLAS_CORETYPE=info.best before OpenBLAS
 * loads (for a program: in the environment, or by re-executing itself). */
void lg_blas_check(lg_blas_info *info);

/* Sets the threads of lipgnn's kernels to n (OpenMP; n <= 0: OpenMP's
 * default, OMP_NUM_THREADS or one per core, and 1 where libgomp wrapped an
 * OMP_NUM_THREADS beyond INT_MAX into a count below 1; at most LG_MAX_THREADS)
 * and pins OpenBLAS to one thread: every dense product is then split by lipgnn
 * into fixed panels (or, a weight gradient over a large graph, fixed chunks
 * of its inner dimension, summed in order) spread over those threads, so
 * results have the same bits
 * whatever n is, and OpenBLAS's own threads never compete with lipgnn's. A
 * setting to be made before use (it changes process-wide state of OpenMP and
 * OpenBLAS). Returns the thread count in effect.
 *
 * How waiting threads wait is libgomp's, read from the environment when the
 * program loads, beyond this function's reach: by default each spins some
 * 300 000 times at every barrier before it sleeps, and an epoch has thousands
 * of barriers. On a machine with more runnable threads than cores that spinning
 * starves the thread being waited for: a 16-layer GAT on Cora took 47 s for
 * 30 epochs under a load of 4.4 on 2 cores, 2.0 s with GOMP_SPINCOUNT=1000
 * (a short spin, then sleep). Set GOMP_SPINCOUNT=1000 (or
 * OMP_WAIT_POLICY=passive) in the environment of a program that links
 * lipgnn; the lipgnn command restarts itself so when neither is set.
 *
 * Each thread that runs an OpenBLAS product maps a buffer of 128 MiB of
 * address space (little of it resident), kept until the process ends, and
 * OpenBLAS 0.3.21 retries one that does not fit forever. So under an
 * address-space or data limit (RLIMIT_AS, RLIMIT_DATA) or strict overcommit,
 * the operations that make dense products return LG_ENOMEM, with the limit to
 * set in the message, when the buffers of n threads cannot be mapped (checked
 * at their first call at a thread count higher than checked before). OpenBLAS
 * also starts a thread per core but one when it loads, each with its buffer,
 * which lipgnn never uses: OPENBLAS_NUM_THREADS=1 in the environment of a
 * program that links lipgnn avoids them (the lipgnn command sets it when it
 * restarts itself, and restarts for it under such a limit). */
int lg_set_threads(int n);

/* The most threads lg_set_threads sets: a larger n, or an OMP_NUM_THREADS
 * above it (n <= 0), gives this many (libgomp crashed or hung making teams of
 * tens of thousands). */
#define LG_MAX_THREADS 1024

/* The instruction set of lipgnn's own element-wise kernels: "avx512" where
 * CPUID reports AVX-512 F, DQ, BW and VL, else "avx2" where it reports AVX2,
 * else "baseline" (x86-64 SSE2). Valgrind 3.19 masks AVX-512: "avx2" under
 * it. LIPGNN_ISA=baseline or avx2 in the environment (read at the first
 * call) caps the choice. All variants give the same bits. */
const char *lg_kernel_isa(void);

/* Chooses the kernels' instruction set: "auto" (as lg_kernel_isa decides
 * without the environment), "baseline", "avx2" or "avx512" (LG_EUNSUPPORTED
 * if the CPU lacks it). A setting to be made before use, like lg_set_threads.
 * LG_EINVAL for another name. */
lg_status lg_set_kernel_isa(const char *name);

/* Why lg_kernel_isa chose its variant. */
typedef struct lg_isa_info {
    const char *chosen; /* lg_kernel_isa()                                   */
    const char *cpu;    /* the widest variant CPUID allows                   */
    const char *env;    /* LIPGNN_ISA as the environment holds it now, NULL
                           when unset or empty                                */
    int env_valid;      /* 1 if env is "baseline", "avx2", "avx512" or "auto"
                           (and so read as a cap), 0 if it names none of
                           them and is ignored                                */
} lg_isa_info;

/* Fills info (the strings are static). O(1). */
void lg_kernel_isa_info(lg_isa_info *info);

/* ------------------------------------------------------------------------- */
/* Version                                                                    */
/* ------------------------------------------------------------------------- */

/* The library's version, "MAJOR.MINOR.PATCH" (LG_VERSION_STRING of the build
 * that made the library, which may differ from the header's). */
const char *lg_version(void);

#ifdef __cplusplus
}
#endif

#endif /* LIPGNN_CORE_H */
