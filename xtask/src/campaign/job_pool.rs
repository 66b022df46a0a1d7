//! Running independent jobs on a few worker threads (each job typically
//! one QEMU), handing every result to the caller's thread as it arrives.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, mpsc};

/// Runs `work` on each job with at most `workers` at a time; `on_done`
/// sees each result on the calling thread, in completion order. Once
/// `stop` is set (by `on_done` or anyone), no further job starts; those
/// already running finish. Returns how many jobs ran.
pub fn run_jobs<J, R>(
    jobs: Vec<J>,
    workers: usize,
    stop: &AtomicBool,
    work: impl Fn(J) -> R + Sync,
    mut on_done: impl FnMut(R),
) -> usize
where
    J: Send,
    R: Send,
{
    let workers = workers.clamp(1, jobs.len().max(1));
    let queue = Mutex::new(VecDeque::from(jobs));
    let (sender, receiver) = mpsc::channel();
    let mut done = 0;
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let sender = sender.clone();
            let (queue, work) = (&queue, &work);
            scope.spawn(move || {
                loop {
                    if stop.load(Ordering::Acquire) {
                        break;
                    }
                    let job = queue
                        .lock()
                        .unwrap_or_else(|poisoned| poisoned.into_inner())
                        .pop_front();
                    let Some(job) = job else { break };
                    if sender.send(work(job)).is_err() {
                        break;
                    }
                }
            });
        }
        // Ours goes away so the channel closes when the last worker does.
        drop(sender);
        for result in receiver {
            done += 1;
            on_done(result);
        }
    });
    done
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn every_job_runs_once() {
        let stop = AtomicBool::new(false);
        let mut seen = Vec::new();
        let ran = run_jobs(
            (0..50).collect(),
            4,
            &stop,
            |n: u32| n * 2,
            |r| seen.push(r),
        );
        assert_eq!(ran, 50);
        seen.sort_unstable();
        assert_eq!(seen, (0..50).map(|n| n * 2).collect::<Vec<_>>());
    }

    #[test]
    fn never_more_than_workers_at_once() {
        let stop = AtomicBool::new(false);
        let (running, peak) = (AtomicUsize::new(0), AtomicUsize::new(0));
        run_jobs(
            (0..40).collect(),
            3,
            &stop,
            |_: u32| {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                std::thread::yield_now();
                running.fetch_sub(1, Ordering::SeqCst);
            },
            |()| {},
        );
        assert!(peak.load(Ordering::SeqCst) <= 3);
    }

    #[test]
    fn stop_prevents_further_jobs() {
        // Each job waits for a token that `on_done` hands out after the
        // previous result, so the worker cannot run ahead of the caller.
        let stop = AtomicBool::new(false);
        let (tokens, token) = mpsc::channel::<()>();
        let token = Mutex::new(token);
        tokens.send(()).unwrap();
        let ran = run_jobs(
            (0..100).collect(),
            1,
            &stop,
            |n: u32| {
                token.lock().unwrap().recv().unwrap();
                n
            },
            |n| {
                if n == 4 {
                    stop.store(true, Ordering::Release);
                }
                // Also releases a job that was taken before the stop.
                let _ = tokens.send(());
            },
        );
        assert!((5..=6).contains(&ran), "{ran} jobs ran");
    }

    #[test]
    fn no_jobs_no_threads_needed() {
        let stop = AtomicBool::new(false);
        assert_eq!(run_jobs(Vec::<u32>::new(), 8, &stop, |n| n, |_| {}), 0);
    }
}
