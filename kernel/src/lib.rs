//! kplan's compiled scheduling cycle (issue 49): the default profile's Filter pass over the
//! nodes and its Score, normalize and host selection, each as one call per pod over the node
//! table's numpy columns (kplan/cluster/node_table.py).
//!
//! This is a fast path, not a second definition of the rules: kplan/scheduler/compiled.py calls
//! it only for pods whose active plugins it covers (the leading node-attribute filters, whose
//! verdicts Python computes once per pod signature, NodeResourcesFit, and the scores listed
//! below; any other Score plugin's scores it takes ready from that plugin's own Python), and
//! the readable per-plugin Python (kplan/plugins/) stays the reference that
//! tests/scheduler/test_compiled.py compares it with. Every function here names the Python
//! rule it mirrors. Anything the kernel does not cover it reports as such (status NOT_COVERED)
//! and the Python path answers instead, with nothing changed: the kernel only reads the
//! columns and writes its own output buffers.

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// framework.MaxNodeScore
const MAX_NODE_SCORE: i64 = 100;
/// score(): the scores were computed and a host chosen
const OK: u8 = 0;
/// score(): a case the kernel leaves to the Python path (a node without cpu or memory
/// allocatable, a negative raw score, a normalized score out of range: Python's error)
const NOT_COVERED: u8 = 1;

/// A read-only view of a C-contiguous numpy array through the buffer protocol.
struct Column<'a, T> {
    data: &'a [T],
}

fn column<'a, T: pyo3::buffer::Element>(buf: &'a PyBuffer<T>, what: &str) -> PyResult<Column<'a, T>> {
    if !buf.is_c_contiguous() {
        return Err(PyValueError::new_err(format!("{what}: not a C-contiguous array")));
    }
    // SAFETY: the buffer is C-contiguous with item_count items of T (PyBuffer::get checked the
    // format and item size); it stays valid while `buf` is held, and the GIL is held throughout
    let data = unsafe { std::slice::from_raw_parts(buf.buf_ptr() as *const T, buf.item_count()) };
    Ok(Column { data })
}

fn output<'a>(buf: &'a PyBuffer<i64>, what: &str, len: usize) -> PyResult<&'a mut [i64]> {
    if !buf.is_c_contiguous() || buf.readonly() || buf.item_count() < len {
        return Err(PyValueError::new_err(format!("{what}: not a writeable C-contiguous array of {len} int64")));
    }
    // SAFETY: as in column(); the array is writeable and Python does not touch it during the call
    Ok(unsafe { std::slice::from_raw_parts_mut(buf.buf_ptr() as *mut i64, buf.item_count()) })
}

