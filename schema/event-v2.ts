/**
 * serve event, v2: the lines the engine writes, as TypeScript types. Generated
 * by schema-check/tests/events.rs from serve_command::v2::Event; do not edit.
 * Regenerate: UPDATE_SCHEMA=1 cargo test -p serve-command-schema-check. These
 * types are the canonical line, event-v2.schema.json's root (a): exactly each
 * event's keys (object literals are checked for them), `null` where it is
 * written, a key marked `?` left out when it has no value. A client that reads
 * a line as upstream's `parse` does (event-v2.schema.json's
 * `#/$defs/ReadEvent`) and applies its defaults holds one of these. The types
 * do not check what a pattern, a range or an array's length says (a job
 * component, an integer's range, an image's base64, content of one text part
 * written as an array): the schema does.
 */

/**
 * Any JSON value: a job's free-form `data`.
 */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };

/**
 * An `Int` as upstream's `int` reads it: a number whose value is a whole number
 * from -2147483648 to 2147483647. The engine writes it in plain digits; a
 * reader also takes `7.0`, `7e0`, `-0` (0) and a number that rounds to a whole
 * double (`2147483646.99999999999`), but not `1.5`, `2147483648` or `"7"`.
 */
export type Int = number;

/**
 * An artifact component, never a path: 1 to 200 of `A-Z`, `a-z`, `0-9`, `.`,
 * `_`, `-`, and neither `.` nor `..`. A job record with any other `generation`,
 * `id` or `output_file` is no job record, and its event is none.
 */
export type JobComponent = string;

/**
 * What a `job_changed` reports. Exactly one of these strings.
 */
export type JobEventKind = "started" | "updated" | "finished" | "failed";

/**
 * How a `job_stop` came out. Exactly one of these strings.
 */
export type JobStopOutcome = "stopped" | "already_terminal" | "not_found" | "wrong_runtime";

/**
 * A background job's state, by `kind`. `interrupted` means its owner
 * disappeared; it does not assert that every descendant process was terminated.
 * A reader ignores keys its kind does not read; any other `kind`, an `exited`
 * without an `Int` `code` or a `stopped` without a non-empty string `reason` is
 * no state.
 */
export type JobState =
  /**
   * Running.
   */
  | { kind: "running" }
  /**
   * Being stopped.
   */
  | { kind: "stopping" }
  /**
   * Exited with `code`.
   */
  | { kind: "exited"; code: Int }
  /**
   * Stopped, for `reason`.
   */
  | { kind: "stopped"; reason: string }
  /**
   * Its owner disappeared.
   */
  | { kind: "interrupted" };

/**
 * A durable background execution record (schema version 1), written with all
 * its keys but `data`, `null` for each optional value that is absent. A reader
 * takes an optional key absent as `null`, and ignores keys it does not read.
 */
export interface JobRecord {
  /**
   * Always 1.
   */
  schema_version: 1;
  /**
   * Why cleaning up failed, if it did.
   */
  cleanup_error: string | null;
  /**
   * The engine generation that owns the job.
   */
  generation: string;
  /**
   * The job's id.
   */
  id: string;
  /**
   * How many times the record changed: from 1 to 2147483647.
   */
  revision: number;
  /**
   * The shell command.
   */
  command: string;
  /**
   * What the job is for, if said.
   */
  description: string | null;
  /**
   * Where it runs, if said.
   */
  cwd: string | null;
  /**
   * Running, stopping, or how it ended.
   */
  state: JobState;
  /**
   * Milliseconds since the epoch: a whole number from 0 to 2^53 - 1.
   */
  started_at_ms: number;
  /**
   * When it went to the background, likewise.
   */
  backgrounded_at_ms: number;
  /**
   * When it finished, if it has.
   */
  finished_at_ms: number | null;
  /**
   * When it last wrote output, if it has.
   */
  last_output_at_ms: number | null;
  /**
   * Its output file, a basename relative to `jobs/<generation>` (a job
   * component), if kept.
   */
  output_file: string | null;
  /**
   * Whether the output file outlives the session.
   */
  output_persistent: boolean;
  /**
   * Output bytes so far: from 0 to 2^53 - 1.
   */
  output_bytes: number;
  /**
   * Output characters so far: from 0 to 2147483647.
   */
  output_chars: number;
  /**
   * Whether the output was cut.
   */
  output_truncated: boolean;
  /**
   * Whether the output held invalid UTF-8.
   */
  invalid_utf8: boolean;
  /**
   * Why the output could not be read, if it could not.
   */
  output_error: string | null;
  /**
   * Why the output could not be kept, if it could not.
   */
  persistence_error: string | null;
  /**
   * Structured results kept with the job, any JSON but `null`; the key is left
   * out when there are none. Upstream writes it back as it read it,
   * re-serialized: keys in the order they first came (a repeated key keeps its
   * last value), numbers as `Double::to_string` writes them (`1.50` is `1.5`),
   * an integer beyond 2^53 - 1 or a number beyond a double as its source text.
   */
  data?: Exclude<JsonValue, null>;
}

