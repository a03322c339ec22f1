//! The table of built-in workloads and their parameters, and adding one to a
//! machine. The build functions live in `builders` and `cases`; parameter
//! resolution and thread spawning in `ctx`.

use crate::builders;
use crate::cases;
use crate::ctx::Ctx;
use crate::spec::{SpecError, WorkloadSpec};
use engine::sim::{MemPolicy, Placement};
use engine::SimBuilder;

/// One parameter of a workload.
pub struct Param {
    /// Key.
    pub key: &'static str,
    /// Default value.
    pub default: &'static str,
    /// Meaning and format.
    pub help: &'static str,
}

/// A built-in workload.
pub struct Workload {
    /// Name.
    pub name: &'static str,
    /// What it models.
    pub summary: &'static str,
    /// Parameters with defaults.
    pub params: &'static [Param],
    build: fn(&mut Ctx) -> Result<(), SpecError>,
}

const fn p(key: &'static str, default: &'static str, help: &'static str) -> Param {
    Param { key, default, help }
}

pub(crate) const SIZE_HELP: &str = "size: absolute (96M, 1G) or relative to memory (0.5x)";

/// All built-in workloads, alphabetically.
pub const WORKLOADS: &[Workload] = &[
    Workload {
        name: "anon",
        summary: "one process's anonymous memory: touched once and left idle, or swept / sampled repeatedly",
        params: &[
            p("size", "0.5x", SIZE_HELP),
            p("pattern", "seq", "idle (touch once, then nothing), seq, uniform or zipf"),
            p("alpha", "1.0", "zipf exponent (pattern=zipf)"),
            p("passes", "3", "sweeps over the region (pattern=seq)"),
            p("ops", "1000000", "random accesses per thread (pattern=uniform/zipf)"),
            p("think_ns", "0", "computation before each random access, ns (pattern=uniform/zipf)"),
            p("write", "0", "1: accesses after the first touch are stores"),
            p("threads", "1", "threads sharing the region"),
            p("start_ms", "0", "virtual time before the workload starts"),
        ],
        build: builders::build_anon,
    },
    Workload {
        name: "ebizzy",
        summary: "seed 004: threads copying zipf(alpha)-popular chunks of an anon region into their own buffer, after it is filled",
        params: &[
            p("size", "1.5x", SIZE_HELP),
            p("alpha", "0.7", "zipf exponent of chunk popularity: 0.1 ~ uniform, 1.3 = few hot chunks"),
            p("chunk", "512K", "chunk size (ebizzy -s; its default 512K); 4K = page-sized chunks"),
            p("copy", "1", "1: each chunk page read is stored to the thread's copy buffer (memcpy); 0: reads only"),
            p("threads", "1", "threads; each fills its share of the region, then copies chunks from all of it"),
            p("ops", "1000000", "chunk pages read per thread (a chunk copy reads chunk/4K pages)"),
            p("start_ms", "0", "virtual time before the workload starts"),
        ],
        build: builders::build_ebizzy,
    },
    Workload {
        name: "fileloop",
        summary: "reads of a file through a file descriptor: repeated sequential passes, or uniform/zipf",
        params: &[
            p("size", "1.2x", SIZE_HELP),
            p("pattern", "seq", "seq, uniform or zipf"),
            p("alpha", "1.0", "zipf exponent (pattern=zipf)"),
            p("passes", "3", "sequential passes (pattern=seq)"),
            p("ops", "1000000", "random reads per thread (pattern=uniform/zipf)"),
            p("threads", "1", "reader threads"),
            p("files", "1", "files the size is split into, read one after another (pattern=seq): a dentry and an inode each"),
            p("start_ms", "0", "virtual time before the workload starts"),
        ],
        build: builders::build_fileloop,
    },
    Workload {
        name: "hotcold",
        summary: "seed 004's scenario: cold memory, hot-1 activated, hot-2, then cold and hot-2 alternately",
        params: &[
            p("cold", "1.83x", "cold region (seed: 512M of ~280M usable)"),
            p("hot1", "0.343x", "hot-1 region, activated early (seed: 96M)"),
            p("hot2", "0.343x", "hot-2 region, re-accessed every round (seed: 96M)"),
            p("step", "0.457x", "cold memory read per round (seed: 128M)"),
            p("activate", "2", "extra passes over hot-1 to activate it"),
            p("rounds", "10", "cold/hot-2 rounds"),
            p("start_ms", "0", "virtual time before the workload starts"),
        ],
        build: builders::build_hotcold,
    },
    Workload {
        name: "linpack",
        summary: "seed 001: blocked LU factorisation of a dense matrix larger than memory (setup, panel and trailing updates)",
        params: &[
            p("size", "1.2x", SIZE_HELP),
            p("blocks", "16", "blocks per matrix side (block-major layout)"),
            p("start_ms", "0", "virtual time before the workload starts"),
        ],
        build: builders::build_linpack,
    },
    Workload {
        name: "lru-gen",
        summary: "writes `+`/`-` commands to /sys/kernel/debug/lru_gen (MGLRU aging and eviction requests) at set times",
        params: &[
            p("cmds", "+ 0 0 3", "commands separated by `;`: `+ 0 0 MAX_GEN [SWAPPINESS [FORCE_SCAN]]`, `- 0 0 MIN_GEN [SWAPPINESS [NR_PAGES]]`"),
            p("start_ms", "0", "virtual time of the first write"),
            p("every_ms", "0", "interval between writes"),
            p("count", "1", "number of writes"),
        ],
        build: cases::build_lru_gen,
    },
    Workload {
        name: "memory-reclaim",
        summary: "writes SIZE [swappiness=N] to a cgroup v2 group's memory.reclaim (proactive reclaim) at set times",
        params: &[
            p("target", "/", "the group written to (a path of the tree; `/`: the root)"),
            p("amount", "1M", "bytes to reclaim per write (SIZE)"),
            p("swappiness", "", "swappiness=N of the write, 0..200 (empty: vm.swappiness)"),
            p("start_ms", "0", "virtual time of the first write"),
            p("every_ms", "0", "interval between writes"),
            p("count", "1", "number of writes"),
        ],
        build: cases::build_memory_reclaim,
    },
    Workload {
        name: "senpai",
        summary: "the senpai proactive-reclaim controller (facebookincubator/senpai): keeps a group's memory pressure at a target by moving memory.high or writing memory.reclaim",
        params: &[
            p("target", "/", "the group it controls (a path of the tree)"),
            p("mode", "high", "`high`: scale memory.high (the script); `reclaim`: write memory.current x share to memory.reclaim on a probe"),
            p("count", "600", "ticks"),
            p("every_ms", "1000", "time between ticks (the script sleeps 1 s)"),
            p("interval", "6", "--interval: ticks between probes"),
            p("pressure_us", "10000", "--pressure: target memory stall time per interval, us"),
            p("max_probe", "0.01", "--max-probe: largest share a probe takes off"),
            p("max_backoff", "1.0", "--max-backoff: largest share a backoff adds"),
            p("coeff_probe", "10", "--coeff-probe"),
            p("coeff_backoff", "20", "--coeff-backoff"),
            p("min_size", "100M", "--min-size: lowest limit (SIZE)"),
            p("max_size", "100G", "--max-size: highest limit (SIZE)"),
            p("start_ms", "0", "virtual time of the first tick"),
        ],
        build: cases::build_senpai,
    },
    Workload {
        name: "pagecache-heavy",
        summary: "seed 002 review: a file streamed through read(), another re-read with zipf popularity, a small anon workingset",
        params: &[
            p("stream", "2.0x", "file streamed sequentially (SIZE)"),
            p("passes", "2", "passes over the streamed file"),
            p("reread", "0.5x", "file re-read with zipf popularity (SIZE)"),
            p("alpha", "0.9", "zipf exponent of the re-read file"),
            p("anon", "0.15x", "anonymous workingset touched uniformly (SIZE)"),
            p("ops", "1000000", "random accesses of the re-reader and of the anon thread"),
            p("start_ms", "0", "virtual time before the workload starts"),
        ],
        build: cases::build_pagecache_heavy,
    },
    Workload {
        name: "memcachetest",
        summary: "seeds 000/003: memcached store in anon memory, filled by sets, then uniform gets/sets (one transaction each); ops/s is the score",
        params: &[
            p("size", "0.4x", "memcached's pool (-m); with value=0 the store itself, one page an item (SIZE)"),
            p("ops", "300000", "operations after the fill"),
            p("set_pct", "10", "percent of operations that are sets (stores)"),
            p("service_us", "40", "CPU time per operation outside memory (request handling), microseconds"),
            p("value", "0", "value bytes: items in memcached 1.4's slab chunks, an operation touching every page of its item; 0: one page an item"),
            p("items", "0", "items stored (with value); 0: mmtests' pool / (value + 4096)"),
            p("leak", "0", "bytes per operation the client allocates and never frees (memcachetest's latency arrays)"),
            p("start_ms", "0", "virtual time before the workload starts"),
        ],
        build: builders::build_memcachetest,
    },
    Workload {
        name: "parallelio",
        summary: "seed 003: mmtests parallelio's background IO: a file of a given size written (from zeroes, or copied from another file)",
        params: &[
            p("size", "1.0x", SIZE_HELP),
            p("source", "zero", "zero (dd from /dev/zero, as mmtests) or file (read a source file page by page)"),
            p("start_ms", "0", "virtual time before the copy starts"),
        ],
        build: builders::build_parallelio,
    },
    Workload {
        name: "pgbench",
        summary: "seed 000: pgbench TPC-B clients (index lookup, account/teller/branch updates, history and WAL appends) through shared buffers in anon memory, beside idle anon; tps and transaction latency are the score",
        params: &[
            p("db", "0.8x", "database file: branches, tellers, accounts index and heap (seed: 5.6G of 7G)"),
            p("index", "0.142", "accounts index leaves as a share of the database (0.142 in a pgbench database)"),
            p("buffers", "0.143x", "shared buffers, anonymous, shared by every client (seed: 1G)"),
            p("idle", "0.15x", "anonymous memory of idle processes, written once by client 0 (seed: a little over 1G)"),
            p("wal", "0.143x", "WAL size, written sequentially and reused (postgres max_wal_size 1G of 7G)"),
            p("wal_bytes", "8600", "WAL bytes per transaction (records plus a full-page image of the account page)"),
            p("cpu_us", "300", "CPU time per transaction outside memory accesses, microseconds"),
            p("clients", "8", "client threads"),
            p("txns", "20000", "transactions per client"),
            p("init", "1", "1: the clients first write the database file (pgbench -i), leaving it in the page cache"),
            p("start_ms", "0", "virtual time before the workload starts"),
        ],
        build: builders::build_pgbench,
    },
    Workload {
        name: "shared-anon",
        summary: "seed 002 review (worst case for page-table walks): one big shared mapping touched by many processes at sparse offsets",
        params: &[
            p("size", "96x", "the shared memory (SIZE); only every `stride`-th page is touched"),
            p("procs", "8", "processes mapping all of it, one thread each"),
            p("stride", "64", "distance between touched pages: 1 = dense, 64 = 8 PTEs per 2 MiB table, 512 = one"),
            p("ops", "200000", "random accesses per process"),
            p("start_ms", "0", "virtual time before the workload starts"),
        ],
        build: cases::build_shared_anon,
    },
    Workload {
        name: "tabs",
        summary: "seed 002: browser tabs (processes with hot/cold anon heaps and a shared executable), zipf tab switching, tabs closing/opening",
        params: &[
            p("tabs", "24", "tabs (processes)"),
            p("heap", "0.09x", "anon heap per tab (SIZE)"),
            p("hot", "0.25", "hot fraction of each heap"),
            p("exe", "0.12x", "shared executable mapped by every tab (SIZE)"),
            p("exec", "100", "per mille of a visit's accesses that run code from the executable"),
            p("alpha", "1.1", "zipf exponent of tab popularity"),
            p("visits", "1500", "tab visits per thread"),
            p("ops", "3000", "accesses per visit"),
            p("think_us", "2000", "think time before each visit"),
            p("churn", "20", "close the least popular tab and open a new one every N visits (0 = never)"),
            p("threads", "2", "browser windows; each has its own share of the tabs"),
            p("start_ms", "0", "virtual time before the workload starts"),
        ],
        build: cases::build_tabs,
    },
    Workload {
        name: "vmscale-rand",
        summary: "seed 001: vm-scalability's random swap case: processes writing random pages of their own regions",
        params: &[
            p("size", "0.94x", "total of all processes' regions (seed: 30G on 32G)"),
            p("procs", "8", "processes, one region each"),
            p("ops", "10000000", "page writes per process"),
            p("think_ns", "0", "computation between writes, ns (bounds the access rate of a resident process)"),
            p("start_ms", "0", "virtual time before the workload starts"),
        ],
        build: builders::build_vmscale_rand,
    },
    Workload {
        name: "vmscale-seq",
        summary: "seed 001: vm-scalability's sequential swap case: processes writing their regions in order, round after round",
        params: &[
            p("size", "1.56x", "total of all processes' regions (seed: 50G on 32G)"),
            p("procs", "4", "processes, one region each"),
            p("rounds", "100", "sequential write passes per process (the first one swaps out)"),
            p("words", "512", "stores per page: usemem's loop writes every 8-byte word (step sizeof(long)), 4096 / 8"),
            p("start_ms", "0", "virtual time before the workload starts"),
        ],
        build: builders::build_vmscale_seq,
    },
];

