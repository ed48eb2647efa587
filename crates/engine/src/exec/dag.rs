//! The scheduler: a node starts as soon as its own dependencies are done.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::task::JoinSet;

/// Runs `f` over `nodes` so that a node starts once every node it depends on (within `nodes`)
/// has succeeded, at most `parallelism` at a time. After a failure (or when `stop` is set) no
/// new node starts unless `keep_going`. Returns the nodes that failed.
pub(crate) async fn run_dag<F, Fut>(
    nodes: Vec<String>,
    deps: HashMap<String, Vec<String>>,
    parallelism: usize,
    keep_going: bool,
    stop: Arc<AtomicBool>,
    f: F,
) -> Vec<String>
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
    let mut ready: std::collections::VecDeque<String> = nodes
        .iter()
        .filter(|n| waiting.get(*n) == Some(&0))
        .cloned()
        .collect();
    let mut failed = Vec::new();
    let mut tasks: JoinSet<(String, bool)> = JoinSet::new();
    let parallelism = parallelism.max(1);
    loop {
        let halted = (!failed.is_empty() && !keep_going) || stop.load(Ordering::SeqCst);
        while !halted && tasks.len() < parallelism {
            let Some(n) = ready.pop_front() else { break };
            let fut = f(n.clone());
            // Each node in its own task: a panic fails the node, not the whole operation.
            tasks.spawn(async move { (n, tokio::spawn(fut).await.unwrap_or(false)) });
        }
        let Some(joined) = tasks.join_next().await else {
            break;
        };
        let (n, ok) = match joined {
            Ok(r) => r,
            // A panicking provider fails its resource, never the engine.
            Err(_) => continue,
        };
        if !ok {
            failed.push(n);
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
    failed
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::time::Duration;

    #[tokio::test]
    async fn a_node_starts_when_its_own_dependencies_finish_not_its_level() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let deps: HashMap<String, Vec<String>> = [("C".to_string(), vec!["B".to_string()])]
            .into_iter()
            .collect();
        let l = log.clone();
        let failed = run_dag(
            vec!["A".into(), "B".into(), "C".into()],
            deps,
            4,
            false,
            Arc::new(AtomicBool::new(false)),
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
        assert!(failed.is_empty());
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
        let failed = run_dag(
            nodes,
            deps,
            3,
            false,
            Arc::new(AtomicBool::new(false)),
            move |n| {
                let (r, p, s) = (r.clone(), p.clone(), s.clone());
                async move {
                    s.lock().unwrap().push(n.clone());
                    let now = r.fetch_add(1, Ordering::SeqCst) + 1;
                    p.fetch_max(now, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    r.fetch_sub(1, Ordering::SeqCst);
                    n != "N0"
                }
            },
        )
        .await;
        assert_eq!(failed, vec!["N0"]);
        assert!(peak.load(Ordering::SeqCst) <= 3);
        assert!(!started.lock().unwrap().contains(&"N9".to_string()));
    }
}