/**
 * How the engine's prediction came out, by `kind`. Since fdf10827 the engine
 * writes only `completed`, and `failed` when it could not store the prediction;
 * `skipped` and `cancelled` (an older engine's) still read. A reader ignores
 * keys its kind does not read; any other `kind` is no outcome.
 */
export type PredictionOutcome =
  /**
   * A prediction was made (or found nothing to say: `text` null).
   */
  | { kind: "completed"; text: string | null; input_tokens: number; output_tokens: number }
  /**
   * The prediction was skipped.
   */
  | { kind: "skipped" }
  /**
   * The prediction was cancelled.
   */
  | { kind: "cancelled" }
  /**
   * The prediction failed, with `message`.
   */
  | { kind: "failed"; message: string };

/**
 * A model response's token counts (upstream's `Usage`;
 * `serve_command::v2::Usage`): five `Int`s, each at least 0, every one
 * required.
 */
export interface TokenUsage {
  /**
   * Tokens in the prompt.
   */
  prompt_tokens: number;
  /**
   * Tokens generated.
   */
  completion_tokens: number;
  /**
   * Their sum, as the provider counts it.
   */
  total_tokens: number;
  /**
   * Prompt tokens served from the provider's cache.
   */
  prompt_cache_hit_tokens: number;
  /**
   * Prompt tokens not in it.
   */
  prompt_cache_miss_tokens: number;
}

/**
 * What a steer said: a string when it is exactly one text part (so older
 * readers still read plain text), else the array of its parts in order, empty
 * included. A reader also takes an array of one text part, as that text. The
 * TypeScript type cannot refuse an array of one text part; the written schema
 * does.
 */
export type Content = string | ContentPart[];

/**
 * One part of a message: text or an image, by `type`. A reader ignores the keys
 * its type does not read; any other `type`, or a part that is not an object, is
 * no content.
 */
export type ContentPart = TextPart | ImagePart;

/**
 * A text part.
 */
export interface TextPart {
  /**
   * The part's kind.
   */
  type: "text";
  /**
   * The text.
   */
  text: string;
}

/**
 * An image, inline: its bytes at most 5 MiB, PNG, JPEG, GIF or WebP as their
 * first bytes say, and `media_type` the type they identify. A part that breaks
 * one of these makes its event none.
 */
export interface ImagePart {
  /**
   * The part's kind.
   */
  type: "image";
  /**
   * The image's media type, the one its bytes identify.
   */
  media_type: "image/png" | "image/jpeg" | "image/gif" | "image/webp";
  /**
   * The bytes in canonical padded base64 (decoding and re-encoding gives the
   * same text back), at most 5 MiB decoded.
   */
  data: string;
}

/**
 * One event an agent engine (`openseek serve`) writes on its stdout: one JSON
 * object per line, compact, ending in one LF, its `event` naming one of 58
 * events.
 */