/// Scheduler._find_feasible (kplan/scheduler/cycle.py) for a pod whose only filters after the
/// leading node-attribute ones are NodeResourcesFit's (or none): the nodes in the rotated
/// order from `start`, each feasible when the node-attribute filters passed it (`fixed[r] == 0`;
/// None: there are none) and, with `check_fit`, NodeResourcesFit's Filter passes it: fewer pods
/// than allowed (else "Too many pods") and each checked request no larger than what is left of
/// its column (fitsRequest). Filtering stops at the (k+1)-th feasible node, which is examined but
/// neither kept nor counted.
///
/// Writes the feasible rows, in the order visited, to `out`; returns (how many, nodes
/// processed: the feasible ones kept and those rejected before the stop), which move the
/// rotating start index as the Python path moves it.
#[pyfunction]
#[pyo3(signature = (n, fixed, pod_count, allowed_pods, alloc_t, requested_t, cols, wanted, check_fit, start, k, out))]
#[allow(clippy::too_many_arguments)]
fn find_feasible(
    n: usize,
    fixed: Option<PyBuffer<i8>>,
    pod_count: PyBuffer<i64>,
    allowed_pods: PyBuffer<i64>,
    alloc_t: PyBuffer<i64>,
    requested_t: PyBuffer<i64>,
    cols: Vec<usize>,
    wanted: Vec<i64>,
    check_fit: bool,
    start: usize,
    k: usize,
    out: PyBuffer<i64>,
) -> PyResult<(usize, usize)> {
    let fixed = match &fixed {
        Some(b) => Some(column(b, "fixed")?),
        None => None,
    };
    let count = column(&pod_count, "pod_count")?;
    let allowed = column(&allowed_pods, "allowed_pods")?;
    let alloc = column(&alloc_t, "alloc_t")?;
    let requested = column(&requested_t, "requested_t")?;
    let out = output(&out, "out", k.min(n))?;
    if cols.len() != wanted.len() || count.data.len() < n || allowed.data.len() < n
        || fixed.as_ref().is_some_and(|f| f.data.len() < n)
        || cols.iter().any(|&c| (c + 1) * n > alloc.data.len() || (c + 1) * n > requested.data.len())
    {
        return Err(PyValueError::new_err("find_feasible: columns shorter than the table"));
    }
    if n == 0 {
        return Ok((0, 0));
    }
    let start = start % n;
    let mut found = 0usize;
    let mut rejected = 0usize;
    for pos in 0..n {
        let r = if start + pos < n { start + pos } else { start + pos - n };
        let mut feasible = fixed.as_ref().is_none_or(|f| f.data[r] == 0);
        if feasible && check_fit {
            feasible = count.data[r] < allowed.data[r]
                && cols.iter().zip(&wanted).all(|(&c, &q)| q <= alloc.data[c * n + r] - requested.data[c * n + r]);
        }
        if !feasible {
            rejected += 1;
            continue;
        }
        if found == k {
            break;
        }
        out[found] = r as i64;
        found += 1;
    }
    Ok((found, found + rejected))
}

/// NodeResourcesFit's Score with the cpu and memory resources (fit.py, score and
/// _least_allocated_cpu_memory): `strategy` 0 LeastAllocated, 1 MostAllocated; the requests are
/// the non-zero ones (the node's `nonzero_t`, the pod's score_cpu and score_mem).
#[derive(FromPyObject)]
struct FitScore {
    strategy: u8,
    weight_cpu: i64,
    weight_memory: i64,
    pod_cpu: i64,
    pod_memory: i64,
    weight: i64,
}

/// NodeResourcesBalancedAllocation's Score on cpu and memory (balanced_allocation.py,
/// _cpu_memory_balance and, with `change` (1.36, #135573), _cpu_memory_balance_change, which
/// reads the node's own balance kept per row in `without`); real requests.
#[derive(FromPyObject)]
struct BalancedScore {
    change: bool,
    pod_cpu: i64,
    pod_memory: i64,
    weight: i64,
    without: Option<PyBuffer<i64>>,
}

/// A Score plugin whose raw score of a node depends only on the node's fixed attributes
/// (FixedInputScore: TaintToleration, NodeAffinity, ImageLocality): its raw scores of every row
/// (`raw`), its NormalizeScore (0 none, 1 DefaultNormalizeScore, 2 reversed) and weight.
#[derive(FromPyObject)]
struct FixedScore {
    raw: PyBuffer<i64>,
    normalization: u8,
    weight: i64,
}

/// A Score plugin the kernel has no rule of: its scores of the `m` feasible positions,
/// normalized already by the plugin's own Python (Framework.run_score's raw then NormalizeScore),
/// and its weight. The kernel checks their range and adds them in.
#[derive(FromPyObject)]
struct ReadyScore {
    scores: PyBuffer<i64>,
    weight: i64,
}

/// balance_score (balanced_allocation.py) for two resources: int((1 - std) * 100) of the
/// fractions capped at 1, std being half their distance; float64 as numpy computes it.
fn balance(cpu: i64, memory: i64, alloc_cpu: i64, alloc_memory: i64) -> i64 {
    let f_cpu = (cpu as f64 / alloc_cpu as f64).min(1.0);
    let f_memory = (memory as f64 / alloc_memory as f64).min(1.0);
    let std = ((f_cpu - f_memory) / 2.0).abs();
    ((1.0 - std) * MAX_NODE_SCORE as f64) as i64
}

