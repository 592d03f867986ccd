//! The conversation, the layer above the messages: the serve loop's model
//! (which command each event answers), the tap's judge, the controller and
//! the engine loop on it, and the log format; public as `v2::serve`
//! (`src/v2/serve.rs`, its face and its docs).

pub(crate) mod control;
mod controller;
mod controller_error;
mod engine;
mod engine_loop;
#[cfg(feature = "workbench")]
mod log;
#[cfg(feature = "workbench")]
mod log_reader;
mod model;
// The tap's judgement of each line, both ways (re-exported by `workbench`).
#[cfg(feature = "workbench")]
pub(crate) mod monitor;
mod pipe;
#[cfg(feature = "workbench")]
#[doc(hidden)]
pub mod record;
mod reply;
mod shared;
mod tee;
#[cfg(feature = "tokio")]
mod tokio_controller;
#[cfg(feature = "tokio")]
mod tokio_engine_loop;
mod turn_log;

pub use self::control::MAX_NOTICES;
pub use self::controller::{Controller, TurnHandle};
pub use self::controller_error::{ControllerError, Misanswered, Stopped, Unreadable};
pub use self::engine::{
    Compacted, Decision, Engine, EventWriter, Prediction, Question, RunningCompaction, RunningTurn,
    StepInput, WorkError,
};
pub use self::engine_loop::{EngineLoop, GOAL_AUTO_CONTINUE_MAX_TURNS};
pub use self::model::{Attribution, Conversation, Owed};
pub use self::pipe::{pipe, PipeReader, PipeWriter};
#[cfg(feature = "workbench")]
pub use self::record::{Direction, Recorder};
pub use self::reply::{
    Approval, CommandLine, Compaction, EventLine, Limits, Notice, Options, Reply, Steered,
    Suggestion, Turn, TurnEnd, Waiting,
};
pub use self::tee::STDERR_TAIL;
#[cfg(feature = "tokio")]
pub use self::tokio_controller::{TokioController, TokioTurn};
#[cfg(feature = "tokio")]
pub use self::tokio_engine_loop::{TokioEngine, TokioEngineLoop};