export type Event =
  | JobChanged
  | PredictionResult
  | JobsSnapshot
  | JobStopResult
  | AgentSetupFailed
  | AgentStep
  | StreamRetry
  | AgentAborted
  | AgentFinished
  | MaxStepsExhausted
  | TurnFailed
  | AssistantDelta
  | ReasoningDelta
  | AssistantMessage
  | ReasoningMessage
  | Usage
  | ToolResult
  | ToolCallDecodeError
  | ApprovalRequested
  | ApprovalResolved
  | SteerApplied
  | SteerDropped
  | BackgroundNotice
  | GoalUpdated
  | GoalBlocked
  | GoalUnblocked
  | GoalCheck
  | GoalReminder
  | GoalContinue
  | GoalBudgetExhausted
  | PlanReminder
  | CompactionStarted
  | CompactionFinished
  | CompactionFailed
  | SubrunStarted
  | SubrunFinished
  | WorkflowStarted
  | WorkflowFinished
  | AutoCompactionStarted
  | AutoCompactionFinished
  | AutoCompactionFailed
  | ContextYield
  | SessionStarted
  | SessionError
  | WorkspaceCreated
  | CommandError
  | McpConfigIgnored
  | McpConfigUnreadable
  | McpConfigInvalid
  | McpToolsRegistered
  | McpToolDuplicate
  | McpToolRenamed
  | McpToolsCapped
  | McpServerSkippedOverCap
  | McpConnectFailed
  | McpListToolsFailed
  | McpListToolsTimeout
  | McpNoTools;

/**
 * Every event's name.
 */
export type EventName = Event["event"];

/**
 * A background job started, changed, finished or failed. Job events are
 * session-scoped and may arrive between turns.
 */
export interface JobChanged {
  /**
   * The event's name.
   */
  event: "job_changed";
  kind: JobEventKind;
  job: JobRecord;
}

/**
 * The engine's own prediction of the user's next message, answering no command:
 * after a turn that ended `agent_finished`, with nothing else running or
 * queued, written only if no command moved the session on. A line that still
 * carries an older engine's `request_id` (of any type) reads the same, the key
 * ignored.
 */
export interface PredictionResult {
  /**
   * The event's name.
   */
  event: "prediction_result";
  /**
   * The sequence number of the session's last event when the prediction
   * started: any `Int` (0 and below too).
   */
  source_sequence: Int;
  outcome: PredictionOutcome;
}

/**
 * The answer to a `jobs_snapshot` command: every background job.
 */
export interface JobsSnapshot {
  /**
   * The event's name.
   */
  event: "jobs_snapshot";
  /**
   * The `request_id` of the command it answers.
   */
  request_id: string;
  jobs: JobRecord[];
}

/**
 * The answer to a `job_stop` command.
 */
export interface JobStopResult {
  /**
   * The event's name.
   */
  event: "job_stop_result";
  /**
   * The `request_id` of the command it answers.
   */
  request_id: string;
  /**
   * The command's `generation`, any string.
   */
  generation: string;
  /**
   * The command's `job_id`, any string.
   */
  job_id: string;
  outcome: JobStopOutcome;
}

/**
 * The agent could not be set up.
 */
export interface AgentSetupFailed {
  /**
   * The event's name.
   */
  event: "agent_setup_failed";
  error: string;
}

/**
 * A step of the turn began.
 */
export interface AgentStep {
  /**
   * The event's name.
   */
  event: "agent_step";
  step: Int;
}

/**
 * The current step's provider request failed, and attempt `attempt` of
 * `max_attempts` is about to be made: a controller may discard the failed
 * attempt's live output. Transient: never part of the session's record.
 */
export interface StreamRetry {
  /**
   * The event's name.
   */
  event: "stream_retry";
  attempt: Int;
  max_attempts: Int;
  reason: string;
}

/**
 * The turn was aborted.
 */
export interface AgentAborted {
  /**
   * The event's name.
   */
  event: "agent_aborted";
  reason: string;
}

/**
 * The turn finished with an answer.
 */
export interface AgentFinished {
  /**
   * The event's name.
   */
  event: "agent_finished";
  answer: string;
}

/**
 * The turn used every step it had.
 */
