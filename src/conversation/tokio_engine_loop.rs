//! The serve loop on tokio: the same [`Pump`] as [`EngineLoop`], its work
//! run as tasks, its input read with the crate's `CommandCodec` and its
//! output written by one task.
//!
//! [`EngineLoop`]: crate::v2::serve::EngineLoop

use super::engine::{
    Compacted, EventWriter, Prediction, RunningCompaction, RunningTurn, WorkError,
};
use super::engine_loop::{classify, end_compaction, end_turn, Driver, Flow, JobStop, Pump, Step};
use super::shared::{loop_settings, Settings};
use crate::v2::{CommandCodec, Content, JobRecord, JobStopOutcome, PredictionOutcome, ReadError};
use bytes::BytesMut;
use std::any::Any;
use std::future::Future;
use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc::{self, UnboundedSender};
use tokio::task::JoinHandle;
use tokio_util::codec::Decoder;

/// [`Engine`](crate::v2::serve::Engine) for a turn that awaits: what only
/// the engine knows, with its work as futures. The loop,
/// [`TokioEngineLoop`], keeps every other promise, as [`EngineLoop`]
/// does.
///
/// A turn awaits its model call; it asks approvals with
/// [`RunningTurn::ask_async`] and races [`RunningTurn::cancelled`] with
/// what it awaits. Every method but [`TokioEngine::turn`] has the default
/// [`Engine`](crate::v2::serve::Engine)'s has.
///
/// [`EngineLoop`]: crate::v2::serve::EngineLoop
pub trait TokioEngine: Send + Sync + 'static {
    /// Runs one turn, as [`Engine::turn`](crate::v2::serve::Engine::turn).
    fn turn(
        &self,
        turn: &mut RunningTurn<'static>,
    ) -> impl Future<Output = Result<String, WorkError>> + Send;

    /// Compacts the conversation, as
    /// [`Engine::compact`](crate::v2::serve::Engine::compact). The default
    /// fails: `this engine does not compact`.
    fn compact(
        &self,
        compaction: &RunningCompaction<'static>,
    ) -> impl Future<Output = Result<Compacted, WorkError>> + Send {
        let _ = compaction;
        async { Err("this engine does not compact".into()) }
    }

    /// The background jobs, for `jobs_snapshot`. The default: none.
    fn jobs(&self) -> Vec<JobRecord> {
        Vec::new()
    }

    /// Stops a background job. The default: `not_found`.
    fn stop_job(
        &self,
        generation: &str,
        job_id: &str,
    ) -> impl Future<Output = JobStopOutcome> + Send {
        let _ = (generation, job_id);
        async { JobStopOutcome::NotFound }
    }

    /// Whether to predict now, and from which event, as
    /// [`Engine::prediction_source`](crate::v2::serve::Engine::prediction_source).
    /// The default: `None`.
    fn prediction_source(&self) -> Option<i32> {
        None
    }

    /// Predicts what the user types next, as
    /// [`Engine::predict`](crate::v2::serve::Engine::predict): only
    /// `Completed` and `Failed` are written, and only if nothing cancelled
    /// it. The default: `skipped`.
    fn predict(&self, prediction: &Prediction) -> impl Future<Output = PredictionOutcome> + Send {
        let _ = prediction;
        async { PredictionOutcome::Skipped }
    }

    /// Whether to go on toward an auto goal, as
    /// [`Engine::continue_goal`](crate::v2::serve::Engine::continue_goal).
    /// The default: `None`.
    fn continue_goal(&self, goal: &str) -> Option<Content> {
        let _ = goal;
        None
    }
}

/// [`EngineLoop`](crate::v2::serve::EngineLoop) on tokio: the same rules
/// (one state machine serves both), with the engine's work as tasks.
///
/// [`TokioEngineLoop::serve`] spawns tasks, so it runs inside a tokio
/// runtime (either flavour; `rt` is enough).
///
/// ```
/// use serve_command::v2::serve::{RunningTurn, TokioEngine, TokioEngineLoop, WorkError};
///
/// struct Echo;
///
/// impl TokioEngine for Echo {
///     async fn turn(&self, turn: &mut RunningTurn<'static>) -> Result<String, WorkError> {
///         Ok(format!("You asked: {}", turn.content().to_text()))
///     }
/// }
///
/// # fn main() -> std::io::Result<()> {
/// let runtime = tokio::runtime::Builder::new_current_thread().build()?;
/// let input: &[u8] = b"{\"command\":\"prompt\",\"content\":\"hi\"}\n";
/// let mut output = Vec::new();
/// runtime.block_on(TokioEngineLoop::new(Echo).in_order().serve(input, &mut output))?;
/// assert_eq!(output, b"{\"event\":\"agent_finished\",\"answer\":\"You asked: hi\"}\n");
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct TokioEngineLoop<E> {
    engine: Arc<E>,
    settings: Settings,
}

