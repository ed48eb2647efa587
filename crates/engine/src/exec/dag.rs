//! The scheduler: a node starts as soon as its own dependencies are done.

use std::collections::{HashMap, HashSet, VecDeque};
use std::future::Future;
use tokio::sync::watch;
use tokio::task::{AbortHandle, JoinSet};

/// What a DAG run ended with.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct DagOutcome {
    /// Nodes whose work reported failure.
    pub failed: Vec<String>,
    /// Nodes in flight when the run was aborted: their work was cancelled midway.
    pub cancelled: Vec<String>,
}

/// Runs `f` over `nodes` so that a node starts once every node it depends on (within `nodes`)
/// has succeeded, at most `parallelism` at a time. After a failure no new node starts unless
/// `keep_going`. When `abort` turns true nothing new starts and the nodes in flight are
/// cancelled (CancelUpdateStack, a stack timeout).
pub(crate) async fn run_dag<F, Fut>(
    nodes: Vec<String>,
    deps: HashMap<String, Vec<String>>,
    parallelism: usize,
    keep_going: bool,
    mut abort: Option<watch::Receiver<bool>>,
    f: F,
) -> DagOutcome
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = bool> + Send + 'static,
{
    let set: HashSet<&String> = nodes.iter().collect();
    let mut waiting: HashMap<String, usize> = HashMap::new();
    let mut dependents: HashMap<String, Vec<String>> = HashMap::new();
    for n in &nodes {
        let ds: Vec<&String> = deps
            .get(n)
            .map(|d| d.iter().filter(|d| set.contains(d) && *d != n).collect())
            .unwrap_or_default();
        waiting.insert(n.clone(), ds.len());
        for d in ds {
            dependents.entry(d.clone()).or_default().push(n.clone());
        }
    }
    let mut ready: VecDeque<String> = nodes
        .iter()
        .filter(|n| waiting.get(*n) == Some(&0))
        .cloned()
        .collect();
    let mut out = DagOutcome::default();
    let mut tasks: JoinSet<(String, bool)> = JoinSet::new();
    let mut in_flight: HashMap<String, AbortHandle> = HashMap::new();
    let mut aborted = abort.as_ref().is_some_and(|rx| *rx.borrow());
    let parallelism = parallelism.max(1);
    loop {
        let halted = (!out.failed.is_empty() && !keep_going) || aborted;
        while !halted && tasks.len() < parallelism {
            let Some(n) = ready.pop_front() else { break };
            // Each node in its own task: a panic fails the node, not the whole operation, and
            // an abort can cancel it.
            let node = tokio::spawn(f(n.clone()));
            in_flight.insert(n.clone(), node.abort_handle());
            tasks.spawn(async move { (n, node.await.unwrap_or(false)) });
        }
        let joined = match abort.as_mut().filter(|_| !aborted) {
            Some(rx) => tokio::select! {
                joined = tasks.join_next() => joined,
                _ = rx.wait_for(|v| *v) => {
                    aborted = true;
                    for (n, handle) in in_flight.drain() {
                        handle.abort();
                        out.cancelled.push(n);
                    }
                    continue;
                }
            },
            None => tasks.join_next().await,
        };
        let Some(joined) = joined else {
            break;
        };
        // The wrapper task itself cannot fail: the node's outcome is inside.
        let Ok((n, ok)) = joined else { continue };
        if in_flight.remove(&n).is_none() {
            // Cancelled by the abort: already reported.
            continue;
        }
        if !ok {
            out.failed.push(n);
            continue;
        }
        for d in dependents.get(&n).cloned().unwrap_or_default() {
            if let Some(w) = waiting.get_mut(&d) {
                *w -= 1;
                if *w == 0 {
                    ready.push_back(d);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    #[tokio::test]
    async fn a_node_starts_when_its_own_dependencies_finish_not_its_level() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let deps: HashMap<String, Vec<String>> = [("C".to_string(), vec!["B".to_string()])]
            .into_iter()
            .collect();
        let l = log.clone();
        let out = run_dag(
            vec!["A".into(), "B".into(), "C".into()],
            deps,
            4,
            false,
            None,
            move |n| {
                let l = l.clone();
                async move {
                    if n == "A" {
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                    l.lock().unwrap().push(n);
                    true
                }
            },
        )
        .await;
        assert_eq!(out, DagOutcome::default());
        assert_eq!(*log.lock().unwrap(), vec!["B", "C", "A"]);
    }

    #[tokio::test]
    async fn after_a_failure_nothing_new_starts_and_the_bound_holds() {
        let running = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let peak = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let started = Arc::new(Mutex::new(Vec::new()));
        let (r, p, s) = (running.clone(), peak.clone(), started.clone());
        let nodes: Vec<String> = (0..10).map(|i| format!("N{i}")).collect();
        let mut deps = HashMap::new();
        deps.insert("N9".to_string(), vec!["N0".to_string()]);
        let out = run_dag(nodes, deps, 3, false, None, move |n| {
            let (r, p, s) = (r.clone(), p.clone(), s.clone());
            async move {
                s.lock().unwrap().push(n.clone());
                let now = r.fetch_add(1, Ordering::SeqCst) + 1;
                p.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(20)).await;
                r.fetch_sub(1, Ordering::SeqCst);
                n != "N0"
            }
        })
        .await;
        assert_eq!(out.failed, vec!["N0"]);
        assert!(peak.load(Ordering::SeqCst) <= 3);
        assert!(!started.lock().unwrap().contains(&"N9".to_string()));
    }

    #[tokio::test]
    async fn an_abort_cancels_what_is_in_flight_and_starts_nothing_more() {
        let (tx, rx) = watch::channel(false);
        let deps: HashMap<String, Vec<String>> = [("B".to_string(), vec!["A".to_string()])]
            .into_iter()
            .collect();
        let b_started = Arc::new(AtomicBool::new(false));
        let b = b_started.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(30)).await;
            tx.send_replace(true);
        });
        let out = run_dag(
            vec!["A".into(), "B".into()],
            deps,
            4,
            false,
            Some(rx),
            move |n| {
                let b = b.clone();
                async move {
                    if n == "B" {
                        b.store(true, Ordering::SeqCst);
                    }
                    std::future::pending::<()>().await;
                    true
                }
            },
        )
        .await;
        assert_eq!(out.cancelled, vec!["A"]);
        assert!(out.failed.is_empty());
        assert!(!b_started.load(Ordering::SeqCst));
    }
}