export interface MaxStepsExhausted {
  /**
   * The event's name.
   */
  event: "max_steps_exhausted";
}

/**
 * The turn failed.
 */
export interface TurnFailed {
  /**
   * The event's name.
   */
  event: "turn_failed";
  error: string;
}

/**
 * A fragment of the assistant's message, as it streams.
 */
export interface AssistantDelta {
  /**
   * The event's name.
   */
  event: "assistant_delta";
  content: string;
}

/**
 * A fragment of the provider's reasoning, as it streams; the whole reasoning
 * still comes once as `reasoning_message`.
 */
export interface ReasoningDelta {
  /**
   * The event's name.
   */
  event: "reasoning_delta";
  content: string;
}

/**
 * The assistant's whole message.
 */
export interface AssistantMessage {
  /**
   * The event's name.
   */
  event: "assistant_message";
  content: string;
}

/**
 * The provider's whole reasoning.
 */
export interface ReasoningMessage {
  /**
   * The event's name.
   */
  event: "reasoning_message";
  content: string;
}

/**
 * A model response's token counts.
 */
export interface Usage {
  /**
   * The event's name.
   */
  event: "usage";
  usage: TokenUsage;
}

/**
 * A tool call's result.
 */
export interface ToolResult {
  /**
   * The event's name.
   */
  event: "tool_result";
  tool_call_id: string;
  tool_name: string;
  is_error: boolean;
  content: string;
  /**
   * A short summary of the result, if the tool gave one. Always written: `null`
   * when there is none.
   */
  brief: string | null;
}

/**
 * A tool call whose arguments did not decode.
 */
export interface ToolCallDecodeError {
  /**
   * The event's name.
   */
  event: "tool_call_decode_error";
  tool_call_id: string;
  tool_name: string;
  error: string;
}

/**
 * A tool asks for permission and is blocked until an `approval` command with
 * this `id` comes back: the one event a controller must answer. `detail` says
 * what would be granted, `body` what would run.
 */
export interface ApprovalRequested {
  /**
   * The event's name.
   */
  event: "approval_requested";
  /**
   * Minted by the engine, unique within one engine process.
   */
  id: string;
  tool_name: string;
  /**
   * What would be granted.
   */
  detail: string;
  /**
   * What would run, verbatim. Always written: `null` when there is none.
   */
  body: string | null;
}

/**
 * How a requested approval settled, with or without the controller's answer: a
 * controller retires the prompt it shows.
 */
export interface ApprovalResolved {
  /**
   * The event's name.
   */
  event: "approval_resolved";
  id: string;
  /**
   * Any string (`allowed_once`, `rejected` or `cancelled` today): a newer
   * engine may settle with a word an older reader never heard of.
   */
  outcome: string;
}

/**
 * A steer was applied to the running turn.
 */
export interface SteerApplied {
  /**
   * The event's name.
   */
  event: "steer_applied";
  /**
   * How the steer reached the model: any string (`prompt` or `command` today).
   * Always written. A reader takes the key absent or holding anything but a
   * string as `prompt`.
   */
  kind: string;
  content: Content;
  /**
   * The steer's `submission_id`, if it had one. Written only when there is one:
   * the key is left out otherwise.
   */
  submission_id?: string;
}

/**
 * A steer was dropped.
 */
export interface SteerDropped {
  /**
   * The event's name.
   */
  event: "steer_dropped";
  content: Content;
  /**
   * The steer's `submission_id`, if it had one. Written only when there is one:
   * the key is left out otherwise.
   */
  submission_id?: string;
}

/**
 * A notice from the background.
 */
export interface BackgroundNotice {
  /**
   * The event's name.
   */
  event: "background_notice";
  content: string;
}

/**
 * The goal changed.
 */
export interface GoalUpdated {
  /**
   * The event's name.
   */
  event: "goal_updated";
  /**
   * The goal; `null` when it was cleared. Always written: `null` when there is
   * none.
   */
  goal: string | null;
}

/**
 * The goal is blocked.
 */