impl<E: TokioEngine> TokioEngineLoop<E> {
    /// The loop around `engine`, reading commands as they come.
    pub fn new(engine: E) -> TokioEngineLoop<E> {
        let engine = Arc::new(engine);
        let settings = Settings::default();
        TokioEngineLoop { engine, settings }
    }

    loop_settings!(TokioEngineLoop);

    /// Serves the commands of `input`, writing events to `output`, as
    /// [`EngineLoop::serve`](crate::v2::serve::EngineLoop::serve) does.
    ///
    /// # Errors
    ///
    /// A failed write to `output` (or a failed read of `input`, which ends
    /// reading as the end of input does, once the work has ended).
    pub async fn serve(
        &self,
        input: impl AsyncRead + Unpin + Send + 'static,
        mut output: impl AsyncWrite + Unpin,
    ) -> io::Result<Option<ReadError>> {
        let (lines, mut written) = mpsc::unbounded_channel::<Vec<u8>>();
        let failed = Arc::new(Mutex::new(None));
        let out = EventWriter::to_task(lines, Arc::clone(&failed));
        // One writer: lines go out whole, in the order they were handed over.
        let writer_failed = Arc::clone(&failed);
        let writer = async move {
            while let Some(line) = written.recv().await {
                let result = match output.write_all(&line).await {
                    Ok(()) => output.flush().await,
                    Err(error) => Err(error),
                };
                if let Err(error) = result {
                    *super::engine::lock(&writer_failed) = Some(error.kind());
                    break;
                }
            }
        };
        // Once the work has ended, every writer is dropped: the writer
        // drains what is left and ends.
        let work = self.run(input, out);
        // Both at once, on this task (`tokio::join!` without tokio's
        // `macros`): the output need not be `'static`.
        let (mut work, mut writer) = (std::pin::pin!(work), std::pin::pin!(writer));
        let (mut stopped, mut written) = (None, false);
        std::future::poll_fn(|cx| {
            if stopped.is_none() {
                if let Poll::Ready(result) = work.as_mut().poll(cx) {
                    stopped = Some(result);
                }
            }
            if !written {
                written = writer.as_mut().poll(cx).is_ready();
            }
            if stopped.is_some() && written {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await;
        let stopped = stopped.unwrap_or(None);
        if let Some(kind) = *super::engine::lock(&failed) {
            return Err(io::Error::new(kind, "writing to the controller failed"));
        }
        Ok(stopped)
    }

    async fn run(
        &self,
        input: impl AsyncRead + Unpin + Send + 'static,
        out: EventWriter<'static>,
    ) -> Option<ReadError> {
        let (steps, mut rx) = mpsc::unbounded_channel();
        let park = steps.clone();
        let parked = self.settings.parked(move || {
            let _ = park.send(Step::Parked);
        });
        let driver = TokioDriver {
            engine: Arc::clone(&self.engine),
            steps: steps.clone(),
            helpers: Vec::new(),
        };
        let mut pump = Pump::new(driver, out.clone(), parked);
        let codec = CommandCodec::with_max_line_len(self.settings.max_line_len);
        let mut commands = Commands {
            input,
            codec,
            buf: BytesMut::new(),
            out: out.clone(),
            eof: false,
        };
        let stopped = if self.settings.in_order {
            let stopped = loop {
                match commands.next().await {
                    Flow::Command(command) => {
                        pump.step(Step::Wire(command));
                        while pump.busy() {
                            let Some(step) = rx.recv().await else { break };
                            pump.step(step);
                        }
                        // In order, a request's answer comes before the
                        // next command is read.
                        for helper in pump.driver_mut().helpers.drain(..) {
                            let _ = helper.await;
                        }
                        while let Ok(step) = rx.try_recv() {
                            pump.step(step);
                        }
                        if out.has_failed() {
                            break None;
                        }
                    }
                    Flow::Answered => {}
                    Flow::Stop(stopped) => break stopped,
                }
            };
            pump.step(Step::Shutdown);
            stopped
        } else {
            let reader_steps = steps.clone();
            let reading = tokio::spawn(async move {
                let stopped = loop {
                    match commands.next().await {
                        Flow::Command(command) => {
                            if reader_steps.send(Step::Wire(command)).is_err()
                                || commands.out.has_failed()
                            {
                                break None;
                            }
                        }
                        Flow::Answered => {}
                        Flow::Stop(stopped) => break stopped,
                    }
                };
                let _ = reader_steps.send(Step::Shutdown);
                stopped
            });
            while !pump.done() {
                let Some(step) = rx.recv().await else { break };
                pump.step(step);
            }
            reading.await.unwrap_or(None)
        };
        drop(steps);
        while !pump.done() {
            let Some(step) = rx.recv().await else { break };
            pump.step(step);
        }
        for helper in pump.driver_mut().helpers.drain(..) {
            let _ = helper.await;
        }
        stopped
    }
}

/// Commands read from an `AsyncRead` with the crate's codec, each refused
/// line answered at once.
struct Commands<R> {
    input: R,
    codec: CommandCodec,
    buf: BytesMut,
    out: EventWriter<'static>,
    eof: bool,
}

impl<R: AsyncRead + Unpin> Commands<R> {
    async fn next(&mut self) -> Flow {
        loop {
            let item = if self.eof {
                self.codec.decode_eof(&mut self.buf)
            } else {
                self.codec.decode(&mut self.buf)
            };
            match item {
                Ok(Some(item)) => return classify(item, &self.out),
                // A failed read ends reading, as the end of input does.
                Err(_) => return Flow::Stop(None),
                Ok(None) if self.eof => return Flow::Stop(None),
                Ok(None) => {}
            }
            // Room to read into, as `FramedRead` keeps (without it a read
            // fills 64 bytes, and a 64 MiB line takes a million reads).
            self.buf.reserve(64 * 1024);
            match self.input.read_buf(&mut self.buf).await {
                Ok(0) => self.eof = true,
                Ok(_) => {}
                Err(_) => return Flow::Stop(None),
            }
        }
    }
}

/// The tokio loop's work: tasks.
struct TokioDriver<E> {
    engine: Arc<E>,
    steps: UnboundedSender<Step>,
    /// The `job_stop` and prediction tasks, awaited before the loop returns.
    helpers: Vec<JoinHandle<()>>,
}

impl<E: TokioEngine> Driver<'static> for TokioDriver<E> {
    fn jobs(&self) -> Vec<JobRecord> {
        self.engine.jobs()
    }

    fn continue_goal(&self, goal: &str) -> Option<Content> {
        self.engine.continue_goal(goal)
    }

    fn prediction_source(&self) -> Option<i32> {
        self.engine.prediction_source()
    }

    fn start_turn(&mut self, mut turn: RunningTurn<'static>) {
        let (engine, steps) = (Arc::clone(&self.engine), self.steps.clone());
        tokio::spawn(async move {
            let result = CatchUnwind::new(engine.turn(&mut turn)).await;
            let _ = steps.send(end_turn(&mut turn, result));
        });
    }

    fn start_compaction(&mut self, compaction: RunningCompaction<'static>) {
        let (engine, steps) = (Arc::clone(&self.engine), self.steps.clone());
        tokio::spawn(async move {
            let result = CatchUnwind::new(engine.compact(&compaction)).await;
            end_compaction(&compaction, result);
            let _ = steps.send(Step::CompactDone);
        });
    }

    fn stop_job(&mut self, out: EventWriter<'static>, request: JobStop) {
        let engine = Arc::clone(&self.engine);
        self.helper(async move {
            let outcome = engine.stop_job(&request.generation, &request.job_id).await;
            let _ = out.write(&request.answer(outcome));
        });
    }

    fn predict(&mut self, prediction: Prediction) {
        let (engine, steps) = (Arc::clone(&self.engine), self.steps.clone());
        self.helper(async move {
            // A panic is a prediction that failed to generate: dropped.
            let outcome = CatchUnwind::new(engine.predict(&prediction))
                .await
                .unwrap_or(PredictionOutcome::Skipped);
            let _ = steps.send(Step::Predicted(prediction, outcome));
        });
    }
}

impl<E> TokioDriver<E> {
    fn helper(&mut self, job: impl Future<Output = ()> + Send + 'static) {
        self.helpers.retain(|h| !h.is_finished());
        self.helpers.push(tokio::spawn(job));
    }
}

/// A future whose panic is caught, as `catch_unwind` catches a closure's:
/// a panicking turn ends with `turn_failed` and the loop goes on. (The one
/// combinator the loop needs from `futures-util`; twelve lines here spare
/// the dependency.)
struct CatchUnwind<F>(Pin<Box<F>>);

impl<F: Future> CatchUnwind<F> {
    fn new(future: F) -> CatchUnwind<F> {
        CatchUnwind(Box::pin(future))
    }
}

impl<F: Future> Future for CatchUnwind<F> {
    type Output = Result<F::Output, Box<dyn Any + Send>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let future = self.get_mut().0.as_mut();
        match panic::catch_unwind(AssertUnwindSafe(|| future.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}