/// Framework.run_score then Scheduler.select_host (kplan/framework/runtime.py,
/// kplan/scheduler/cycle.py) for the `m` feasible rows in `feasible`: each active plugin's
/// raw score, normalized, times its weight, summed per row into `totals`; then the highest
/// total. Returns (status, the chosen position, how many positions tie at the top): with
/// `name_rank` (the lowest-name tie-break) the tie of the smallest name, else the first tie,
/// and the caller draws among the ties as select_host does.
#[pyfunction]
#[pyo3(signature = (n, feasible, m, alloc_t, requested_t, nonzero_t, fit, balanced, fixed, ready, totals, name_rank))]
#[allow(clippy::too_many_arguments)]
fn score(
    n: usize,
    feasible: PyBuffer<i64>,
    m: usize,
    alloc_t: PyBuffer<i64>,
    requested_t: PyBuffer<i64>,
    nonzero_t: PyBuffer<i64>,
    fit: Option<FitScore>,
    balanced: Option<BalancedScore>,
    fixed: Vec<FixedScore>,
    ready: Vec<ReadyScore>,
    totals: PyBuffer<i64>,
    name_rank: Option<PyBuffer<i64>>,
) -> PyResult<(u8, usize, usize)> {
    const CPU: usize = 0;
    const MEMORY: usize = 1;
    let rows = column(&feasible, "feasible")?;
    let alloc = column(&alloc_t, "alloc_t")?;
    let requested = column(&requested_t, "requested_t")?;
    let nonzero = column(&nonzero_t, "nonzero_t")?;
    let totals = output(&totals, "totals", m)?;
    if rows.data.len() < m || alloc.data.len() < 2 * n || requested.data.len() < 2 * n || nonzero.data.len() < 2 * n {
        return Err(PyValueError::new_err("score: columns shorter than the table"));
    }
    let mut picked: Vec<usize> = Vec::with_capacity(m);
    for &r in &rows.data[..m] {
        if r < 0 || r as usize >= n {
            return Err(PyValueError::new_err("score: a row outside the table"));
        }
        picked.push(r as usize);
    }
    let rank = match &name_rank {
        Some(b) => Some(column(b, "name_rank")?),
        None => None,
    };
    for t in totals[..m].iter_mut() {
        *t = 0;
    }
    if fit.is_some() || balanced.is_some() {
        // both resource scores read cpu and memory allocatable; the Python path takes another
        // branch where a scored node lacks either
        if picked.iter().any(|&r| alloc.data[CPU * n + r] <= 0 || alloc.data[MEMORY * n + r] <= 0) {
            return Ok((NOT_COVERED, 0, 0));
        }
    }
    if let Some(f) = &fit {
        let weight_sum = f.weight_cpu + f.weight_memory;
        if weight_sum <= 0 || f.strategy > 1 {
            return Ok((NOT_COVERED, 0, 0));
        }
        for (t, &r) in totals.iter_mut().zip(&picked) {
            let a_cpu = alloc.data[CPU * n + r];
            let a_memory = alloc.data[MEMORY * n + r];
            let q_cpu = nonzero.data[CPU * n + r] + f.pod_cpu;
            let q_memory = nonzero.data[MEMORY * n + r] + f.pod_memory;
            let (s_cpu, s_memory) = if f.strategy == 0 {
                // LeastAllocated: (alloc - req) * 100 / alloc, 0 where the request exceeds it
                (((a_cpu - q_cpu) * MAX_NODE_SCORE / a_cpu).max(0),
                 ((a_memory - q_memory) * MAX_NODE_SCORE / a_memory).max(0))
            } else {
                // MostAllocated: min(req, alloc) * 100 / alloc
                (q_cpu.min(a_cpu) * MAX_NODE_SCORE / a_cpu, q_memory.min(a_memory) * MAX_NODE_SCORE / a_memory)
            };
            *t += (s_cpu * f.weight_cpu + s_memory * f.weight_memory) / weight_sum * f.weight;
        }
    }
    if let Some(b) = &balanced {
        let without = match &b.without {
            Some(w) => Some(column(w, "without")?),
            None => None,
        };
        if b.change && without.as_ref().is_none_or(|w| w.data.len() < n) {
            return Err(PyValueError::new_err("score: the change of balance needs the balance without the pod"));
        }
        for (t, &r) in totals.iter_mut().zip(&picked) {
            let with_pod = balance(requested.data[CPU * n + r] + b.pod_cpu, requested.data[MEMORY * n + r] + b.pod_memory,
                                   alloc.data[CPU * n + r], alloc.data[MEMORY * n + r]);
            let s = match &without {
                Some(w) if b.change => {
                    // 1.36: 50 plus half the balance gained (_balance_change)
                    let half = MAX_NODE_SCORE / 2;
                    half + (half + with_pod - w.data[r]).div_euclid(2)
                }
                _ => with_pod,
            };
            *t += s * b.weight;
        }
    }
    for f in &fixed {
        let raw = column(&f.raw, "raw")?;
        if raw.data.len() < n {
            return Err(PyValueError::new_err("score: raw scores shorter than the table"));
        }
        let mut top = 0i64;
        for &r in &picked {
            let s = raw.data[r];
            if s < 0 {
                return Ok((NOT_COVERED, 0, 0));
            }
            top = top.max(s);
        }
        for (t, &r) in totals.iter_mut().zip(&picked) {
            let s = raw.data[r];
            // default_normalize (plugins/helper.py): DefaultNormalizeScore of the scored rows
            let normalized = match f.normalization {
                0 => s,
                1 | 2 => {
                    let scaled = if top == 0 { 0 } else { MAX_NODE_SCORE * s / top };
                    if f.normalization == 2 { MAX_NODE_SCORE - scaled } else { scaled }
                }
                _ => return Ok((NOT_COVERED, 0, 0)),
            };
            if !(0..=MAX_NODE_SCORE).contains(&normalized) {
                // Framework.run_score's error: the Python path words it
                return Ok((NOT_COVERED, 0, 0));
            }
            *t += normalized * f.weight;
        }
    }
    for r in &ready {
        let scores = column(&r.scores, "scores")?;
        if scores.data.len() < m {
            return Err(PyValueError::new_err("score: fewer ready scores than feasible nodes"));
        }
        if scores.data[..m].iter().any(|s| !(0..=MAX_NODE_SCORE).contains(s)) {
            // Framework.run_score's error: the Python path words it
            return Ok((NOT_COVERED, 0, 0));
        }
        for (t, &s) in totals.iter_mut().zip(&scores.data[..m]) {
            *t += s * r.weight;
        }
    }
    if m == 0 {
        return Ok((OK, 0, 0));
    }
    // select_host: the highest total; ties by the smallest name, or drawn by the caller
    let top = totals[..m].iter().copied().max().unwrap_or(0);
    let mut best = usize::MAX;
    let mut ties = 0usize;
    for (pos, &t) in totals[..m].iter().enumerate() {
        if t != top {
            continue;
        }
        ties += 1;
        best = match (&rank, best) {
            (_, usize::MAX) => pos,
            (Some(rk), b) if rk.data[picked[pos]] < rk.data[picked[b]] => pos,
            (_, b) => b,
        };
    }
    Ok((OK, best, ties))
}

#[pymodule]
fn _kernel(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(find_feasible, m)?)?;
    m.add_function(wrap_pyfunction!(score, m)?)?;
    m.add("OK", OK)?;
    m.add("NOT_COVERED", NOT_COVERED)?;
    Ok(())
}