export interface GoalBlocked {
  /**
   * The event's name.
   */
  event: "goal_blocked";
  reason: string;
}

/**
 * The goal is no longer blocked.
 */
export interface GoalUnblocked {
  /**
   * The event's name.
   */
  event: "goal_unblocked";
}

/**
 * The goal's check.
 */
export interface GoalCheck {
  /**
   * The event's name.
   */
  event: "goal_check";
  content: string;
}

/**
 * A reminder of the goal.
 */
export interface GoalReminder {
  /**
   * The event's name.
   */
  event: "goal_reminder";
  content: string;
}

/**
 * The goal goes on, with `remaining` turns.
 */
export interface GoalContinue {
  /**
   * The event's name.
   */
  event: "goal_continue";
  remaining: Int;
}

/**
 * The goal used its `turns`.
 */
export interface GoalBudgetExhausted {
  /**
   * The event's name.
   */
  event: "goal_budget_exhausted";
  turns: Int;
}

/**
 * A reminder of the plan.
 */
export interface PlanReminder {
  /**
   * The event's name.
   */
  event: "plan_reminder";
  content: string;
}

/**
 * A compaction began.
 */
export interface CompactionStarted {
  /**
   * The event's name.
   */
  event: "compaction_started";
  from_sequence: Int;
  to_sequence: Int;
}

/**
 * A compaction finished.
 */
export interface CompactionFinished {
  /**
   * The event's name.
   */
  event: "compaction_finished";
  from_sequence: Int;
  to_sequence: Int;
  summary: string;
}

/**
 * A compaction failed, or was cancelled: how loudly to show it is the client's
 * call.
 */
export interface CompactionFailed {
  /**
   * The event's name.
   */
  event: "compaction_failed";
  error: string;
}

/**
 * A nested sub-run (a review, an explore) began inside this run.
 */
export interface SubrunStarted {
  /**
   * The event's name.
   */
  event: "subrun_started";
  /**
   * Unique within the stream: it pairs the start with its finish.
   */
  id: string;
  /**
   * The surface (`review`, `explore`).
   */
  kind: string;
  /**
   * A short, display-bounded string.
   */
  label: string;
}

/**
 * The paired completion of a sub-run, on success, failure and cancellation,
 * before the parent turn's own terminal event.
 */
export interface SubrunFinished {
  /**
   * The event's name.
   */
  event: "subrun_finished";
  id: string;
  /**
   * The sub-run's terminal in snake_case (`captured`, `no_report`, `max_steps`,
   * `context_yield`, `timed_out`, `failed`, `cancelled`).
   */
  status: string;
  steps: Int;
  prompt_tokens: Int;
  completion_tokens: Int;
  /**
   * Why the counts may fall short of the child's spend; absent, they are the
   * child's own account. Written only when there is one: the key is left out
   * otherwise.
   */
  unaccounted?: string;
}

/**
 * A `mbtx` snippet started a workflow, a run that delegates to child agents of
 * its own.
 */
export interface WorkflowStarted {
  /**
   * The event's name.
   */
  event: "workflow_started";
  id: string;
  /**
   * The absolute path of its append-only JSONL ledger of resolved calls.
   */
  journal: string;
  /**
   * The absolute path of the sidecar that reports each launch when it starts.
   */
  events: string;
  /**
   * The first reserved child ordinal: the run's child sessions are
   * `<parent>-sr-N` for N from `first_child` below `first_child + child_count`.
   */
  first_child: Int;
  child_count: Int;
}

/**
 * The paired completion of a workflow, on every exit of its snippet.
 */
export interface WorkflowFinished {
  /**
   * The event's name.
   */
  event: "workflow_finished";
  id: string;
}

/**
 * An automatic compaction began.
 */
export interface AutoCompactionStarted {
  /**
   * The event's name.
   */
  event: "auto_compaction_started";
  from_sequence: Int;
  to_sequence: Int;
}

/**
 * An automatic compaction finished.
 */
export interface AutoCompactionFinished {
  /**
   * The event's name.
   */
  event: "auto_compaction_finished";
  from_sequence: Int;
  to_sequence: Int;
  summary: string;
}