/// Adds workload `spec` (the `index`-th of the run) to `builder`. Returns the
/// specification with every parameter resolved, for the run's configuration.
pub fn add_workload(
    builder: &mut SimBuilder,
    spec: &WorkloadSpec,
    seed: u64,
    index: u64,
) -> Result<WorkloadSpec, SpecError> {
    let workload = WORKLOADS.iter().find(|w| w.name == spec.name).ok_or_else(|| SpecError::UnknownWorkload {
        name: spec.name.clone(),
        valid: WORKLOADS.iter().map(|w| w.name).collect(),
    })?;
    let mut values: Vec<String> = workload.params.iter().map(|p| p.default.to_string()).collect();
    let (common, placed) = common(workload.name, spec)?;
    for (k, v) in spec.params.iter().filter(|(k, _)| !COMMON_PARAMS.iter().any(|p| p.key == k)) {
        let i = workload.params.iter().position(|p| p.key == k).ok_or_else(|| SpecError::UnknownParam {
            workload: workload.name.into(),
            key: k.clone(),
            valid: workload.params.iter().chain(COMMON_PARAMS).map(|p| p.key).collect(),
        })?;
        values[i] = v.clone();
    }
    let mut resolved = WorkloadSpec {
        name: workload.name.into(),
        params: workload.params.iter().zip(&values).map(|(p, v)| (p.key.to_string(), v.clone())).collect(),
    };
    resolved.params.extend(placed);
    let bad_node = |expected: String| SpecError::BadValue {
        workload: workload.name.into(),
        key: "node".into(),
        value: common.placement.node.to_string(),
        expected,
    };
    builder.set_placement(common.placement).map_err(bad_node)?;
    // The workload instance is one process (S-OOM1); the value was checked by `common`.
    builder.begin_process(common.oom_score_adj).expect("oom_score_adj in range");
    builder.set_cgroup(&common.cgroup).map_err(|expected| SpecError::BadValue {
        workload: workload.name.into(),
        key: "cgroup".into(),
        value: common.cgroup.clone(),
        expected,
    })?;
    let mut ctx = Ctx::new(workload, values, builder, seed, index);
    let built = (workload.build)(&mut ctx);
    builder.set_placement(Placement::default()).expect("node 0 always exists");
    builder.set_cgroup("/").expect("the root group always exists");
    built.map(|()| resolved)
}

/// Parameters every workload takes: where its threads run and place memory,
/// and its process's `oom_score_adj`.
pub const COMMON_PARAMS: &[Param] = &[
    p("node", "0", "NUMA node its threads run on (numa.nodes); memory comes from it first"),
    p(
        "mempolicy",
        "local",
        "local (the running node, then the nearest), bind (that node only) or interleave (every node in turn)",
    ),
    p(
        "oom_score_adj",
        "0",
        "-1000..1000: added to its OOM badness in thousandths of the memory the OOM is about; -1000 = never OOM-killed",
    ),
    p("cgroup", "/", "memory cgroup (v2) its pages are charged to, a path like svc or batch/job1 (cgroup.PATH.memory.* sets its files)"),
];

/// The values of the common parameters of one workload instance.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Common {
    placement: Placement,
    oom_score_adj: i16,
    /// The memory cgroup's path.
    cgroup: String,
}

/// The common parameters of `spec` ([`COMMON_PARAMS`]), and those given (kept in the resolved spec).
fn common(workload: &str, spec: &WorkloadSpec) -> Result<(Common, Vec<(String, String)>), SpecError> {
    let mut c = Common::default();
    let p = &mut c.placement;
    let mut given = Vec::new();
    for (k, v) in spec.params.iter().filter(|(k, _)| COMMON_PARAMS.iter().any(|p| p.key == k)) {
        let bad = |expected: &str| SpecError::BadValue {
            workload: workload.into(),
            key: k.clone(),
            value: v.clone(),
            expected: expected.into(),
        };
        if k == "node" {
            p.node = v.parse().map_err(|_| bad("a node number, 0..numa.nodes"))?;
        } else if k == "cgroup" {
            if v.split('/').any(|p| p == "." || p == "..") {
                return Err(bad("a group path of names separated by `/`"));
            }
            c.cgroup = v.clone();
        } else if k == "oom_score_adj" {
            c.oom_score_adj = v
                .parse()
                .ok()
                .filter(|a: &i16| (-1000..=1000).contains(a))
                .ok_or_else(|| bad("an integer in -1000..=1000"))?;
        } else {
            p.policy = match v.as_str() {
                "local" => MemPolicy::Local,
                "bind" => MemPolicy::Bind,
                "interleave" => MemPolicy::Interleave,
                _ => return Err(bad("local, bind or interleave")),
            };
        }
        given.push((k.clone(), v.clone()));
    }
    Ok((c, given))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_parameters_are_checked() {
        let spec = WorkloadSpec::parse("anon:node=1,mempolicy=interleave,size=4M,oom_score_adj=-1000").unwrap();
        let (c, given) = common("anon", &spec).unwrap();
        assert_eq!(c.placement, Placement { node: 1, policy: MemPolicy::Interleave });
        assert_eq!(c.oom_score_adj, -1000);
        assert_eq!(given.len(), 3);
        for bad in ["anon:node=x", "anon:mempolicy=preferred", "anon:oom_score_adj=1001", "anon:oom_score_adj=x"] {
            assert!(common("anon", &WorkloadSpec::parse(bad).unwrap()).is_err(), "{bad}");
        }
    }
}