/**
 * An automatic compaction failed.
 */
export interface AutoCompactionFailed {
  /**
   * The event's name.
   */
  event: "auto_compaction_failed";
  error: string;
}

/**
 * The context yielded.
 */
export interface ContextYield {
  /**
   * The event's name.
   */
  event: "context_yield";
  to_sequence: Int;
  answer: string;
}

/**
 * The session began.
 */
export interface SessionStarted {
  /**
   * The event's name.
   */
  event: "session_started";
  session: string;
  session_root: string;
  /**
   * The workspace's root, if there is one. Always written: `null` when there is
   * none.
   */
  workspace_root: string | null;
}

/**
 * The session failed.
 */
export interface SessionError {
  /**
   * The event's name.
   */
  event: "session_error";
  error: string;
}

/**
 * A workspace was created.
 */
export interface WorkspaceCreated {
  /**
   * The event's name.
   */
  event: "workspace_created";
  dir: string;
}

/**
 * A command line the engine could not use, and why: the `command_error` of the
 * command schemas.
 */
export interface CommandError {
  /**
   * The event's name.
   */
  event: "command_error";
  /**
   * Why: one of the command schemas' `CommandError` messages, or `command
   * stream: ...` for a line that is not JSON.
   */
  error: string;
}

/**
 * The MCP configuration was ignored.
 */
export interface McpConfigIgnored {
  /**
   * The event's name.
   */
  event: "mcp_config_ignored";
  reason: string;
}

/**
 * The MCP configuration could not be read.
 */
export interface McpConfigUnreadable {
  /**
   * The event's name.
   */
  event: "mcp_config_unreadable";
  path: string;
  error: string;
}

/**
 * The MCP configuration is invalid.
 */
export interface McpConfigInvalid {
  /**
   * The event's name.
   */
  event: "mcp_config_invalid";
  path: string;
  error: string;
}

/**
 * MCP tools were registered.
 */
export interface McpToolsRegistered {
  /**
   * The event's name.
   */
  event: "mcp_tools_registered";
  servers: Int;
  tools: Int;
  names: string[];
}

/**
 * Two MCP servers offer a tool of one name.
 */
export interface McpToolDuplicate {
  /**
   * The event's name.
   */
  event: "mcp_tool_duplicate";
  server: string;
  tool: string;
}

/**
 * An MCP tool was renamed.
 */
export interface McpToolRenamed {
  /**
   * The event's name.
   */
  event: "mcp_tool_renamed";
  from: string;
  to: string;
}

/**
 * An MCP server's tools were capped at `kept`.
 */
export interface McpToolsCapped {
  /**
   * The event's name.
   */
  event: "mcp_tools_capped";
  server: string;
  kept: Int;
}

/**
 * An MCP server was skipped, over the cap.
 */
export interface McpServerSkippedOverCap {
  /**
   * The event's name.
   */
  event: "mcp_server_skipped_over_cap";
  server: string;
}

/**
 * An MCP server could not be reached.
 */
export interface McpConnectFailed {
  /**
   * The event's name.
   */
  event: "mcp_connect_failed";
  server: string;
  /**
   * The connect failure's text: the spawn or transport error, a handshake
   * error, or the handshake timeout. Engines before 2026-09-04 wrote `null`
   * when there was none. Always written. A reader takes the key absent or
   * holding anything but a string as `unknown error`.
   */
  error: string;
}

/**
 * Listing an MCP server's tools failed.
 */
export interface McpListToolsFailed {
  /**
   * The event's name.
   */
  event: "mcp_list_tools_failed";
  server: string;
  error: string;
}

/**
 * Listing an MCP server's tools timed out.
 */
export interface McpListToolsTimeout {
  /**
   * The event's name.
   */
  event: "mcp_list_tools_timeout";
  server: string;
}

/**
 * An MCP server offers no tools.
 */
export interface McpNoTools {
  /**
   * The event's name.
   */
  event: "mcp_no_tools";
  server: string;
}
